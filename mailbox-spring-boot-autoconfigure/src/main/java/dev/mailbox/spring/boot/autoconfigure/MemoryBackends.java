package dev.mailbox.spring.boot.autoconfigure;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.inmemory.InMemoryMailbox;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Mailboxes in this JVM. A mailbox known by name at run time is one object per name, so a MainLoop's reply
 * and its client's response mailbox meet; it is handed out behind a view that does not close it, and closed
 * with the backend.
 */
final class MemoryBackends implements Backends {

    private final ConcurrentHashMap<String, InMemoryMailbox<?>> byName = new ConcurrentHashMap<>();

    @Override
    public <T> Mailbox<T> declared(MailboxDeclaration d, Codec<T> codec, @Nullable RedrivePolicy redrive) {
        InMemoryMailbox.Builder<T> b = InMemoryMailbox.builder(d.name(), codec);
        if (d.spec().getCapacity() > 0) {
            b.capacity(d.spec().getCapacity());
        }
        if (d.spec().getMaxMessageBytes() != null) {
            b.maxMessageBytes(d.spec().getMaxMessageBytes());
        }
        if (redrive != null) {
            b.redrivePolicy(redrive);
        }
        return b.build();
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> Mailbox<T> dynamic(String name, Codec<T> codec) {
        InMemoryMailbox<T> shared = (InMemoryMailbox<T>) byName.computeIfAbsent(name,
                n -> InMemoryMailbox.builder(n, codec).build());
        return MailboxView.unclosable(shared);
    }

    @Override
    public String describe() {
        return "memory";
    }

    @Override
    public void close() {
        byName.values().forEach(InMemoryMailbox::close);
        byName.clear();
    }
}
