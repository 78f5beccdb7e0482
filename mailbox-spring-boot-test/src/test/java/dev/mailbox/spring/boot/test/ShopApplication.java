package dev.mailbox.spring.boot.test;

import dev.mailbox.api.Mailbox;
import dev.mailbox.spring.boot.MailboxListener;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.stereotype.Component;

/** An application whose mailboxes are on Redis and SQS, which no test here starts. */
@SpringBootApplication
public class ShopApplication {

    /** An order. */
    public record Order(String item, int quantity) {
    }

    /** A shipment, sent for each order handled. */
    public record Shipment(String item) {
    }

    /** Turns orders into shipments. */
    @Component
    public static class Fulfilment {
        private final Mailbox<Shipment> shipments;
        final List<Order> seen = new CopyOnWriteArrayList<>();

        public Fulfilment(Mailbox<Shipment> shipments) {
            this.shipments = shipments;
        }

        @MailboxListener("orders")
        void on(Order order) {
            seen.add(order);
            shipments.send(new Shipment(order.item()));
        }
    }
}
