package dev.mailbox.opentelemetry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.inmemory.InMemoryMailbox;
import io.opentelemetry.api.GlobalOpenTelemetry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Without an instance given, tracing takes the global one once it is set (by the agent or the application). */
class GlobalOpenTelemetryTest {

    @AfterEach
    void reset() {
        GlobalOpenTelemetry.resetForTest();
    }

    @Test
    @DisplayName("tracing built before the SDK is registered neither records nor fixes the global, and traces once"
            + " it is registered")
    void followsTheGlobalOnceSet() {
        GlobalOpenTelemetry.resetForTest();
        MailboxTracing tracing = MailboxTracing.builder().build();
        Mailbox<String> inner = InMemoryMailbox.builder("global", Codec.utf8()).build();
        Mailbox<String> m = tracing.wrap(inner);
        m.send("before");
        assertThat(inner.receive(ReceiveOptions.defaults()).get(0).attributes()).isEmpty();
        assertThat(GlobalOpenTelemetry.isSet()).as("the global is left for the application to set").isFalse();

        try (Traces traces = new Traces()) {
            GlobalOpenTelemetry.set(traces.sdk); // would throw had tracing called GlobalOpenTelemetry.get()
            m.send("after");
            assertThat(inner.receive(ReceiveOptions.defaults()).get(0).attributes()).containsKey("traceparent");
            assertThat(Traces.names(traces.exporter.getFinishedSpanItems())).containsExactly("send global");
        }
    }
}
