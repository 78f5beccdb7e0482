package dev.mailbox.benchmarks;

import dev.mailbox.api.Codec;
import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.testkit.redis.RedisServerProcess;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.Protocol;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * What each RedisMailbox script costs redis-server, from redis-server's own accounting
 * ({@code INFO commandstats}, reset before each phase): per call of send, receive, acknowledge and
 * acknowledgeAndReceive (on a standard mailbox, a FIFO one, and a standard one whose messages have tenants), the time the whole script took ({@code EVALSHA}'s usec_per_call) and the
 * commands it ran inside, next to plain RPUSH / LPOP / DEL. The difference between a script's time and
 * its commands' is Lua: calling the script, building KEYS and ARGV, the prelude, the string work and
 * each {@code redis.call}'s own cost beyond the command.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.mailbox.benchmarks.ScriptCosts [--n 20000] [--repetitions 3] [--standard-only]
 * </pre>
 *
 * {@code --standard-only} leaves out the FIFO and tenant phases, so that the same run can be made with an
 * earlier mailbox-redis jar ahead on the class path, for an A/B of the standard scripts.
 *
 * It starts its own redis-server (PATH, else the bundled one; {@code MAILBOX_REDIS_SERVER} chooses).
 * One thread; each phase runs {@code n} calls; the figures are the medians over the repetitions. The
 * time is server time only, so the round trip (and where the scheduler puts the two processes) does not
 * enter it, though a busy machine inflates every figure alike.
 */
public final class ScriptCosts {

    private static final String BODY = "hello, mailbox";

    private ScriptCosts() {
    }

    /**
     * @param args {@code --n N}, {@code --repetitions R}
     * @throws Exception if a phase fails
     */
    public static void main(String[] args) throws Exception {
        LibraryLog.toFile("scripts");
        Options options = new Options(args);
        int n = options.integer("--n", 20_000);
        int repetitions = options.integer("--repetitions", 3);
        boolean standardOnly = java.util.Arrays.asList(args).contains("--standard-only");
        try (RedisServerProcess server = RedisServerProcess.start();
             JedisPooled jedis = new JedisPooled(server.host(), server.port());
             RedisMailbox<String> m = RedisMailbox.builder("costs", Codec.utf8()).client(jedis).build();
             // built only when used: an earlier mailbox-redis jar ahead on the class path has no fifo(...)
             RedisMailbox<String> fifo = standardOnly ? null : RedisMailbox.builder("costs-fifo", Codec.utf8())
                     .client(jedis).fifo(FifoOptions.defaults()).build();
             RedisMailbox<String> fair = RedisMailbox.builder("costs-fair", Codec.utf8()).client(jedis).build()) {
            String info = new String((byte[]) jedis.sendCommand(Protocol.Command.INFO, "server"), StandardCharsets.UTF_8);
            String version = info.lines().filter(l -> l.startsWith("redis_version:")).findFirst()
                    .orElse("redis_version:?").substring("redis_version:".length());
            System.out.printf(Locale.ROOT, "Script costs on redis-server %s, JDK %s: %,d calls a phase, median of %d"
                    + " repetitions, server microseconds per call%n%n", version, System.getProperty("java.version"), n,
                    repetitions);
            ReceiveOptions one = ReceiveOptions.defaults();
            Map<String, Phase> phases = new LinkedHashMap<>();
            List<List<Message<String>>> held = new ArrayList<>();
            phases.put("send", new Phase(() -> {
                for (int i = 0; i < n; i++) {
                    m.send(BODY);
                }
            }));
            phases.put("receive", new Phase(() -> {
                held.clear();
                for (int i = 0; i < n; i++) {
                    held.add(m.receive(one));
                }
            }));
            phases.put("acknowledge", new Phase(() -> {
                for (List<Message<String>> got : held) {
                    got.get(0).acknowledge();
                }
            }));
            // the queue is empty again: send + acknowledgeAndReceive, a consumer's steady state
            Phase cycle = new Phase(() -> {
                List<Message<String>> last = List.of();
                for (int i = 0; i < n; i++) {
                    m.send(BODY);
                    last = m.acknowledgeAndReceive(last, one, s -> {
                        throw new IllegalStateException("stale handle " + s.id());
                    });
                }
                m.acknowledgeBatch(last);
            });
            phases.put("send + acknowledgeAndReceive (per cycle)", cycle);
            if (!standardOnly) {
                groupPhases(phases, fifo, fair, n, one);
            }
            phases.put("plain RPUSH + LPOP + DEL (per cycle)", new Phase(() -> {
                for (int i = 0; i < n; i++) {
                    jedis.rpush("plain", BODY);
                    jedis.lpop("plain");
                    jedis.del("plain:gone");
                }
            }));
            for (Phase p : phases.values()) { // warm-up: JIT, and Redis's script cache
                p.body.run();
            }
            m.purge();
            for (int r = 0; r < repetitions; r++) {
                for (Phase p : phases.values()) {
                    jedis.sendCommand(Protocol.Command.CONFIG, "RESETSTAT");
                    p.body.run();
                    p.record(commandStats(jedis), n);
                }
            }
            for (Map.Entry<String, Phase> e : phases.entrySet()) {
                e.getValue().print(e.getKey());
            }
        }
    }

    /**
     * FIFO, each message alone in its group (the widest case: every send queues a group, every acknowledgement
     * releases one), then one group in steady state; and a standard mailbox whose messages all have tenants,
     * none noisy.
     */
    private static void groupPhases(Map<String, Phase> phases, RedisMailbox<String> fifo, RedisMailbox<String> fair,
                                    int n, ReceiveOptions one) {
        SendOptions[] groups = new SendOptions[n];
        for (int g = 0; g < groups.length; g++) {
            groups[g] = SendOptions.defaults().withGroupId("g" + g);
        }
        List<List<Message<String>>> held = new ArrayList<>();
        phases.put("FIFO send, a group per message", new Phase(() -> {
            for (int i = 0; i < n; i++) {
                fifo.send(BODY, groups[i]);
            }
        }));
        phases.put("FIFO receive", new Phase(() -> {
            held.clear();
            for (int i = 0; i < n; i++) {
                held.add(fifo.receive(one));
            }
        }));
        phases.put("FIFO acknowledge", new Phase(() -> {
            for (List<Message<String>> got : held) {
                got.get(0).acknowledge();
            }
        }));
        phases.put("FIFO send + acknowledgeAndReceive, 1 group (per cycle)", new Phase(() -> {
            List<Message<String>> last = List.of();
            for (int i = 0; i < n; i++) {
                fifo.send(BODY, groups[0]);
                last = fifo.acknowledgeAndReceive(last, one, s -> {
                    throw new IllegalStateException("stale handle " + s.id());
                });
            }
            fifo.acknowledgeBatch(last);
        }));
        phases.put("tenants: send + acknowledgeAndReceive, 10 tenants (per cycle)", new Phase(() -> {
            List<Message<String>> last = List.of();
            for (int i = 0; i < n; i++) {
                fair.send(BODY, groups[i % 10]);
                last = fair.acknowledgeAndReceive(last, one, s -> {
                    throw new IllegalStateException("stale handle " + s.id());
                });
            }
            fair.acknowledgeBatch(last);
        }));
    }

    /** One measured phase and what each repetition of it cost, per call. */
    private static final class Phase {
        private final Runnable body;
        private final Map<String, List<double[]>> perCommand = new TreeMap<>(); // name -> {calls, usec} per call

        Phase(Runnable body) {
            this.body = body;
        }

        void record(Map<String, double[]> stats, int n) {
            for (Map.Entry<String, double[]> e : stats.entrySet()) {
                perCommand.computeIfAbsent(e.getKey(), k -> new ArrayList<>())
                        .add(new double[] {e.getValue()[0] / n, e.getValue()[1] / n});
            }
        }

        void print(String label) {
            double scripts = median(perCommand.get("evalsha"), 1);
            double inner = 0;
            StringBuilder commands = new StringBuilder();
            for (Map.Entry<String, List<double[]>> e : perCommand.entrySet()) {
                if (e.getKey().equals("evalsha") || e.getKey().equals("eval") || e.getKey().startsWith("config")) {
                    continue;
                }
                double calls = median(e.getValue(), 0);
                double usec = median(e.getValue(), 1);
                inner += usec;
                commands.append(String.format(Locale.ROOT, " %s %.1f×/%.2f", e.getKey(), calls, usec));
            }
            if (Double.isNaN(scripts)) {
                System.out.printf(Locale.ROOT, "%-42s commands %.2f us:%s%n", label, inner, commands);
            } else {
                System.out.printf(Locale.ROOT, "%-42s script(s) %.2f us = commands %.2f + Lua %.2f;%s%n", label,
                        scripts, inner, scripts - inner, commands);
            }
        }

        private static double median(List<double[]> values, int index) {
            if (values == null) {
                return Double.NaN;
            }
            double[] v = values.stream().mapToDouble(x -> x[index]).sorted().toArray();
            return v[v.length / 2];
        }
    }

    /** @return command name -> {calls, usec} since the last reset */
    private static Map<String, double[]> commandStats(JedisPooled jedis) {
        String stats = new String((byte[]) jedis.sendCommand(Protocol.Command.INFO, "commandstats"),
                StandardCharsets.UTF_8);
        Map<String, double[]> out = new TreeMap<>();
        for (String line : stats.split("\\r?\\n")) {
            if (!line.startsWith("cmdstat_")) {
                continue;
            }
            String name = line.substring("cmdstat_".length(), line.indexOf(':'));
            out.put(name, new double[] {field(line, "calls="), field(line, "usec=")});
        }
        return out;
    }

    private static double field(String line, String name) {
        int at = line.indexOf(name, line.indexOf(':'));
        int end = line.indexOf(',', at);
        return Double.parseDouble(line.substring(at + name.length(), end < 0 ? line.length() : end));
    }
}
