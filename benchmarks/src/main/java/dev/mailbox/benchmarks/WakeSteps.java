package dev.mailbox.benchmarks;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.testkit.redis.RedisServerProcess;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.JedisPubSub;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * What the wake-up hand-off costs in send-to-received latency (issue 20's latency moonshot). A long-polling
 * receive sleeps on the mailbox's wake hub; the notice a send publishes arrives on the hub's subscriber
 * thread, which wakes the receiver, which then runs its receive script. This probe times that path ("hub")
 * against one with the hand-off taken out ("direct"): a consumer thread that is itself the subscriber and,
 * on the notice, receives at once with no wait. Both receive with {@code acknowledgeAndReceive}, carrying
 * the previous message's acknowledgement, as PeerHarness's latency row does; each sample is one send after
 * a 2 ms pause, and the two paths alternate in blocks so that both see the same machine.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.mailbox.benchmarks.WakeSteps [--blocks 10] [--samples 200]
 * </pre>
 */
public final class WakeSteps {

    private static final ReceiveOptions WAIT = ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(20));
    private static final ReceiveOptions NOW = ReceiveOptions.defaults();

    private WakeSteps() {
    }

    /**
     * @param args {@code --blocks N} (default 10) per path, {@code --samples N} per block (default 200)
     * @throws Exception if the probe fails
     */
    public static void main(String[] args) throws Exception {
        LibraryLog.toFile("wake-steps");
        Options options = new Options(args);
        int blocks = options.integer("--blocks", 10);
        int samples = options.integer("--samples", 200);
        try (RedisServerProcess server = RedisServerProcess.start();
             JedisPooled jedis = new JedisPooled(server.host(), server.port());
             RedisMailbox<String> hubbed = RedisMailbox.builder("wake-hub", Codec.utf8()).client(jedis).build();
             RedisMailbox<String> direct = RedisMailbox.builder("wake-direct", Codec.utf8()).client(jedis).build()) {
            List<Long> hub = new ArrayList<>();
            List<Long> own = new ArrayList<>();
            run(hubbed, samples, null); // warm-up of both paths
            run(direct, samples, server);
            for (int b = 0; b < blocks; b++) {
                if (b % 2 == 0) {
                    hub.addAll(run(hubbed, samples, null));
                    own.addAll(run(direct, samples, server));
                } else {
                    own.addAll(run(direct, samples, server));
                    hub.addAll(run(hubbed, samples, null));
                }
            }
            System.out.printf(Locale.ROOT, "send -> received, us, %d samples each: p50 / p90 / p99%n", hub.size());
            System.out.println("hub (subscriber thread wakes the receiver): " + percentiles(hub));
            System.out.println("direct (the receiver is the subscriber):    " + percentiles(own));
        }
    }

    /**
     * One block: a consumer thread receives {@code samples} messages, one per send.
     *
     * @param server null: the consumer long-polls; otherwise it subscribes to the mailbox's channel on a
     *               connection of its own to that server and receives on each notice
     */
    private static List<Long> run(RedisMailbox<String> m, int samples, RedisServerProcess server) throws Exception {
        LinkedBlockingQueue<Long> results = new LinkedBlockingQueue<>();
        Thread consumer;
        JedisPubSub subscription = null;
        if (server == null) {
            consumer = new Thread(() -> {
                List<Message<String>> held = List.of();
                for (int i = 0; i < samples; i++) {
                    List<Message<String>> got = m.acknowledgeAndReceive(held, WAIT, s -> { });
                    results.add(System.nanoTime() - Long.parseLong(got.get(0).body()));
                    held = got;
                }
                m.acknowledgeBatch(held);
            }, "wake-steps-hub");
        } else {
            JedisPubSub s = new JedisPubSub() {
                private List<Message<String>> held = List.of();

                @Override
                public void onMessage(String channel, String message) {
                    if (!message.startsWith("r")) {
                        return;
                    }
                    List<Message<String>> got = m.acknowledgeAndReceive(held, NOW, x -> { });
                    if (!got.isEmpty()) {
                        results.add(System.nanoTime() - Long.parseLong(got.get(0).body()));
                        held = got;
                    }
                }

                @Override
                public void onUnsubscribe(String channel, int subscribedChannels) {
                    m.acknowledgeBatch(held);
                }
            };
            subscription = s;
            String channel = "mailbox:{" + m.name() + "}:wake";
            consumer = new Thread(() -> {
                try (Jedis own = new Jedis(server.host(), server.port())) {
                    own.subscribe(s, channel);
                }
            }, "wake-steps-direct");
        }
        consumer.start();
        if (subscription != null) {
            while (!subscription.isSubscribed()) {
                Thread.sleep(1);
            }
        }
        long[] out = new long[samples];
        for (int i = 0; i < samples; i++) {
            Thread.sleep(2);
            m.send(Long.toString(System.nanoTime()));
            Long nanos = results.poll(10, TimeUnit.SECONDS);
            if (nanos == null) {
                throw new IllegalStateException("no message received within 10 s");
            }
            out[i] = nanos;
        }
        if (subscription != null) {
            subscription.unsubscribe();
        }
        consumer.join();
        List<Long> list = new ArrayList<>(samples);
        for (long n : out) {
            list.add(n);
        }
        return list;
    }

    private static String percentiles(List<Long> nanos) {
        long[] sorted = nanos.stream().mapToLong(Long::longValue).toArray();
        Arrays.sort(sorted);
        return String.format(Locale.ROOT, "%.0f / %.0f / %.0f", sorted[sorted.length / 2] / 1e3,
                sorted[(int) (sorted.length * 0.9)] / 1e3, sorted[(int) (sorted.length * 0.99)] / 1e3);
    }
}
