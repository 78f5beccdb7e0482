package dev.mailbox.samples.firsttest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.samples.Order;
import dev.mailbox.samples.Quote;
import dev.mailbox.testkit.CollectingMailbox;
import dev.mailbox.testkit.ManualClock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class CheckoutTest {

    private final ManualClock clock = new ManualClock();
    private final InMemoryMailbox<Order> orders = InMemoryMailbox.<Order>builder("orders").timeSource(clock).build();
    private final CollectingMailbox<Quote> quotes = new CollectingMailbox<>("quotes");

    @Test
    void quotesEveryWaitingOrderAndAcknowledgesIt() {
        orders.send(new Order("o-1", "beans", 2));
        orders.send(new Order("o-2", "rice", 1));

        int handled = new Checkout(orders, quotes).handleWaiting();

        assertThat(handled).isEqualTo(2);
        assertThat(quotes.bodies()).containsExactly(new Quote("o-1", 500), new Quote("o-2", 250));
        assertThat(orders.approximateCount()).isZero(); // acknowledged: deleted
    }

    @Test
    void anOrderNobodyAcknowledgesComesBackWhenItsVisibilityTimeoutEnds() {
        orders.send(new Order("o-3", "tea", 1));
        ReceiveOptions thirtySeconds = ReceiveOptions.defaults().withVisibilityTimeout(Duration.ofSeconds(30));

        Message<Order> first = orders.receive(thirtySeconds).get(0);
        assertThat(orders.receive()).isEmpty(); // in flight: invisible to everyone else

        clock.advance(Duration.ofSeconds(30)); // no sleeping: the mailbox reads this clock
        Message<Order> second = orders.receive().get(0);

        assertThat(second.body()).isEqualTo(first.body());
        assertThat(second.deliveryCount()).isEqualTo(2);
        assertThatThrownBy(first::acknowledge) // the first delivery's handle is stale now
                .isInstanceOf(ReceiptHandleExpiredException.class);
        second.acknowledge();
        assertThat(orders.approximateCount()).isZero();
    }
}
