package dev.mailbox.spring.boot.autoconfigure;

/** A body type for the tests. */
public record Order(String id, int quantity) {
}
