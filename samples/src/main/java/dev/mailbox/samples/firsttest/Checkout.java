package dev.mailbox.samples.firsttest;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.samples.Order;
import dev.mailbox.samples.Quote;

/** Takes the orders waiting in one mailbox and sends a quote for each to another. */
public final class Checkout {

    private final Mailbox<Order> orders;
    private final Mailbox<Quote> quotes;

    public Checkout(Mailbox<Order> orders, Mailbox<Quote> quotes) {
        this.orders = orders;
        this.quotes = quotes;
    }

    /** @return how many orders it handled */
    public int handleWaiting() {
        int handled = 0;
        for (Message<Order> m : orders.receive(ReceiveOptions.defaults().withMaxMessages(10))) {
            quotes.send(Quote.price(m.body()));
            m.acknowledge(); // only once the quote is sent: a crash before this line redelivers the order
            handled++;
        }
        return handled;
    }
}
