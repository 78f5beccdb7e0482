package dev.mailbox.samples;

/**
 * An order, the body every sample sends.
 *
 * @param id       the order's id
 * @param item     what was ordered
 * @param quantity how many
 */
public record Order(String id, String item, int quantity) {
}
