package dev.mailbox.samples.deadletters;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.api.SendOptions;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.samples.Order;
import dev.mailbox.testkit.ManualClock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class DeadLettersTest {

    private final ManualClock clock = new ManualClock();

    @Test
    void afterMaxReceiveCountDeliveriesTheMessageMovesToTheDeadLetterMailbox() {
        Mailbox<Order> deadLetters = InMemoryMailbox.<Order>builder("orders-dlq").timeSource(clock).build();
        Mailbox<Order> orders = InMemoryMailbox.<Order>builder("orders")
                .timeSource(clock)
                .redrivePolicy(RedrivePolicy.of(3, deadLetters))
                .build();
        orders.send(new Order("o-1", "beans", 2), SendOptions.defaults().withAttribute("tenant", "acme"));

        for (int delivery = 1; delivery <= 3; delivery++) {
            Message<Order> m = orders.receive().get(0);
            assertThat(m.deliveryCount()).isEqualTo(delivery);
            m.nack(); // the handler failed: visible again at once
        }

        assertThat(orders.receive()).as("the fourth receive moves it instead of delivering it").isEmpty();
        assertThat(orders.approximateCount()).isZero();
        Message<Order> dead = deadLetters.receive().get(0);
        assertThat(dead.body()).isEqualTo(new Order("o-1", "beans", 2));
        assertThat(dead.attributes()).containsEntry("tenant", "acme");
    }

    @Test
    void redriveMovesDeadLettersBackWithTheirAttributes() {
        Mailbox<Order> deadLetters = InMemoryMailbox.<Order>builder("orders-dlq").timeSource(clock).build();
        Mailbox<Order> orders = InMemoryMailbox.<Order>builder("orders").timeSource(clock).build();
        for (int i = 0; i < 25; i++) {
            deadLetters.send(new Order("o-" + i, "beans", 1), SendOptions.defaults().withAttribute("tenant", "acme"));
        }

        assertThat(Redrive.redrive(deadLetters, orders, 20)).isEqualTo(20);
        assertThat(deadLetters.approximateCount()).isEqualTo(5);
        assertThat(orders.approximateCount()).isEqualTo(20);
        Message<Order> back = orders.receive().get(0);
        assertThat(back.deliveryCount()).as("a new message: its count starts again").isEqualTo(1);
        assertThat(back.attributes()).containsEntry("tenant", "acme");

        clock.advance(Duration.ofMinutes(1));
        assertThat(Redrive.redrive(deadLetters, orders, 100)).isEqualTo(5);
        assertThat(deadLetters.approximateCount()).isZero();
    }
}
