package dev.mailbox.opentelemetry;

import dev.mailbox.api.Limits;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.SendOptions;
import dev.mailbox.mainloop.MessageInterceptor;
import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * Traces mailboxes with OpenTelemetry: {@link #wrap} decorates a {@link Mailbox} so that the trace a send is
 * made in travels with the message, and {@link #interceptor()} makes a {@code MainLoop} (and its client) continue
 * it while it handles the message.
 *
 * <pre>{@code
 * MailboxTracing tracing = MailboxTracing.create(openTelemetry);
 * Mailbox<MainLoopRequest<Order>> requests = tracing.wrap(RedisMailbox.builder("orders", codec).uri(uri).build());
 * MainLoop<Order, Quote> loop = MainLoop.builder(requests, handler)
 *         .replyTo(name -> tracing.wrap(RedisMailbox.builder(name, results).uri(uri).build()))
 *         .interceptor(tracing.interceptor())
 *         .build();
 * }</pre>
 *
 * <h2>What a wrapped mailbox does</h2>
 * <ul>
 *   <li><b>Send</b> ({@code send} and {@code sendBatch}): a span {@code send <mailbox>} (kind PRODUCER) in the
 *       caller's context, whose context is injected into the message's attributes: {@code traceparent} and
 *       {@code tracestate} (W3C trace context, or what {@link Builder#propagator} writes) and, where the backend is
 *       {@link #SQS}, {@code AWSTraceHeader}, which SqsMailbox sends as SQS's system attribute and X-Ray reads.
 *       A send whose options already carry a trace context ({@code traceparent} or {@code AWSTraceHeader}) keeps it
 *       unchanged, as the conventions ask of a custom creation context, and the span links to it.</li>
 *   <li><b>The limits hold.</b> Tracing never makes a message the mailbox would refuse: the trace attributes go
 *       only where the message has room for them among its ten ({@code traceparent} first, then
 *       {@code AWSTraceHeader}, then the rest), and a send refused as too large (or, on SqsMailbox, a binary body
 *       that needs the last attribute itself) with them is sent again without them. Each send that goes without
 *       is counted: {@link #skippedInjections()} and the counter {@code mailbox.tracing.injections.skipped}
 *       (attribute {@code reason}: {@code attributes}, {@code size}, {@code trimmed} when only some fitted,
 *       {@code invalid} when the propagator wrote a field no attribute may hold).</li>
 *   <li><b>Receive</b>: a span {@code receive <mailbox>} (CLIENT) for each receive that returns messages (an empty
 *       long poll makes none, so idle consumers do not flood the trace store), linked to each message's creation
 *       context; its parent is the caller's context, or, with none and a single message, that message's creation
 *       context (the conventions allow the parent where there is one message), so a runner's receive sits in its
 *       caller's trace.</li>
 *   <li><b>Settle</b>: {@code ack}, {@code nack} and {@code extend} (a message's own, by handle, in batches, and
 *       the acknowledgements {@code acknowledgeAndReceive} carries, whose span lasts the whole call) are spans
 *       (CLIENT) parented the same way.</li>
 *   <li>Attributes: {@code messaging.system=mailbox}, {@code messaging.operation.name} and {@code .type},
 *       {@code messaging.destination.name} (the mailbox), {@code messaging.mailbox.backend},
 *       {@code messaging.message.id}, {@code messaging.mailbox.message.delivery_count} and
 *       {@code messaging.batch.message_count}; failures set the status, {@code error.type} and the exception.</li>
 * </ul>
 * Counting, purging and capabilities are not traced. A wrapped mailbox's {@link Mailbox#fenced fenced} views
 * are wrapped too, and its messages are wrappers whose settle calls are traced; pass them, not the inner
 * mailbox's, back to it.
 *
 * <h2>Which OpenTelemetry</h2>
 * The one given to {@link #create} or {@link Builder#openTelemetry}; without one, {@link GlobalOpenTelemetry}'s,
 * which the OpenTelemetry Java agent sets before the application starts, or an application when it registers the
 * SDK it configured by hand: it is looked for without being fixed (a {@code GlobalOpenTelemetry.get()} before the
 * registration would fix it to a no-op and make the registration fail), and used from the first call after it is
 * set.
 *
 * <p>Thread-safe; one instance serves any number of mailboxes.
 */
public final class MailboxTracing {

    /** The backend name of in-memory mailboxes. */
    public static final String MEMORY = "memory";
    /** The backend name of Redis mailboxes. */
    public static final String REDIS = "redis";
    /** The backend name of SQS mailboxes, AWS's or the {@code sqs-endpoint}'s: they get {@code AWSTraceHeader} too. */
    public static final String SQS = "sqs";
    /** The backend name of mailboxes used through a mailbox node ({@code RemoteMailbox}). */
    public static final String NODE = "node";

    static final String INSTRUMENTATION = "dev.mailbox.opentelemetry";
    private static final AttributeKey<String> REASON = AttributeKey.stringKey("reason");
    private static final Attributes NO_ROOM = Attributes.of(REASON, "attributes");
    private static final Attributes TOO_LARGE = Attributes.of(REASON, "size");
    private static final Attributes TRIMMED = Attributes.of(REASON, "trimmed");
    private static final Attributes INVALID = Attributes.of(REASON, "invalid");
    private static final TextMapGetter<Map<String, String>> ATTRIBUTES = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, String> carrier) {
            return carrier.keySet();
        }

        @Override
        public @Nullable String get(@Nullable Map<String, String> carrier, String key) {
            return carrier == null ? null : carrier.get(key);
        }
    };

    private final TextMapPropagator propagator;
    private final AtomicLong skippedCount = new AtomicLong();
    private final Telemetry telemetry;

    private MailboxTracing(@Nullable OpenTelemetry openTelemetry, TextMapPropagator propagator) {
        this.telemetry = new Telemetry(openTelemetry);
        this.propagator = propagator;
    }

    Tracer tracer() {
        return telemetry.get().tracer;
    }

    /**
     * @param openTelemetry where spans go
     * @return tracing with W3C trace context propagation
     */
    public static MailboxTracing create(OpenTelemetry openTelemetry) {
        return builder().openTelemetry(openTelemetry).build();
    }

    /** @return a builder */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Wraps a mailbox, naming its backend from its class: {@code InMemoryMailbox} is {@link #MEMORY},
     * {@code RedisMailbox} {@link #REDIS}, {@code SqsMailbox} {@link #SQS}, {@code RemoteMailbox} {@link #NODE};
     * any other is its class's simple name, lower case, without a {@code Mailbox} suffix. Name it with
     * {@link #wrap(Mailbox, String)} where that is wrong (a decorator of your own over an SqsMailbox, say).
     *
     * @param mailbox the mailbox
     * @param <T>     the body type
     * @return the traced mailbox; closing it closes {@code mailbox}
     */
    public <T> Mailbox<T> wrap(Mailbox<T> mailbox) {
        return wrap(mailbox, backendOf(mailbox));
    }

    /**
     * Wraps a mailbox. A mailbox this tracing wrapped already is returned as it is.
     *
     * @param mailbox the mailbox
     * @param backend its backend, for the spans' {@code messaging.mailbox.backend}; {@link #SQS} also puts
     *                {@code AWSTraceHeader} in the messages
     * @param <T>     the body type
     * @return the traced mailbox; closing it closes {@code mailbox}
     */
    public <T> Mailbox<T> wrap(Mailbox<T> mailbox, String backend) {
        Objects.requireNonNull(mailbox, "mailbox");
        Objects.requireNonNull(backend, "backend");
        if (mailbox instanceof TracingMailbox<T> traced && traced.tracing == this) {
            return traced;
        }
        return new TracingMailbox<>(this, mailbox, backend);
    }

    /**
     * The interceptor for {@code MainLoop.Builder.interceptor} and {@code MainLoopClient.Builder.interceptor}: the
     * work for each received message runs in a span {@code process <mailbox>} (CONSUMER) whose parent is the
     * message's creation context (its sender's span), so a runner's handler, and the result it sends, continue the
     * caller's trace, and a client completes the call inside the trace of the result's sender. Needs the
     * {@code mainloop} module on the class path.
     *
     * @return the interceptor
     */
    public MessageInterceptor interceptor() {
        return new TracingInterceptor(this);
    }

    /** @return how many sends went without their trace context, or with only part of it (see the class comment) */
    public long skippedInjections() {
        return skippedCount.get();
    }

    static String backendOf(Mailbox<?> mailbox) {
        String type = mailbox.getClass().getSimpleName();
        return switch (type) {
            case "InMemoryMailbox" -> MEMORY;
            case "RedisMailbox" -> REDIS;
            case "SqsMailbox" -> SQS;
            case "RemoteMailbox" -> NODE;
            default -> {
                String lower = type.toLowerCase(Locale.ROOT);
                String bare = lower.endsWith("mailbox") ? lower.substring(0, lower.length() - "mailbox".length()) : lower;
                yield bare.isEmpty() ? "unknown" : bare;
            }
        };
    }

    /**
     * The creation context a message carries: what the propagator reads from its attributes, or else its
     * {@code AWSTraceHeader}.
     *
     * @return a context whose span context is invalid when the message carries none
     */
    Context extract(Map<String, String> attributes) {
        if (attributes.isEmpty()) {
            return Context.root();
        }
        Context extracted = propagator.extract(Context.root(), attributes, ATTRIBUTES);
        if (Span.fromContext(extracted).getSpanContext().isValid()) {
            return extracted;
        }
        SpanContext xray = XRayTraceHeader.parse(attributes.get(XRayTraceHeader.NAME));
        return xray.isValid() ? extracted.with(Span.wrap(xray)) : extracted;
    }

    /**
     * The creation context a received message carries: from its attributes, or else from the system attribute
     * {@code AWSTraceHeader} (where the SQS endpoint keeps an SQS client's X-Ray header).
     */
    Context extract(dev.mailbox.api.Message<?> message) {
        Map<String, String> attributes = message.attributes();
        String systemHeader = message.systemAttributes().get(XRayTraceHeader.NAME);
        if (systemHeader != null && !attributes.containsKey(XRayTraceHeader.NAME)) {
            Map<String, String> withHeader = new java.util.HashMap<>(attributes);
            withHeader.put(XRayTraceHeader.NAME, systemHeader);
            attributes = withHeader;
        }
        return extract(attributes);
    }

    /** Whether the options carry a trace context of the sender's own, which a send must not replace. */
    static boolean carriesContext(Map<String, String> attributes) {
        return attributes.containsKey("traceparent") || attributes.containsKey(XRayTraceHeader.NAME);
    }

    /**
     * The options with the context's trace attributes added, as many as fit (see the class comment); the same
     * options if none fit or there is nothing to add.
     */
    SendOptions inject(Context context, SendOptions options, boolean awsTraceHeader) {
        Map<String, String> carrier = new LinkedHashMap<>(4);
        propagator.inject(context, carrier, (c, k, v) -> {
            if (c != null) {
                c.put(k, v);
            }
        });
        if (awsTraceHeader) {
            String header = XRayTraceHeader.format(Span.fromContext(context).getSpanContext());
            if (header != null) {
                carrier.put(XRayTraceHeader.NAME, header);
            }
        }
        if (carrier.isEmpty()) {
            return options; // no span to carry (tracing is off)
        }
        Map<String, String> given = options.attributes();
        int room = Limits.MAX_ATTRIBUTES - given.size();
        Map<String, String> added = new LinkedHashMap<>(4);
        boolean left = false;
        for (String key : priority(carrier)) {
            if (given.containsKey(key) || room > 0) {
                if (!given.containsKey(key)) {
                    room--;
                }
                added.put(key, carrier.get(key));
            } else if (added.isEmpty()) {
                skipped(NO_ROOM); // not even the first fits: no part of the context goes
                return options;
            } else {
                left = true;
            }
        }
        SendOptions traced;
        try {
            traced = options.withAttributes(added);
        } catch (IllegalArgumentException e) {
            // a propagator's field no mailbox attribute may hold (a name or character SQS refuses): tracing must
            // not be why a send fails
            skipped(INVALID);
            return options;
        }
        if (left) {
            skipped(TRIMMED);
        }
        return traced;
    }

    private static Iterable<String> priority(Map<String, String> carrier) {
        java.util.List<String> keys = new java.util.ArrayList<>(carrier.size());
        if (carrier.containsKey("traceparent")) {
            keys.add("traceparent");
        }
        if (carrier.containsKey(XRayTraceHeader.NAME)) {
            keys.add(XRayTraceHeader.NAME);
        }
        for (String k : carrier.keySet()) {
            if (!keys.contains(k)) {
                keys.add(k);
            }
        }
        return keys;
    }

    void skippedTooLarge() {
        skipped(TOO_LARGE);
    }

    private void skipped(Attributes reason) {
        skippedCount.incrementAndGet();
        telemetry.get().skipped.add(1, reason);
    }

    /** What spans and the counter go to: the given OpenTelemetry, or the global one once it is set. */
    static final class Telemetry {
        private static final Resolved NOOP = new Resolved(OpenTelemetry.noop());
        private final @Nullable OpenTelemetry given;
        private volatile @Nullable Resolved resolved;

        Telemetry(@Nullable OpenTelemetry given) {
            this.given = given;
            this.resolved = given == null ? null : new Resolved(given);
        }

        Resolved get() {
            Resolved r = resolved;
            if (r != null) {
                return r;
            }
            // GlobalOpenTelemetry.get() before the application registers its SDK would fix the global to a no-op
            // and make that registration fail; until it is set, spans go nowhere and it is asked again
            if (!GlobalOpenTelemetry.isSet()) {
                return NOOP;
            }
            r = new Resolved(GlobalOpenTelemetry.get());
            resolved = r;
            return r;
        }

        /** @return the instance given or resolved, or null while the global one is not set */
        @Nullable OpenTelemetry openTelemetry() {
            Resolved r = get();
            return r == NOOP ? null : r.openTelemetry;
        }
    }

    /** One OpenTelemetry's tracer and skip counter. */
    static final class Resolved {
        final OpenTelemetry openTelemetry;
        final Tracer tracer;
        final LongCounter skipped;

        Resolved(OpenTelemetry openTelemetry) {
            this.openTelemetry = openTelemetry;
            this.tracer = openTelemetry.getTracer(INSTRUMENTATION);
            this.skipped = openTelemetry.getMeter(INSTRUMENTATION).counterBuilder("mailbox.tracing.injections.skipped")
                    .setDescription("sends whose trace context was left out, or only partly put in, to keep the"
                            + " message within its limits").setUnit("{send}").build();
        }
    }

    /** Builds a {@link MailboxTracing}. Not thread-safe. */
    public static final class Builder {
        private @Nullable OpenTelemetry openTelemetry;
        private TextMapPropagator propagator = W3CTraceContextPropagator.getInstance();

        private Builder() {
        }

        /**
         * @param openTelemetry where spans and the skip counter go (default: {@link GlobalOpenTelemetry}'s, from the
         *                      first call after it is set, which the Java agent does before the application
         *                      starts; until then nothing is recorded and the global is not touched, so an SDK
         *                      registered later still can be)
         * @return this builder
         */
        public Builder openTelemetry(OpenTelemetry openTelemetry) {
            this.openTelemetry = Objects.requireNonNull(openTelemetry, "openTelemetry");
            return this;
        }

        /**
         * @param propagator what writes the trace context into a message's attributes and reads it back (default
         *                   W3C trace context: {@code traceparent} and {@code tracestate}). The OpenTelemetry
         *                   instance's own ({@code getPropagators().getTextMapPropagator()}) adds baggage and
         *                   whatever else it is configured with; every field is an attribute, within the budget
         * @return this builder
         */
        public Builder propagator(TextMapPropagator propagator) {
            this.propagator = Objects.requireNonNull(propagator, "propagator");
            return this;
        }

        /** @return the tracing */
        public MailboxTracing build() {
            return new MailboxTracing(openTelemetry, propagator);
        }
    }
}
