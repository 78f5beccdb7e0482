package dev.mailbox.opentelemetry;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/** An SDK configured by hand whose spans go to the SDK's in-memory exporter, with a wait for spans to end. */
final class Traces implements AutoCloseable {

    final InMemorySpanExporter exporter = InMemorySpanExporter.create();
    final OpenTelemetrySdk sdk;
    private final Object ended = new Object();

    Traces() {
        SpanExporter notifying = new SpanExporter() {
            @Override
            public CompletableResultCode export(Collection<SpanData> spans) {
                CompletableResultCode r = exporter.export(spans);
                synchronized (ended) {
                    ended.notifyAll();
                }
                return r;
            }

            @Override
            public CompletableResultCode flush() {
                return exporter.flush();
            }

            @Override
            public CompletableResultCode shutdown() {
                return CompletableResultCode.ofSuccess();
            }
        };
        sdk = OpenTelemetrySdk.builder().setTracerProvider(SdkTracerProvider.builder()
                .addSpanProcessor(SimpleSpanProcessor.create(notifying)).build()).build();
    }

    Tracer tracer() {
        return sdk.getTracer("test");
    }

    /** Waits until the ended spans satisfy {@code done} (a span ends on whichever thread ends it). */
    List<SpanData> await(Predicate<List<SpanData>> done, Duration timeout) throws InterruptedException {
        long until = System.nanoTime() + timeout.toNanos();
        synchronized (ended) {
            while (true) {
                List<SpanData> now = exporter.getFinishedSpanItems();
                if (done.test(now)) {
                    return now;
                }
                long left = until - System.nanoTime();
                if (left <= 0) {
                    throw new AssertionError("spans not ended within " + timeout + "; ended: " + names(now));
                }
                ended.wait(Math.max(1, left / 1_000_000));
            }
        }
    }

    static List<String> names(List<SpanData> spans) {
        return spans.stream().map(SpanData::getName).toList();
    }

    /**
     * Checks that the spans of the root's trace form one tree under the root: the root has no parent, and every
     * other span's parent is a span of the trace.
     *
     * @return the trace
     */
    static Tree oneTree(List<SpanData> all, SpanData root) {
        assertThat(root.getParentSpanContext().isValid()).as("the caller's span is the root").isFalse();
        Map<String, SpanData> byId = new LinkedHashMap<>();
        for (SpanData s : all) {
            if (s.getTraceId().equals(root.getTraceId())) {
                byId.put(s.getSpanId(), s);
            }
        }
        for (SpanData s : byId.values()) {
            if (s != root) {
                assertThat(byId).as("the parent of '%s' is in the trace (%s)", s.getName(), names(List.copyOf(byId.values())))
                        .containsKey(s.getParentSpanId());
            }
        }
        return new Tree(List.copyOf(byId.values()));
    }

    /** The spans of one trace. */
    record Tree(List<SpanData> spans) {

        /** @return the trace's one span of this name */
        SpanData one(String name) {
            List<SpanData> named = named(name);
            assertThat(named).as("spans named '%s' in %s", name, names(spans)).hasSize(1);
            return named.get(0);
        }

        List<SpanData> named(String name) {
            return spans.stream().filter(s -> s.getName().equals(name)).toList();
        }

        List<SpanData> childrenOf(SpanData parent) {
            return spans.stream().filter(s -> s.getParentSpanId().equals(parent.getSpanId())).toList();
        }

        /** Checks that each span named in {@code children} (one of each in the trace) is a child of {@code parent}. */
        void parentOf(String parent, String... children) {
            SpanData p = one(parent);
            for (String child : children) {
                assertThat(one(child).getParentSpanId()).as("parent of '%s' is '%s'", child, parent)
                        .isEqualTo(p.getSpanId());
            }
        }
    }

    @Override
    public void close() {
        sdk.close();
    }
}
