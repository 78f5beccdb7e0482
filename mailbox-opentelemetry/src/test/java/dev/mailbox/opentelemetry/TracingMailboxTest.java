package dev.mailbox.opentelemetry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Limits;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.MessageTooLargeException;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import dev.mailbox.inmemory.InMemoryMailbox;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The attribute budget, a sender's own trace context, X-Ray's header, and settles. */
class TracingMailboxTest {

    private final Traces traces = new Traces();
    private final MailboxTracing tracing = MailboxTracing.create(traces.sdk);

    @AfterEach
    void close() {
        traces.close();
    }

    private static Map<String, String> attributes(int n) {
        Map<String, String> a = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            a.put("a" + i, "v" + i);
        }
        return a;
    }

    private static Message<String> receiveOne(Mailbox<String> m) {
        List<Message<String>> got = m.receive(ReceiveOptions.defaults().withVisibilityTimeout(Duration.ofSeconds(30)));
        assertThat(got).hasSize(1);
        return got.get(0);
    }

    private SpanData span(String name) {
        return traces.exporter.getFinishedSpanItems().stream().filter(s -> s.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError(name + " not among " + Traces.names(traces.exporter.getFinishedSpanItems())));
    }

    @Test
    @DisplayName("a message with ten attributes is sent without the trace context, and counted")
    void noRoomNoInjection() {
        Mailbox<String> inner = InMemoryMailbox.builder("full", Codec.utf8()).build();
        Mailbox<String> m = tracing.wrap(inner);
        m.send("x", SendOptions.defaults().withAttributes(attributes(10)));
        assertThat(receiveOne(inner).attributes()).isEqualTo(attributes(10));
        assertThat(tracing.skippedInjections()).isEqualTo(1);
        assertThat(span("send full").getStatus().getStatusCode()).isNotEqualTo(StatusCode.ERROR);

        m.send("y", SendOptions.defaults().withAttributes(attributes(9)));
        assertThat(receiveOne(inner).attributes()).hasSize(10).containsKey("traceparent");
        assertThat(tracing.skippedInjections()).isEqualTo(1);
    }

    @Test
    @DisplayName("on SQS the context takes traceparent first, then AWSTraceHeader, as far as there is room")
    void sqsPartlyFits() {
        Mailbox<String> inner = InMemoryMailbox.builder("sqs-like", Codec.utf8()).build();
        Mailbox<String> m = tracing.wrap(inner, MailboxTracing.SQS);
        Span parent = traces.tracer().spanBuilder("parent").startSpan();
        try (Scope ignored = parent.makeCurrent()) {
            m.send("both", SendOptions.defaults());
            m.send("one", SendOptions.defaults().withAttributes(attributes(9)));
        } finally {
            parent.end();
        }
        Map<String, String> both = receiveOne(inner).attributes();
        assertThat(both).containsOnlyKeys("traceparent", "AWSTraceHeader");
        SpanContext viaXRay = XRayTraceHeader.parse(both.get("AWSTraceHeader"));
        assertThat(viaXRay.getTraceId()).isEqualTo(parent.getSpanContext().getTraceId());
        assertThat(both.get("traceparent")).contains(viaXRay.getSpanId()); // the same send span in both
        Map<String, String> one = receiveOne(inner).attributes();
        assertThat(one).hasSize(Limits.MAX_ATTRIBUTES).containsKey("traceparent").doesNotContainKey("AWSTraceHeader");
        assertThat(tracing.skippedInjections()).isEqualTo(1); // trimmed
    }

    @Test
    @DisplayName("a message the trace attributes would make too large is sent without them; one too large anyway"
            + " is refused as before, nothing stored")
    void sizeLimitHolds() {
        Mailbox<String> inner = InMemoryMailbox.builder("small", Codec.utf8()).maxMessageBytes(100).build();
        Mailbox<String> m = tracing.wrap(inner);
        String body = "x".repeat(80); // fits alone; with a traceparent (72 bytes as SQS counts it) it would not
        Span parent = traces.tracer().spanBuilder("parent").startSpan();
        try (Scope ignored = parent.makeCurrent()) {
            m.send(body);
            assertThatThrownBy(() -> m.send("y".repeat(101))).isInstanceOf(MessageTooLargeException.class)
                    .satisfies(e -> assertThat(((MessageTooLargeException) e).size()).isEqualTo(101));
        } finally {
            parent.end();
        }
        Message<String> got = receiveOne(inner);
        assertThat(got.body()).isEqualTo(body);
        assertThat(got.attributes()).isEmpty();
        assertThat(inner.approximateCount()).isEqualTo(1);
        assertThat(tracing.skippedInjections()).isEqualTo(1); // the first went without; the second was not sent at all
        List<SpanData> sends = traces.exporter.getFinishedSpanItems().stream()
                .filter(s -> s.getName().equals("send small")).toList();
        assertThat(sends).hasSize(2);
        assertThat(sends.get(0).getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
        assertThat(sends.get(1).getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
        assertThat(sends.get(1).getAttributes().get(SemConv.ERROR_TYPE)).isEqualTo(MessageTooLargeException.class.getName());
    }

    @Test
    @DisplayName("a send that carries its own traceparent keeps it, and the send span links to it")
    void customCreationContextKept() {
        Mailbox<String> inner = InMemoryMailbox.builder("custom", Codec.utf8()).build();
        Mailbox<String> m = tracing.wrap(inner);
        String theirs = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        m.send("x", SendOptions.defaults().withAttribute("traceparent", theirs));
        assertThat(receiveOne(inner).attributes()).containsExactlyEntriesOf(Map.of("traceparent", theirs));
        assertThat(span("send custom").getLinks()).extracting(l -> l.getSpanContext().getSpanId())
                .containsExactly("b7ad6b7169203331");
    }

    @Test
    @DisplayName("a message carrying only AWSTraceHeader (sent by an AWS SDK) is processed in that trace")
    void xrayHeaderContinued() {
        Mailbox<String> inner = InMemoryMailbox.builder("xray", Codec.utf8()).build();
        Mailbox<String> m = tracing.wrap(inner, MailboxTracing.SQS);
        inner.send("x", SendOptions.defaults().withAttribute("AWSTraceHeader",
                "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"));
        Message<String> got = receiveOne(m);
        AtomicReference<SpanContext> inside = new AtomicReference<>();
        tracing.interceptor().intercept("xray", got, () -> inside.set(Span.current().getSpanContext()));
        got.acknowledge();
        assertThat(inside.get().getTraceId()).isEqualTo("5759e988bd862e3fe1be46a994272793");
        SpanData process = span("process xray");
        assertThat(process.getParentSpanId()).isEqualTo("53995c3f42cd8ad8");
        assertThat(process.getSpanId()).isEqualTo(inside.get().getSpanId());
        assertThat(span("receive xray").getParentSpanId()).isEqualTo("53995c3f42cd8ad8");
        assertThat(span("ack xray").getParentSpanId()).isEqualTo("53995c3f42cd8ad8");
        assertThat(inner.approximateCount()).isZero();
    }

    @Test
    @DisplayName("batches: the messages of a traced receive go back through acknowledgeBatch and"
            + " acknowledgeAndReceive unwrapped, stale ones are reported as the caller's objects")
    void batchSettles() {
        Mailbox<String> inner = InMemoryMailbox.builder("batch", Codec.utf8()).build();
        Mailbox<String> m = tracing.wrap(inner);
        m.sendBatch(List.of("a", "b", "c"));
        List<Message<String>> got = m.receive(ReceiveOptions.defaults().withMaxMessages(10));
        assertThat(got).hasSize(3);
        assertThat(m.acknowledgeBatch(got.subList(0, 1))).isEmpty();
        List<Message<String>> stale = new java.util.ArrayList<>();
        assertThat(m.acknowledgeAndReceive(got, ReceiveOptions.defaults(), stale::add)).isEmpty();
        assertThat(stale).containsExactly(got.get(0)); // the same object the caller passed
        assertThat(inner.approximateCount()).isZero();
        SpanData batch = span("send batch");
        assertThat(batch.getAttributes().get(SemConv.MESSAGING_BATCH_MESSAGE_COUNT)).isEqualTo(3L);
        SpanData received = span("receive batch");
        assertThat(received.getLinks()).hasSize(3);
        assertThat(received.getParentSpanContext().isValid()).as("several messages: a new trace, linked").isFalse();
    }

    @Test
    @DisplayName("a propagator field no attribute may hold is left out, counted, and the send goes through")
    void invalidFieldLeftOut() {
        io.opentelemetry.context.propagation.TextMapPropagator odd = new io.opentelemetry.context.propagation.TextMapPropagator() {
            @Override
            public java.util.Collection<String> fields() {
                return List.of("bad name");
            }

            @Override
            public <C> void inject(io.opentelemetry.context.Context context, C carrier,
                                   io.opentelemetry.context.propagation.TextMapSetter<C> setter) {
                setter.set(carrier, "bad name", "x");
            }

            @Override
            public <C> io.opentelemetry.context.Context extract(io.opentelemetry.context.Context context, C carrier,
                                                                io.opentelemetry.context.propagation.TextMapGetter<C> getter) {
                return context;
            }
        };
        MailboxTracing oddTracing = MailboxTracing.builder().openTelemetry(traces.sdk).propagator(odd).build();
        Mailbox<String> inner = InMemoryMailbox.builder("odd", Codec.utf8()).build();
        oddTracing.wrap(inner).send("x");
        assertThat(receiveOne(inner).attributes()).isEmpty();
        assertThat(oddTracing.skippedInjections()).isEqualTo(1);
    }
}
