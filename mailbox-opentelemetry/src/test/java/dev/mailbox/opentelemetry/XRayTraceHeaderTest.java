package dev.mailbox.opentelemetry;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class XRayTraceHeaderTest {

    @Test
    @DisplayName("a span context and its X-Ray header map onto each other exactly")
    void roundTrip() {
        SpanContext c = SpanContext.create("5759e988bd862e3fe1be46a994272793", "53995c3f42cd8ad8",
                TraceFlags.getSampled(), TraceState.getDefault());
        String header = XRayTraceHeader.format(c);
        assertThat(header).isEqualTo("Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1");
        SpanContext back = XRayTraceHeader.parse(header);
        assertThat(back.getTraceId()).isEqualTo(c.getTraceId());
        assertThat(back.getSpanId()).isEqualTo(c.getSpanId());
        assertThat(back.isSampled()).isTrue();
        assertThat(back.isRemote()).isTrue();
    }

    @Test
    @DisplayName("fields in any order, unknown ones ignored; anything without a valid root and parent is no context")
    void lenientButStrict() {
        assertThat(XRayTraceHeader.parse("Sampled=0; Lineage=a:1 ;Parent=53995C3F42CD8AD8;Root=1-5759e988-bd862e3fe1be46a994272793")
                .getSpanId()).isEqualTo("53995c3f42cd8ad8");
        assertThat(XRayTraceHeader.parse("Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1").isValid()).isFalse();
        assertThat(XRayTraceHeader.parse("Root=2-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8").isValid())
                .isFalse();
        assertThat(XRayTraceHeader.parse("Root=1-5759e988-bd862e3fe1be46a99427279z;Parent=53995c3f42cd8ad8").isValid())
                .isFalse();
        assertThat(XRayTraceHeader.parse("Root=1-00000000-000000000000000000000000;Parent=53995c3f42cd8ad8").isValid())
                .isFalse();
        assertThat(XRayTraceHeader.parse(null).isValid()).isFalse();
        assertThat(XRayTraceHeader.parse("x".repeat(10_000)).isValid()).isFalse();
        assertThat(XRayTraceHeader.format(SpanContext.getInvalid())).isNull();
    }
}
