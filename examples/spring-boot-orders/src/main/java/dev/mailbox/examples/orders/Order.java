package dev.mailbox.examples.orders;

/** An order, as posted and as sent to the "orders" mailbox. */
public record Order(String id, String item, int quantity) {
}
