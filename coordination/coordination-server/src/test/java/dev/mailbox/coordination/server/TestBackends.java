package dev.mailbox.coordination.server;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.inmemory.InMemoryMailbox;

/** Backends for the node tests. */
final class TestBackends {

    private TestBackends() {
    }

    /**
     * A node-local backend, as {@code mailboxctl node start --backend memory} is: each mailbox it opens is a new
     * in-memory one whose messages live in that object, so the node may neither share it nor close it when idle;
     * FIFO where its name ends with {@code .fifo}.
     */
    static MailboxBackend nodeLocalMemory() {
        return new MailboxBackend() {
            @Override
            public Mailbox<byte[]> open(String mailboxId) {
                InMemoryMailbox.Builder<byte[]> b = InMemoryMailbox.builder(mailboxId, Codec.bytes());
                if (dev.mailbox.coordination.CoordinationLimits.isFifoMailbox(mailboxId)) {
                    b.fifo(dev.mailbox.api.FifoOptions.defaults());
                }
                return b.build();
            }

            @Override
            public boolean shared() {
                return false;
            }
        };
    }
}
