package dev.mailbox.opentelemetry;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxCapabilities;
import dev.mailbox.api.Message;
import dev.mailbox.api.MessageTooLargeException;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/** What {@link MailboxTracing#wrap} returns: every call goes to the mailbox it wraps, traced. */
final class TracingMailbox<T> implements Mailbox<T> {

    final MailboxTracing tracing;
    private final Mailbox<T> delegate;
    private final String backend;
    private final String name;
    private final boolean awsTraceHeader;

    TracingMailbox(MailboxTracing tracing, Mailbox<T> delegate, String backend) {
        this.tracing = tracing;
        this.delegate = delegate;
        this.backend = backend;
        this.name = delegate.name();
        this.awsTraceHeader = MailboxTracing.SQS.equals(backend);
    }

    String backend() {
        return backend;
    }

    @Override
    public String name() {
        return name;
    }

    // ---- send

    @Override
    public String send(T body, SendOptions options) {
        return traceSend(options, 1, false, o -> List.of(delegate.send(body, o))).get(0);
    }

    @Override
    public List<String> sendBatch(List<? extends T> bodies, SendOptions options) {
        return traceSend(options, bodies.size(), true, o -> delegate.sendBatch(bodies, o));
    }

    private List<String> traceSend(SendOptions options, int count, boolean batch,
                                   java.util.function.Function<SendOptions, List<String>> send) {
        java.util.Objects.requireNonNull(options, "options");
        Map<String, String> given = options.attributes();
        boolean custom = MailboxTracing.carriesContext(given);
        SpanBuilder builder = span(SemConv.SEND, SemConv.SEND, SpanKind.PRODUCER, Context.current());
        if (custom) {
            SpanContext theirs = Span.fromContext(tracing.extract(given)).getSpanContext();
            if (theirs.isValid()) {
                builder.addLink(theirs);
            }
        }
        if (batch) {
            builder.setAttribute(SemConv.MESSAGING_BATCH_MESSAGE_COUNT, (long) count);
        }
        Span span = builder.startSpan();
        try (Scope ignored = span.makeCurrent()) {
            SendOptions traced = custom ? options : tracing.inject(Context.current(), options, awsTraceHeader);
            List<String> ids;
            try {
                ids = send.apply(traced);
            } catch (MessageTooLargeException | IllegalArgumentException e) {
                if (traced == options) {
                    throw e;
                }
                // nothing was stored: the same message without the trace attributes, which must not be what
                // makes it too large (or, on SqsMailbox, leave a binary body no attribute for its encoding)
                ids = send.apply(options);
                tracing.skippedTooLarge();
            }
            if (!batch && ids.size() == 1) {
                span.setAttribute(SemConv.MESSAGING_MESSAGE_ID, ids.get(0));
            }
            return ids;
        } catch (RuntimeException | Error e) {
            failed(span, e);
            throw e;
        } finally {
            span.end();
        }
    }

    // ---- receive

    @Override
    public List<Message<T>> receive(ReceiveOptions options) {
        long start = now();
        List<Message<T>> got;
        try {
            got = delegate.receive(options);
        } catch (RuntimeException | Error e) {
            receiveSpan(start, List.of(), e);
            throw e;
        }
        return received(start, got);
    }

    @Override
    public List<Message<T>> acknowledgeAndReceive(List<? extends Message<T>> acknowledge, ReceiveOptions options,
                                                  Consumer<? super Message<T>> stale) {
        java.util.Objects.requireNonNull(options, "options");
        java.util.Objects.requireNonNull(stale, "stale");
        if (acknowledge.isEmpty()) {
            return receive(options);
        }
        Map<Message<T>, Message<T>> outer = new IdentityHashMap<>();
        List<Message<T>> inner = unwrap(acknowledge, outer);
        Span settle = settleSpan("ack", SemConv.SETTLE, acknowledge);
        long start = now();
        List<Message<T>> got;
        try {
            got = delegate.acknowledgeAndReceive(inner, options, s -> stale.accept(outer.getOrDefault(s, s)));
        } catch (RuntimeException | Error e) {
            failed(settle, e);
            settle.end();
            receiveSpan(start, List.of(), e);
            throw e;
        }
        settle.end();
        return received(start, got);
    }

    private List<Message<T>> received(long start, List<Message<T>> got) {
        if (got.isEmpty()) {
            return got; // an empty long poll is no span: idle consumers would flood the trace store
        }
        List<Message<T>> out = new ArrayList<>(got.size());
        for (Message<T> m : got) {
            out.add(new TracedMessage<>(this, m, tracing.extract(m)));
        }
        receiveSpan(start, out, null);
        return out;
    }

    private void receiveSpan(long start, List<Message<T>> messages, @Nullable Throwable failure) {
        if (messages.isEmpty() && failure == null) {
            return;
        }
        SpanBuilder builder = span(SemConv.RECEIVE, SemConv.RECEIVE, SpanKind.CLIENT, parentFor(messages))
                .setStartTimestamp(start, TimeUnit.NANOSECONDS)
                .setAttribute(SemConv.MESSAGING_BATCH_MESSAGE_COUNT, (long) messages.size());
        describe(builder, messages);
        Span span = builder.startSpan();
        if (failure != null) {
            failed(span, failure);
        }
        span.end();
    }

    // ---- settle

