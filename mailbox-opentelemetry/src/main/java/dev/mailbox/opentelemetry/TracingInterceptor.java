package dev.mailbox.opentelemetry;

import dev.mailbox.api.Message;
import dev.mailbox.mainloop.MessageInterceptor;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;

/** {@link MailboxTracing#interceptor()}: the work for a received message as a {@code process} span in its sender's trace. */
final class TracingInterceptor implements MessageInterceptor {

    private final MailboxTracing tracing;

    TracingInterceptor(MailboxTracing tracing) {
        this.tracing = tracing;
    }

    @Override
    public void intercept(String mailbox, Message<?> message, Runnable work) {
        Context creation;
        String backend = null;
        if (message instanceof TracedMessage<?> traced) {
            creation = traced.creation();
            backend = traced.backend();
        } else {
            creation = tracing.extract(message); // a mailbox not wrapped: its sender's context all the same
        }
        // the sender's span is the parent (a process span accounts for one message), so the handler's work and
        // what it sends continue the sender's trace; without one, the caller's context
        Context parent = Span.fromContext(creation).getSpanContext().isValid() ? creation : Context.current();
        SpanBuilder builder = tracing.tracer().spanBuilder(SemConv.PROCESS + " " + mailbox).setSpanKind(SpanKind.CONSUMER)
                .setParent(parent)
                .setAttribute(SemConv.MESSAGING_SYSTEM, SemConv.SYSTEM)
                .setAttribute(SemConv.MESSAGING_OPERATION_NAME, SemConv.PROCESS)
                .setAttribute(SemConv.MESSAGING_OPERATION_TYPE, SemConv.PROCESS)
                .setAttribute(SemConv.MESSAGING_DESTINATION_NAME, mailbox)
                .setAttribute(SemConv.MESSAGING_MESSAGE_ID, message.id())
                .setAttribute(SemConv.MAILBOX_DELIVERY_COUNT, (long) message.deliveryCount());
        if (backend != null) {
            builder.setAttribute(SemConv.MAILBOX_BACKEND, backend);
        }
        Span span = builder.startSpan();
        try (Scope ignored = parent.with(span).makeCurrent()) {
            work.run();
        } catch (RuntimeException | Error e) {
            TracingMailbox.failed(span, e);
            throw e;
        } finally {
            span.end();
        }
    }
}
