package dev.mailbox.opentelemetry;

import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import org.jspecify.annotations.Nullable;

/**
 * X-Ray's trace header, as SQS carries it in the {@code AWSTraceHeader} system attribute:
 * {@code Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1}. An X-Ray trace id's
 * epoch and random parts, joined, are the 32 hex digits of an OpenTelemetry trace id, so the mapping is exact
 * both ways.
 */
final class XRayTraceHeader {

    /** The attribute name: SQS's system attribute, which SqsMailbox and the endpoint map to a message attribute. */
    static final String NAME = "AWSTraceHeader";
    /** Longer than any header X-Ray writes (with a Lineage field too): longer ones are not read. */
    private static final int MAX_LENGTH = 512;

    private XRayTraceHeader() {
    }

    /** @return the header for this span context, or null if it is not valid */
    static @Nullable String format(SpanContext context) {
        if (!context.isValid()) {
            return null;
        }
        String trace = context.getTraceId();
        return "Root=1-" + trace.substring(0, 8) + "-" + trace.substring(8) + ";Parent=" + context.getSpanId()
                + ";Sampled=" + (context.isSampled() ? "1" : "0");
    }

    /**
     * @param header a header, fields in any order, unknown ones (Lineage, Self) ignored
     * @return the remote span context it names, or {@link SpanContext#getInvalid()} if it has no valid root
     *         and parent
     */
    static SpanContext parse(@Nullable String header) {
        if (header == null || header.length() > MAX_LENGTH) {
            return SpanContext.getInvalid();
        }
        String trace = null;
        String parent = null;
        boolean sampled = false;
        for (String field : header.split(";")) {
            int eq = field.indexOf('=');
            if (eq < 0) {
                continue;
            }
            String key = field.substring(0, eq).trim();
            String value = field.substring(eq + 1).trim();
            switch (key) {
                case "Root" -> {
                    if (value.length() == 35 && value.startsWith("1-") && value.charAt(10) == '-') {
                        trace = value.substring(2, 10) + value.substring(11);
                    }
                }
                case "Parent" -> parent = value;
                case "Sampled" -> sampled = value.equals("1");
                default -> {
                    // other fields carry nothing a span context holds
                }
            }
        }
        if (trace == null || parent == null) {
            return SpanContext.getInvalid();
        }
        String lowerTrace = trace.toLowerCase(java.util.Locale.ROOT);
        String lowerParent = parent.toLowerCase(java.util.Locale.ROOT);
        // createFromRemoteParent checks the lengths and hex digits, and gives an invalid context otherwise
        return SpanContext.createFromRemoteParent(lowerTrace, lowerParent,
                sampled ? TraceFlags.getSampled() : TraceFlags.getDefault(), TraceState.getDefault());
    }
}
