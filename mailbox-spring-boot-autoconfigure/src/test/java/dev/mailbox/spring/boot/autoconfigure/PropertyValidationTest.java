package dev.mailbox.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.spring.boot.MailboxListener;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.NestedExceptionUtils;

/** A property out of range stops the context with a message that names it and says what is allowed. */
class PropertyValidationTest {

    static class Listener {
        @MailboxListener("orders")
        void on(Order order) {
        }
    }

    static class BadConcurrency {
        @MailboxListener(value = "orders", concurrency = "${workers:many}")
        void on(Order order) {
        }
    }

    @Test
    void aBadConcurrencyInTheAnnotationStopsTheContextBeforeAnythingStarts() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(MailboxAutoConfiguration.class))
                .withBean(BadConcurrency.class)
                .withPropertyValues("mailbox.mailboxes.orders.backend=memory", "mailbox.listener.auto-startup=false")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
                            .hasMessageContaining(BadConcurrency.class.getName() + ".on")
                            .hasMessageContaining("concurrency must be 1 to 1024, was 'many'");
                });
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '|', value = {
            "mailbox.mailboxes.orders.listener.backoff.multiplier | 0.5   | 1 or more",
            "mailbox.mailboxes.orders.listener.backoff.initial    | 10m   | at most",
            "mailbox.mailboxes.orders.listener.backoff.initial    | -1s   | between 0 and 12 hours",
            "mailbox.mailboxes.orders.listener.backoff.max        | 13h   | between 0 and 12 hours",
            "mailbox.mailboxes.orders.wait-time                   | 16m   | between 0 and 15 minutes",
            "mailbox.mailboxes.orders.visibility-timeout          | 0s    | positive",
            "mailbox.mailboxes.orders.listener.max-messages       | 11    | between 1 and 10",
            "mailbox.mailboxes.orders.listener.concurrency        | 0     | 1 to 1024",
            "mailbox.mailboxes.orders.capacity                    | -1    | or more",
            "mailbox.mailboxes.orders.max-message-bytes           | 0     | between 1 and",
            "mailbox.mailboxes.orders.client.timeout              | 0s    | positive",
            "mailbox.listener.shutdown-grace                      | -1s   | 0 or more",
            "mailbox.redis.max-connections                        | 0     | 1 or more",
            "mailbox.coordination.ttl                             | -1s   | 0 or more",
            "mailbox.metrics.count-interval                       | 0s    | positive",
            "mailbox.node.call-timeout                            | 0s    | positive",
    })
    void aBadPropertyIsNamed(String property, String value, String allowed) {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(MailboxAutoConfiguration.class))
                .withBean(Listener.class)
                .withPropertyValues("mailbox.mailboxes.orders.backend=memory", property + "=" + value)
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
                            .hasMessageContaining(property).hasMessageContaining(allowed);
                });
    }
}