    @Override
    public List<Message<T>> acknowledgeBatch(List<? extends Message<T>> messages) {
        Map<Message<T>, Message<T>> outer = new IdentityHashMap<>();
        List<Message<T>> inner = unwrap(messages, outer);
        return settle("ack", SemConv.SETTLE, messages, () -> {
            List<Message<T>> stale = delegate.acknowledgeBatch(inner);
            List<Message<T>> mapped = new ArrayList<>(stale.size());
            stale.forEach(s -> mapped.add(outer.getOrDefault(s, s)));
            return mapped;
        });
    }

    @Override
    public void acknowledge(String receiptHandle) {
        settle("ack", SemConv.SETTLE, List.of(), () -> {
            delegate.acknowledge(receiptHandle);
            return null;
        });
    }

    @Override
    public void nack(String receiptHandle, Duration visibilityTimeout) {
        settle("nack", SemConv.SETTLE, List.of(), () -> {
            delegate.nack(receiptHandle, visibilityTimeout);
            return null;
        });
    }

    @Override
    public void extendVisibility(String receiptHandle, Duration timeout) {
        settle("extend", null, List.of(), () -> {
            delegate.extendVisibility(receiptHandle, timeout);
            return null;
        });
    }

    /** A settle call as a span: ack and nack settle; extend has no operation type of the conventions. */
    <R> R settle(String operation, @Nullable String type, List<? extends Message<T>> messages, Supplier<R> call) {
        Span span = settleSpan(operation, type, messages);
        try (Scope ignored = span.makeCurrent()) {
            return call.get();
        } catch (RuntimeException | Error e) {
            failed(span, e);
            throw e;
        } finally {
            span.end();
        }
    }

    private Span settleSpan(String operation, @Nullable String type, List<? extends Message<T>> messages) {
        SpanBuilder builder = span(operation, type, SpanKind.CLIENT, parentFor(messages));
        if (messages.size() != 1) {
            builder.setAttribute(SemConv.MESSAGING_BATCH_MESSAGE_COUNT, (long) messages.size());
        }
        describe(builder, messages);
        return builder.startSpan();
    }

    // ---- the rest, untraced

    @Override
    public Mailbox<T> fenced(long epoch) {
        return new TracingMailbox<>(tracing, delegate.fenced(epoch), backend);
    }

    @Override
    public long purge() {
        return delegate.purge();
    }

    @Override
    public long approximateCount() {
        return delegate.approximateCount();
    }

    @Override
    public MailboxCapabilities capabilities() {
        return delegate.capabilities();
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public String toString() {
        return "Traced[" + delegate + "]";
    }

    // ---- helpers

    private SpanBuilder span(String operation, @Nullable String type, SpanKind kind, Context parent) {
        SpanBuilder b = tracing.tracer().spanBuilder(operation + " " + name).setSpanKind(kind).setParent(parent)
                .setAttribute(SemConv.MESSAGING_SYSTEM, SemConv.SYSTEM)
                .setAttribute(SemConv.MESSAGING_OPERATION_NAME, operation)
                .setAttribute(SemConv.MESSAGING_DESTINATION_NAME, name)
                .setAttribute(SemConv.MAILBOX_BACKEND, backend);
        if (type != null) {
            b.setAttribute(SemConv.MESSAGING_OPERATION_TYPE, type);
        }
        return b;
    }

    /**
     * The caller's context where it has a span; with none, a single message's creation context (so a consumer's
     * receive and settle sit in the trace of what it consumes); otherwise a new trace, linked to the messages.
     */
    private static Context parentFor(List<? extends Message<?>> messages) {
        Context current = Context.current();
        if (Span.fromContext(current).getSpanContext().isValid() || messages.size() != 1
                || !(messages.get(0) instanceof TracedMessage<?> traced) || !traced.hasCreationContext()) {
            return current;
        }
        return traced.creation();
    }

    /** Links to each message's creation context, and the per-message attributes of a single message. */
    private static void describe(SpanBuilder builder, List<? extends Message<?>> messages) {
        for (Message<?> m : messages) {
            if (m instanceof TracedMessage<?> traced && traced.hasCreationContext()) {
                builder.addLink(Span.fromContext(traced.creation()).getSpanContext());
            }
        }
        if (messages.size() == 1) {
            Message<?> m = messages.get(0);
            builder.setAttribute(SemConv.MESSAGING_MESSAGE_ID, m.id())
                    .setAttribute(SemConv.MAILBOX_DELIVERY_COUNT, (long) m.deliveryCount());
        }
    }

    private List<Message<T>> unwrap(List<? extends Message<T>> messages, Map<Message<T>, Message<T>> outer) {
        List<Message<T>> inner = new ArrayList<>(messages.size());
        for (Message<T> m : messages) {
            Message<T> in = m instanceof TracedMessage<T> traced ? traced.inner() : m;
            outer.put(in, m);
            inner.add(in);
        }
        return inner;
    }

    static void failed(Span span, Throwable e) {
        span.setStatus(StatusCode.ERROR, String.valueOf(e.getMessage()));
        span.setAttribute(SemConv.ERROR_TYPE, e.getClass().getName());
        span.recordException(e);
    }

    private static long now() {
        Instant now = Instant.now();
        return TimeUnit.SECONDS.toNanos(now.getEpochSecond()) + now.getNano();
    }
}
