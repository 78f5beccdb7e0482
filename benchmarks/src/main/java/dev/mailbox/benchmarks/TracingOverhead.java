package dev.mailbox.benchmarks;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.opentelemetry.MailboxTracing;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.testkit.redis.RedisServerProcess;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import redis.clients.jedis.JedisPooled;

/**
 * What tracing costs on the Redis cycle (issue 38): one thread runs the send → receive → acknowledge cycle on a
 * plain {@code RedisMailbox} and on the same mailbox wrapped by {@link MailboxTracing}, in alternating rounds on one
 * redis-server, and prints each round's mean and the traced/plain ratio (the median over rounds is the figure).
 * Tracing is the SDK configured by hand as in production (every span sampled, a {@link BatchSpanProcessor}) with
 * an exporter that drops what it is given: three spans per cycle (send, receive, ack) are made, filled in,
 * context injected into and extracted from the message's attributes, and batched, but not sent anywhere.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.mailbox.benchmarks.TracingOverhead [--rounds 10] [--cycles 20000]
 *     [--backend redis|memory]
 * </pre>
 *
 * {@code --backend memory} runs the same on an in-memory mailbox: no I/O, so the difference is the CPU tracing
 * costs per cycle, free of the network's noise.
 */
public final class TracingOverhead {

    private static final String BODY = "hello, mailbox, a small body";

    private TracingOverhead() {
    }

    /**
     * @param args {@code --rounds N} pairs of rounds (default 10), {@code --cycles N} per round (default 20,000),
     *             {@code --backend redis} (default) or {@code memory}
     * @throws Exception if the run fails
     */
    public static void main(String[] args) throws Exception {
        LibraryLog.toFile("tracing-overhead");
        Options options = new Options(args);
        int rounds = options.integer("--rounds", 10);
        int cycles = options.integer("--cycles", 20_000);
        AtomicLong exported = new AtomicLong();
        SpanExporter dropping = new SpanExporter() {
            @Override
            public CompletableResultCode export(Collection<SpanData> spans) {
                exported.addAndGet(spans.size());
                return CompletableResultCode.ofSuccess();
            }

            @Override
            public CompletableResultCode flush() {
                return CompletableResultCode.ofSuccess();
            }

            @Override
            public CompletableResultCode shutdown() {
                return CompletableResultCode.ofSuccess();
            }
        };
        boolean memory = options.string("--backend", "redis").equals("memory");
        try (RedisServerProcess server = memory ? null : RedisServerProcess.start();
             JedisPooled jedis = memory ? null : new JedisPooled(server.host(), server.port());
             OpenTelemetrySdk sdk = OpenTelemetrySdk.builder().setTracerProvider(SdkTracerProvider.builder()
                     .addSpanProcessor(BatchSpanProcessor.builder(dropping).build()).build()).build();
             Mailbox<String> plain = memory ? InMemoryMailbox.builder("tracing-overhead", Codec.utf8()).build()
                     : RedisMailbox.builder("tracing-overhead", Codec.utf8()).client(jedis).build()) {
            Mailbox<String> traced = MailboxTracing.create(sdk).wrap(plain);
            // where the cost is: the attributes alone (a fixed traceparent, no spans), and the wrapper with
            // OpenTelemetry's no-op API (no SDK: nothing recorded, nothing injected)
            Mailbox<String> attributesOnly = new AttributesOnly(plain);
            Mailbox<String> noopApi = MailboxTracing.create(io.opentelemetry.api.OpenTelemetry.noop()).wrap(plain);
            ReceiveOptions one = ReceiveOptions.defaults();
            List<Mailbox<String>> variants = List.of(plain, traced, attributesOnly, noopApi);
            for (Mailbox<String> m : variants) {
                cycle(m, one, cycles); // warm up every path before measuring
            }
            List<Double> ratios = new ArrayList<>();
            System.out.printf(Locale.ROOT, "mean us per cycle (send, receive, acknowledge), %d cycles a round%n", cycles);
            System.out.println("round  plain  traced  traced/plain  (attributes only, no-op API)");
            for (int r = 0; r < rounds; r++) {
                // alternate which goes first, so a drift of the machine's speed does not favour one
                double p;
                double t;
                if (r % 2 == 0) {
                    p = cycle(plain, one, cycles);
                    t = cycle(traced, one, cycles);
                } else {
                    t = cycle(traced, one, cycles);
                    p = cycle(plain, one, cycles);
                }
                double a = cycle(attributesOnly, one, cycles);
                double n = cycle(noopApi, one, cycles);
                ratios.add(t / p);
                System.out.printf(Locale.ROOT, "%5d  %5.1f  %6.1f  %.3f         (%.1f, %.1f)%n", r + 1, p, t, t / p, a, n);
            }
            ratios.sort(null);
            double median = ratios.size() % 2 == 1 ? ratios.get(ratios.size() / 2)
                    : (ratios.get(ratios.size() / 2 - 1) + ratios.get(ratios.size() / 2)) / 2;
            sdk.getSdkTracerProvider().forceFlush().join(10, java.util.concurrent.TimeUnit.SECONDS);
            System.out.printf(Locale.ROOT, "median traced/plain: %.3f (overhead %+.1f %%); spans exported: %d%n",
                    median, (median - 1) * 100, exported.get());
        }
    }

    /** The plain mailbox, each message with a fixed traceparent as tracing would add: the attributes' own cost. */
    private static final class AttributesOnly extends dev.mailbox.testkit.ForwardingMailbox<String> {
        private static final dev.mailbox.api.SendOptions TRACEPARENT = dev.mailbox.api.SendOptions.defaults()
                .withAttribute("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");

        AttributesOnly(Mailbox<String> delegate) {
            super(delegate);
        }

        @Override
        public String send(String body, dev.mailbox.api.SendOptions options) {
            return super.send(body, TRACEPARENT);
        }

        @Override
        public Mailbox<String> fenced(long epoch) {
            throw new UnsupportedOperationException();
        }
    }

    /** @return the mean microseconds of one cycle */
    private static double cycle(Mailbox<String> m, ReceiveOptions one, int cycles) {
        long start = System.nanoTime();
        for (int i = 0; i < cycles; i++) {
            m.send(BODY);
            Message<String> got = m.receive(one).get(0);
            got.acknowledge();
        }
        return (System.nanoTime() - start) / 1_000.0 / cycles;
    }
}
