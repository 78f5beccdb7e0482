package dev.mailbox.examples.orders;

/** What the pricing handler answers, in cents. */
public record Quote(String item, int quantity, long totalCents) {
}
