package dev.mailbox.examples.orders;

/** What the pricing handler is asked. */
public record PriceRequest(String item, int quantity) {
}
