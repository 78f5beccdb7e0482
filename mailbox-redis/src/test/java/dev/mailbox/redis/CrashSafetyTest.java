package dev.mailbox.redis;

import dev.mailbox.api.Codec;
import dev.mailbox.testkit.redis.RedisServerProcess;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Processes die; messages do not. Real processes, real SIGKILLs, exact sets compared. */
@ExtendWith(SharedRedis.class)
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class CrashSafetyTest {

    private static final int PRODUCERS = 2;
    private static final int PER_PRODUCER = 300;
    private static final int KILLS = 8;

    @Test
    @DisplayName("consumers SIGKILLed between receive and ack and mid-batch lose nothing; each message is acked once")
    void consumersKilled() throws Exception {
        SharedRedis.Standalone redis = SharedRedis.standalone();
        String name = "crash-" + System.nanoTime();
        Random random = new Random(20261121);
        Set<String> sent = ConcurrentHashMap.newKeySet();
        List<Thread> producers = new ArrayList<>();
        try (RedisMailbox<String> mailbox = RedisMailbox.builder(name, Codec.utf8()).client(redis.client).build()) {
            for (int p = 0; p < PRODUCERS; p++) {
                int producer = p;
                Thread t = new Thread(() -> {
                    for (int i = 0; i < PER_PRODUCER; i++) {
                        String body = "p" + producer + "-" + i;
                        if (i % 10 == 0 && i + 5 <= PER_PRODUCER) {
                            List<String> batch = List.of(body, "p" + producer + "-" + (i + 1), "p" + producer + "-" + (i + 2),
                                    "p" + producer + "-" + (i + 3), "p" + producer + "-" + (i + 4));
                            mailbox.sendBatch(batch);
                            sent.addAll(batch);
                            i += 4;
                        } else {
                            mailbox.send(body);
                            sent.add(body);
                        }
                        if (i % 20 == 0) {
                            sleep(15); // keep producing across the kills
                        }
                    }
                });
                producers.add(t);
                t.start();
            }

            Map<String, Integer> acked = new HashMap<>();
            int heldByTheDead = 0;
            for (int kill = 0; kill < KILLS; kill++) {
                int batch = 1 + random.nextInt(10);
                int pausesBeforeKill = 2 + random.nextInt(12);
                Child child = Child.start(redis.server, name, 1000, batch);
                heldByTheDead += child.run(acked, pausesBeforeKill, null);
            }
            for (Thread t : producers) {
                t.join();
            }

            // a survivor drains the rest; killed consumers' messages come back after 1 s
            Child survivor = Child.start(redis.server, name, 1000, 10);
            survivor.run(acked, Integer.MAX_VALUE, () -> mailbox.approximateCount() == 0);

            assertThat(heldByTheDead).as("messages in flight in killed consumers").isPositive();
            assertThat(sent).hasSize(PRODUCERS * PER_PRODUCER);
            assertThat(acked.keySet()).as("every message sent was acknowledged").isEqualTo(sent);
            assertThat(acked.values()).as("no message was acknowledged twice").containsOnly(1);
            assertThat(mailbox.approximateCount()).isZero();
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A CrashConsumer in its own JVM. */
    private static final class Child {
        private final Process process;
        private final BufferedReader out;
        private final PrintWriter in;

        private Child(Process process) {
            this.process = process;
            this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            this.in = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
        }

        static Child start(RedisServerProcess server, String mailbox, long visibilityMs, int batch) throws Exception {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            Process p = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                    CrashConsumer.class.getName(), server.host(), String.valueOf(server.port()), mailbox,
                    String.valueOf(visibilityMs), String.valueOf(batch))
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
            return new Child(p);
        }

        /**
         * Reads the child's report, answering GO at each pause, until the given pause, where the
         * child is killed; or, with a done-check, until the mailbox is empty, where it is told to exit.
         *
         * @return how many received messages the child held unacknowledged when it died
         */
        int run(Map<String, Integer> acked, int killAtPause, java.util.function.BooleanSupplier done) throws Exception {
            int pauses = 0;
            int held = 0; // received in the current batch and not yet acknowledged
            String line;
            while ((line = out.readLine()) != null) {
                if (line.startsWith("ACKED ")) {
                    acked.merge(line.substring(6), 1, Integer::sum);
                    held--;
                } else if (line.startsWith("STALE ")) {
                    held--;
                } else if (line.startsWith("RECEIVED ")) {
                    held = Integer.parseInt(line.substring(9));
                } else if (line.equals("PAUSE")) {
                    pauses++;
                    if (pauses >= killAtPause) {
                        process.destroyForcibly(); // SIGKILL
                        process.waitFor(30, TimeUnit.SECONDS);
                        return held;
                    }
                    if (done != null && held == 0 && done.getAsBoolean()) {
                        in.println("EXIT");
                        process.waitFor(30, TimeUnit.SECONDS);
                        return 0;
                    }
                    in.println("GO");
                }
            }
            throw new AssertionError("consumer exited unexpectedly with " + process.waitFor());
        }
    }
}
