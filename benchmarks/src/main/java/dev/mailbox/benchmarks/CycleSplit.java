package dev.mailbox.benchmarks;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.testkit.redis.RedisServerProcess;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.Protocol;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;

/**
 * Whose time a cycle's extra time is (issue 20): one thread runs, in turn, blocks of the plain Jedis cycle
 * (LPUSH, RPOP, DEL), the mailbox's (send, receive, acknowledge), three {@code EVALSHA}s of a script that only
 * returns (seven keys, seven arguments), and the mailbox's two-round-trip cycle (send, acknowledgeAndReceive).
 * For each block it prints, per cycle, the wall-clock time, this thread's CPU time (the client: Jedis, the
 * mailbox's Java code and the socket system calls), redis-server's main-thread CPU time ({@code INFO cpu}: user,
 * and user + system), and the time redis-server spent in the commands themselves ({@code INFO commandstats}).
 * Where the mailbox's wall-clock excess over plain Jedis matches its server excess, the client is not what is
 * slow. Start it under {@code taskset} with {@code MAILBOX_REDIS_SERVER} pointing at a wrapper that pins
 * redis-server elsewhere to compare placements.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.mailbox.benchmarks.CycleSplit [--rounds 6] [--cycles 10000]
 * </pre>
 */
public final class CycleSplit {

    private static final String BODY = "hello, mailbox, a small body";
    private static final String[] NAMES = {"plain Jedis", "mailbox, 3 round trips", "3 x EVALSHA return 1",
        "mailbox, 2 round trips"};

    private CycleSplit() {
    }

    /**
     * @param args {@code --rounds N} (default 6), {@code --cycles N} per block (default 10,000)
     * @throws Exception if the probe fails
     */
    public static void main(String[] args) throws Exception {
        LibraryLog.toFile("cycle-split");
        Options options = new Options(args);
        int rounds = options.integer("--rounds", 6);
        int cycles = options.integer("--cycles", 10_000);
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        try (RedisServerProcess server = RedisServerProcess.start();
             JedisPooled jedis = new JedisPooled(server.host(), server.port());
             RedisMailbox<String> m = RedisMailbox.builder("cycle-split", Codec.utf8()).client(jedis).build()) {
            String nothing = jedis.scriptLoad("return 1");
            List<String> keys = List.of("k1", "k2", "k3", "k4", "k5", "k6", "k7");
            List<String> argv = List.of("1", "2", "3", "4", "5", "6", "7");
            ReceiveOptions one = ReceiveOptions.defaults();
            List<Message<String>> held = List.of();
            System.out.printf(Locale.ROOT, "us per cycle, %d cycles a block: wall / client thread CPU / redis-server"
                    + " main-thread CPU (user) / in commands%n", cycles);
            for (int r = 0; r < rounds; r++) {
                StringBuilder line = new StringBuilder();
                for (int k = 0; k < NAMES.length; k++) {
                    double[] server0 = server(jedis);
                    long client0 = threads.getCurrentThreadCpuTime();
                    long wall0 = System.nanoTime();
                    for (int i = 0; i < cycles; i++) {
                        switch (k) {
                            case 0 -> {
                                jedis.lpush("bench:plain", BODY);
                                jedis.rpop("bench:plain");
                                jedis.del("bench:plain:gone");
                            }
                            case 1 -> {
                                m.send(BODY);
                                m.receive(one).get(0).acknowledge();
                            }
                            case 2 -> {
                                for (int s = 0; s < 3; s++) {
                                    jedis.evalsha(nothing, keys, argv);
                                }
                            }
                            default -> {
                                m.send(BODY);
                                held = m.acknowledgeAndReceive(held, one, stale -> {
                                    throw new IllegalStateException("stale handle in the cycle: " + stale.id());
                                });
                            }
                        }
                    }
                    double wall = (System.nanoTime() - wall0) / 1e3 / cycles;
                    double client = (threads.getCurrentThreadCpuTime() - client0) / 1e3 / cycles;
                    double[] server1 = server(jedis);
                    line.append(String.format(Locale.ROOT, "%s %.1f / %.1f / %.1f (%.1f) / %.1f   ", NAMES[k], wall,
                            client, (server1[0] - server0[0]) / cycles, (server1[1] - server0[1]) / cycles,
                            (server1[2] - server0[2]) / cycles));
                }
                System.out.println(line.toString().trim());
            }
            if (!held.isEmpty()) {
                m.acknowledgeBatch(held);
            }
        }
    }

    /** @return redis-server's {main-thread CPU, its user part, time in commands}, in microseconds so far */
    private static double[] server(JedisPooled jedis) {
        double user = 0;
        double total = 0;
        for (String line : info(jedis, "cpu")) {
            if (line.startsWith("used_cpu_user_main_thread:")) {
                user = seconds(line) * 1e6;
                total += user;
            } else if (line.startsWith("used_cpu_sys_main_thread:")) {
                total += seconds(line) * 1e6;
            }
        }
        double commands = 0;
        for (String line : info(jedis, "commandstats")) {
            // the plain cycle's commands and the scripts (whose own calls are inside their time already)
            if (line.startsWith("cmdstat_evalsha:") || line.startsWith("cmdstat_lpush:")
                    || line.startsWith("cmdstat_rpop:") || line.startsWith("cmdstat_del:")) {
                int at = line.indexOf("usec=");
                int end = line.indexOf(',', at);
                commands += Double.parseDouble(line.substring(at + 5, end));
            }
        }
        return new double[] {total, user, commands};
    }

    private static String[] info(JedisPooled jedis, String section) {
        return new String((byte[]) jedis.sendCommand(Protocol.Command.INFO, section), StandardCharsets.UTF_8)
                .split("\\r?\\n");
    }

    private static double seconds(String line) {
        return Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
    }
}
