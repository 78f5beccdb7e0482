package dev.mailbox.mainloop;

import dev.mailbox.api.Codec;

/** The typed bodies the MainLoop tests exchange. */
final class Shop {

    private Shop() {
    }

    /** A request: how many of which item. */
    public record Order(String item, int quantity) {
    }

    /** A response: the price of an order. */
    public record Quote(String item, int quantity, long cents) {
    }

    static final Codec<MainLoopRequest<Order>> REQUESTS = MainLoopCodecs.requests(Order.class);
    static final Codec<MainLoopResult<Quote>> RESULTS = MainLoopCodecs.results(Quote.class);
    static final Codec<DeadLetter<Order>> DEAD_LETTERS = MainLoopCodecs.deadLetters(Order.class);

    static Quote price(Order order) {
        if (order.quantity() < 0) {
            throw new IllegalArgumentException("quantity must not be negative: " + order.quantity());
        }
        return new Quote(order.item(), order.quantity(), 125L * order.quantity());
    }
}
