/**
 * Tracing for mailboxes with OpenTelemetry, optional: nothing else in Mailbox depends on it.
 *
 * <ul>
 *   <li>{@link dev.mailbox.opentelemetry.MailboxTracing} wraps any {@link dev.mailbox.api.Mailbox}: a send
 *       carries the trace context in the message's attributes (W3C {@code traceparent} and {@code tracestate},
 *       and X-Ray's {@code AWSTraceHeader} on SQS), never past the attribute or size limits; sends, receives and
 *       settles are spans after OpenTelemetry's messaging conventions; and its
 *       {@link dev.mailbox.opentelemetry.MailboxTracing#interceptor() interceptor} makes a
 *       {@link dev.mailbox.mainloop.MainLoop} continue the caller's trace into the handler and back with the
 *       reply.</li>
 *   <li>{@link dev.mailbox.opentelemetry.GrpcTracing} gives the gRPC interceptors that mailbox nodes,
 *       coordinators and their clients take, so calls between them (forwarding included) are spans of the same
 *       trace.</li>
 * </ul>
 *
 * <p>Types in this package are non-null unless annotated otherwise.
 */
@NullMarked
package dev.mailbox.opentelemetry;

import org.jspecify.annotations.NullMarked;
