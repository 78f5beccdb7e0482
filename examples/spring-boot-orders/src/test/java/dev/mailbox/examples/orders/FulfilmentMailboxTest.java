package dev.mailbox.examples.orders;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.spring.boot.test.MailboxTest;
import dev.mailbox.testkit.CollectingMailbox;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/** The same application with no Redis at all: @MailboxTest puts every mailbox in memory. */
@MailboxTest
class FulfilmentMailboxTest {

    @Autowired
    CollectingMailbox<Order> orders;
    @Autowired
    OrderBook book;

    @Test
    void anOrderIsPriced() throws InterruptedException {
        orders.send(new Order("o-1", "lamp", 2));
        long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (book.get("o-1") == null && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        assertThat(book.get("o-1")).isEqualTo(new Quote("lamp", 2, 580));
    }
}
