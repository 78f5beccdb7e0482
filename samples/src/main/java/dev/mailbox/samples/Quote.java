package dev.mailbox.samples;

/**
 * A price for an {@link Order}, what the request/response samples answer with.
 *
 * @param orderId    the order's id
 * @param totalCents the price of the whole order, in cents
 */
public record Quote(String orderId, long totalCents) {

    /** The price of one of anything, in cents: the samples' whole catalogue. */
    public static final long UNIT_PRICE_CENTS = 250;

    /**
     * @param order an order
     * @return its price
     * @throws IllegalArgumentException for an order of fewer than one item
     */
    public static Quote price(Order order) {
        if (order.quantity() < 1) {
            throw new IllegalArgumentException("quantity must be at least 1, was " + order.quantity());
        }
        return new Quote(order.id(), order.quantity() * UNIT_PRICE_CENTS);
    }
}
