package dev.mailbox.benchmarks;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.testkit.redis.RedisServerProcess;
import redis.clients.jedis.JedisPooled;

import java.util.List;
import java.util.Locale;

/**
 * Where the cycle's extra time goes, step by step (issue 20): one thread runs, in turn, the plain Jedis
 * cycle (LPUSH, RPOP, DEL), the mailbox's (send, receive, acknowledge) and three {@code EVALSHA}s of a
 * script that only returns, called with seven keys and seven arguments as the mailbox's scripts are, and
 * prints each step's mean wall-clock time per round. The trivial script shows what a script call costs
 * before it does anything; the rest of each mailbox step is its script's work and what that work costs
 * in waiting.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.mailbox.benchmarks.CycleSteps [--rounds 6] [--cycles 5000]
 * </pre>
 */
public final class CycleSteps {

    private static final String BODY = "hello, mailbox, a small body";

    private CycleSteps() {
    }

    /**
     * @param args {@code --rounds N} (default 6), {@code --cycles N} per round (default 5,000)
     * @throws Exception if the probe fails
     */
    public static void main(String[] args) throws Exception {
        LibraryLog.toFile("cycle-steps");
        Options options = new Options(args);
        int rounds = options.integer("--rounds", 6);
        int cycles = options.integer("--cycles", 5_000);
        try (RedisServerProcess server = RedisServerProcess.start();
             JedisPooled jedis = new JedisPooled(server.host(), server.port());
             RedisMailbox<String> m = RedisMailbox.builder("cycle-steps", Codec.utf8()).client(jedis).build()) {
            String nothing = jedis.scriptLoad("return 1");
            List<String> keys = List.of("k1", "k2", "k3", "k4", "k5", "k6", "k7");
            List<String> argv = List.of("1", "2", "3", "4", "5", "6", "7");
            ReceiveOptions one = ReceiveOptions.defaults();
            String[] names = {"LPUSH", "RPOP", "DEL", "send", "receive", "acknowledge", "EVALSHA", "EVALSHA", "EVALSHA"};
            System.out.printf(Locale.ROOT, "mean us per step, %d cycles a round%n", cycles);
            System.out.println(String.join("  ", names));
            for (int r = 0; r < rounds; r++) {
                long[] sum = new long[names.length];
                long[] t = new long[names.length + 1];
                for (int i = 0; i < cycles; i++) {
                    t[0] = System.nanoTime();
                    jedis.lpush("bench:plain", BODY);
                    t[1] = System.nanoTime();
                    jedis.rpop("bench:plain");
                    t[2] = System.nanoTime();
                    jedis.del("bench:plain:gone");
                    t[3] = System.nanoTime();
                    m.send(BODY);
                    t[4] = System.nanoTime();
                    Message<String> got = m.receive(one).get(0);
                    t[5] = System.nanoTime();
                    got.acknowledge();
                    t[6] = System.nanoTime();
                    for (int k = 0; k < 3; k++) {
                        jedis.evalsha(nothing, keys, argv);
                        t[7 + k] = System.nanoTime();
                    }
                    for (int k = 0; k < names.length; k++) {
                        sum[k] += t[k + 1] - t[k];
                    }
                }
                StringBuilder line = new StringBuilder();
                for (int k = 0; k < names.length; k++) {
                    line.append(String.format(Locale.ROOT, "%-" + (names[k].length() + 2) + ".1f", sum[k] / 1e3 / cycles));
                }
                System.out.println(line.toString().trim());
            }
        }
    }
}
