package dev.mailbox.benchmarks;

import dev.mailbox.api.Codec;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.testkit.redis.RedisServerProcess;
import redis.clients.jedis.JedisPooled;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Where the send rate's swing comes from (issue 20): one thread sends in blocks of 1,000, alternating
 * {@code RedisMailbox.send} with a plain Jedis {@code RPUSH} (one round trip each, same client), and
 * prints each pair of blocks with the CPU the client thread and the redis-server last ran on.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.mailbox.benchmarks.SendSwing [--pin same|apart] [--seconds N]
 * </pre>
 *
 * {@code --pin same} puts this JVM and the redis-server on CPU 0 ({@code taskset}); {@code --pin apart}
 * puts the server on CPU 0 and the JVM on CPU 1. If the mailbox's rate and the plain round trip's move
 * together while their ratio holds, the swing is the machine's round-trip time, not the mailbox.
 */
public final class SendSwing {

    private static final String BODY = "hello, mailbox";
    private static final int BLOCK = 1_000;

    private SendSwing() {
    }

    /**
     * @param args {@code --pin same|apart}, {@code --seconds N} (default 20)
     * @throws Exception if the probe fails
     */
    public static void main(String[] args) throws Exception {
        LibraryLog.toFile("swing");
        // a named thread, so /proc shows which CPU it runs on (the JVM's main thread is not named)
        Throwable[] failure = new Throwable[1];
        Thread sender = new Thread(() -> {
            try {
                probe(args);
            } catch (Throwable e) {
                failure[0] = e;
            }
        }, "swing-sender");
        sender.start();
        sender.join();
        if (failure[0] != null) {
            throw new IllegalStateException("the probe failed", failure[0]);
        }
    }

    private static void probe(String[] args) throws Exception {
        Options options = new Options(args);
        String pin = options.string("--pin", "none");
        long seconds = options.integer("--seconds", 20);
        try (RedisServerProcess server = RedisServerProcess.start();
             JedisPooled jedis = new JedisPooled(server.host(), server.port());
             RedisMailbox<String> m = RedisMailbox.builder("swing", Codec.utf8()).client(jedis).build()) {
            long self = ProcessHandle.current().pid();
            if (pin.equals("same") || pin.equals("apart")) {
                taskset(server.pid(), "0");
                taskset(self, pin.equals("same") ? "0" : "1");
            }
            System.out.printf(Locale.ROOT, "send swing probe: pin %s, blocks of %,d, %d s%n", pin, BLOCK, seconds);
            System.out.println("     t s   mailbox send/s   plain RPUSH/s   ratio   cpu client/server");
            long start = System.nanoTime();
            long end = start + seconds * 1_000_000_000L;
            while (System.nanoTime() < end) {
                long t0 = System.nanoTime();
                for (int i = 0; i < BLOCK; i++) {
                    m.send(BODY);
                }
                long t1 = System.nanoTime();
                for (int i = 0; i < BLOCK; i++) {
                    jedis.rpush("swing:plain", BODY);
                }
                long t2 = System.nanoTime();
                double mailbox = BLOCK / ((t1 - t0) / 1e9);
                double plain = BLOCK / ((t2 - t1) / 1e9);
                System.out.printf(Locale.ROOT, "  %6.1f   %,14.0f   %,13.0f   %5.2f   %s/%s%n", (t2 - start) / 1e9, mailbox,
                        plain, mailbox / plain, cpu(self, Thread.currentThread().getName()), cpu(server.pid(), null));
                if (m.approximateCount() > 200_000) {
                    m.purge();
                    jedis.del("swing:plain");
                }
            }
            m.purge();
        }
    }

    private static void taskset(long pid, String cpus) throws IOException, InterruptedException {
        Process t = new ProcessBuilder("taskset", "-a", "-p", "-c", cpus, Long.toString(pid)).redirectErrorStream(true)
                .start();
        t.getInputStream().readAllBytes();
        if (t.waitFor() != 0) {
            throw new IllegalStateException("taskset failed for pid " + pid);
        }
    }

    /** The CPU a process's thread (named, or its main thread) last ran on, from /proc; "?" if unknown. */
    private static String cpu(long pid, String threadName) {
        try {
            Path task = Path.of("/proc", Long.toString(pid), "task");
            Path chosen = task.resolve(Long.toString(pid));
            if (threadName != null) {
                try (var dirs = Files.list(task)) {
                    for (Path d : (Iterable<Path>) dirs::iterator) {
                        if (Files.readString(d.resolve("comm")).trim().equals(threadName)) {
                            chosen = d;
                            break;
                        }
                    }
                }
            }
            String stat = Files.readString(chosen.resolve("stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return f[36]; // field 39 of stat, counted from field 3
        } catch (IOException | RuntimeException e) {
            return "?";
        }
    }
}
