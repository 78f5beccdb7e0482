package dev.mailbox.spring.boot.test;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Mailbox;
import dev.mailbox.spring.boot.test.ShopApplication.Order;
import dev.mailbox.spring.boot.test.ShopApplication.Shipment;
import dev.mailbox.testkit.CollectingMailbox;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/** The application's Redis and SQS mailboxes become in-memory ones that a test can inject as CollectingMailbox. */
@MailboxTest(properties = {
        "mailbox.mailboxes.orders.backend=redis",
        "mailbox.mailboxes.orders.redis.hash-tag=shop",
        "mailbox.mailboxes.shipments.backend=sqs",
        "mailbox.mailboxes.shipments.type=dev.mailbox.spring.boot.test.ShopApplication$Shipment",
        "mailbox.coordination.enabled=true"})
class MailboxTestTest {

    @Autowired
    CollectingMailbox<Order> orders;
    @Autowired
    CollectingMailbox<Shipment> shipments;
    @Autowired
    Mailbox<Shipment> sameShipments;
    @Autowired
    ShopApplication.Fulfilment fulfilment;

    /** No Redis, SQS or coordinator runs here: every call below would fail on the backends the properties name. */
    @Test
    void theListenerRunsOnInMemoryMailboxesAndItsSendsAreRecorded() {
        assertThat(sameShipments).isSameAs(shipments);
        orders.send(new Order("book", 1));
        assertThat(shipments.awaitSent(1, Duration.ofSeconds(10))).containsExactly(new Shipment("book"));
        assertThat(orders.bodies()).containsExactly(new Order("book", 1));
        assertThat(fulfilment.seen).containsExactly(new Order("book", 1));
    }
}
