package dev.mailbox.testkit;

import dev.mailbox.api.Limits;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxCapabilities;
import dev.mailbox.api.MailboxClosedException;
import dev.mailbox.api.MailboxUnavailableException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A mailbox that drops every message: sends succeed (and return fresh ids), receives return nothing,
 * counts are zero. A receive with a wait time waits for it, as on an empty mailbox, unless the mailbox
 * is closed. Arguments are validated like any mailbox's. Thread-safe.
 *
 * @param <T> the body type
 */
public final class NullMailbox<T> implements Mailbox<T> {

    private static final MailboxCapabilities CAPABILITIES = MailboxCapabilities.builder()
            .exactCount(true).fifo(true).detectsStaleAcknowledge(true).build();

    private final String name;
    private final CountDownLatch closed = new CountDownLatch(1);

    /**
     * @param name the mailbox's name
     */
    public NullMailbox(String name) {
        this.name = Objects.requireNonNull(name, "name");
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String send(T body, SendOptions options) {
        Objects.requireNonNull(body, "body");
        Objects.requireNonNull(options, "options");
        ensureOpen();
        return UUID.randomUUID().toString();
    }

    @Override
    public List<String> sendBatch(List<? extends T> bodies, SendOptions options) {
        Limits.requireBatchSize(bodies.size(), "batch size");
        List<String> ids = new ArrayList<>(bodies.size());
        for (T body : bodies) {
            ids.add(send(body, options));
        }
        return ids;
    }

    @Override
    public List<Message<T>> receive(ReceiveOptions options) {
        Objects.requireNonNull(options, "options");
        ensureOpen();
        long wait = options.waitTime().toNanos();
        if (wait > 0) {
            try {
                closed.await(wait, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new MailboxUnavailableException("receive on mailbox '" + name + "' was interrupted",
                        false, e);
            }
        }
        return List.of();
    }

    @Override
    public long purge() {
        ensureOpen();
        return 0;
    }

    @Override
    public long approximateCount() {
        ensureOpen();
        return 0;
    }

    @Override
    public MailboxCapabilities capabilities() {
        return CAPABILITIES;
    }

    @Override
    public void close() {
        closed.countDown();
    }

    private void ensureOpen() {
        if (closed.getCount() == 0) {
            throw new MailboxClosedException(name);
        }
    }

    @Override
    public String toString() {
        return "NullMailbox[" + name + "]";
    }
}
