package dev.mailbox.examples.orders;

import dev.mailbox.mainloop.MainLoopClient;
import dev.mailbox.spring.boot.MailboxListener;
import org.springframework.stereotype.Component;

@Component
class Fulfilment {

    private final MainLoopClient<PriceRequest, Quote> pricing;
    private final OrderBook book;

    Fulfilment(MainLoopClient<PriceRequest, Quote> pricing, OrderBook book) {
        this.pricing = pricing;
        this.book = book;
    }

    @MailboxListener("orders")
    void fulfil(Order order) {
        // acknowledged when this returns; an exception puts the order back, and after
        // five deliveries it moves to orders-dlq (see application.yml)
        // waits mailbox.mailboxes.pricing.client.timeout at most (see application.yml)
        Quote quote = pricing.callAndWait(new PriceRequest(order.item(), order.quantity()));
        book.put(order.id(), quote);
    }
}
