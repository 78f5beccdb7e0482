package dev.mailbox.opentelemetry;

import static dev.mailbox.opentelemetry.Traces.oneTree;
import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.mainloop.MainLoop;
import dev.mailbox.mainloop.MainLoopClient;
import dev.mailbox.mainloop.MainLoopCodecs;
import dev.mailbox.mainloop.MainLoopRequest;
import dev.mailbox.mainloop.MainLoopResult;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.testkit.redis.RedisServerProcess;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A caller's trace through a MainLoop and back, on memory and on Redis: one tree, caller → send → receive and
 * process → handler → the reply's send → the caller's receive and process of the reply.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class MainLoopTraceTest {

    private static RedisServerProcess redis;

    @AfterAll
    static void stopRedis() {
        if (redis != null) {
            redis.close();
        }
    }

    private static synchronized RedisServerProcess redisServer() {
        if (redis == null) {
            redis = RedisServerProcess.start();
        }
        return redis;
    }

    @Test
    @DisplayName("memory: one connected tree from the caller through the handler and back")
    void memory() throws Exception {
        Map<String, Mailbox<?>> shared = new java.util.concurrent.ConcurrentHashMap<>();
        roundTrip(new BiFunction<>() {
            @Override
            @SuppressWarnings("unchecked")
            public Mailbox<?> apply(String name, Codec<?> codec) {
                // both sides of a name share one in-memory mailbox object, as they share a queue elsewhere
                return shared.computeIfAbsent(name, n -> InMemoryMailbox.builder(n, (Codec<Object>) codec).build());
            }
        }, MailboxTracing.MEMORY);
    }

    @Test
    @DisplayName("Redis: one connected tree from the caller through the handler and back")
    void redis() throws Exception {
        String uri = redisServer().uri();
        roundTrip((name, codec) -> RedisMailbox.builder(name, codec).uri(uri).build(), MailboxTracing.REDIS);
    }

    /**
     * @param open opens a mailbox of a name (each side its own object where the backend is shared)
     */
    @SuppressWarnings("unchecked")
    private static void roundTrip(BiFunction<String, Codec<?>, Mailbox<?>> open, String backend) throws Exception {
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        String requestsName = "trace-req-" + suffix;
        String repliesName = "trace-reply-" + suffix;
        Codec<MainLoopRequest<String>> requestCodec = MainLoopCodecs.requests(String.class);
        Codec<MainLoopResult<String>> resultCodec = MainLoopCodecs.results(String.class);
        try (Traces traces = new Traces()) {
            MailboxTracing tracing = MailboxTracing.create(traces.sdk);
            Mailbox<MainLoopRequest<String>> runnerRequests = tracing.wrap(
                    (Mailbox<MainLoopRequest<String>>) open.apply(requestsName, requestCodec));
            Mailbox<MainLoopRequest<String>> callerRequests = tracing.wrap(
                    (Mailbox<MainLoopRequest<String>>) open.apply(requestsName, requestCodec));
            assertThat(runnerRequests.toString()).startsWith("Traced[");
            MainLoop<String, String> loop = MainLoop.<String, String>builder(runnerRequests, r -> {
                        Span handler = traces.tracer().spanBuilder("handler").startSpan();
                        try (Scope ignored = handler.makeCurrent()) {
                            return r.body().toUpperCase();
                        } finally {
                            handler.end();
                        }
                    })
                    .replyTo(name -> tracing.wrap((Mailbox<MainLoopResult<String>>) open.apply(name, resultCodec)))
                    .waitTime(Duration.ofSeconds(5)).interceptor(tracing.interceptor()).build();
            MainLoopClient<String, String> client = MainLoopClient.<String, String>builder(callerRequests,
                            name -> tracing.wrap((Mailbox<MainLoopResult<String>>) open.apply(name, resultCodec)))
                    .responseMailboxName(repliesName).receiveWait(Duration.ofSeconds(1))
                    .interceptor(tracing.interceptor()).build();

            Span caller = traces.tracer().spanBuilder("caller").startSpan();
            CompletableFuture<String> answer;
            try (Scope ignored = caller.makeCurrent()) {
                answer = client.call("hello");
            }
            assertThat(loop.run(1)).isEqualTo(1);
            assertThat(answer.get(30, TimeUnit.SECONDS)).isEqualTo("HELLO");
            client.close(); // acknowledges the reply and waits for the thread that delivered it
            loop.close();
            runnerRequests.close();
            callerRequests.close();
            caller.end();

            List<SpanData> spans = traces.await(s -> Traces.names(s).contains("caller"), Duration.ofSeconds(10));
            SpanData root = spans.stream().filter(s -> s.getName().equals("caller")).findFirst().orElseThrow();
            Traces.Tree tree = oneTree(spans, root);
            String send = "send " + requestsName;
            String reply = "send " + repliesName;
            tree.parentOf("caller", send);
            tree.parentOf(send, "receive " + requestsName, "process " + requestsName, "ack " + requestsName);
            tree.parentOf("process " + requestsName, "handler", reply);
            tree.parentOf(reply, "receive " + repliesName, "process " + repliesName, "ack " + repliesName);

            SpanData sent = tree.one(send);
            assertThat(sent.getKind()).isEqualTo(SpanKind.PRODUCER);
            assertThat(sent.getAttributes().get(SemConv.MESSAGING_DESTINATION_NAME)).isEqualTo(requestsName);
            assertThat(sent.getAttributes().get(SemConv.MAILBOX_BACKEND)).isEqualTo(backend);
            assertThat(sent.getAttributes().get(SemConv.MESSAGING_OPERATION_TYPE)).isEqualTo("send");
            String messageId = sent.getAttributes().get(SemConv.MESSAGING_MESSAGE_ID);
            assertThat(messageId).isNotBlank();
            SpanData processed = tree.one("process " + requestsName);
            assertThat(processed.getKind()).isEqualTo(SpanKind.CONSUMER);
            assertThat(processed.getAttributes().get(SemConv.MESSAGING_MESSAGE_ID)).isEqualTo(messageId);
            assertThat(processed.getAttributes().get(SemConv.MAILBOX_DELIVERY_COUNT)).isEqualTo(1L);
            assertThat(processed.getAttributes().get(SemConv.MAILBOX_BACKEND)).isEqualTo(backend);
            SpanData received = tree.one("receive " + requestsName);
            assertThat(received.getKind()).isEqualTo(SpanKind.CLIENT);
            assertThat(received.getLinks()).extracting(l -> l.getSpanContext().getSpanId())
                    .containsExactly(sent.getSpanId());
            assertThat(tree.one("ack " + requestsName).getAttributes().get(SemConv.MESSAGING_OPERATION_TYPE))
                    .isEqualTo("settle");
            assertThat(tracing.skippedInjections()).isZero();
        }
    }
}
