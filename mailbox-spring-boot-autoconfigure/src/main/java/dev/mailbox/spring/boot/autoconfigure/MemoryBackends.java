package dev.mailbox.spring.boot.autoconfigure;

import dev.mailbox.api.Codec;
import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.inmemory.InMemoryMailbox;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Mailboxes in this JVM. A mailbox known by name at run time is one object per name, so a MainLoop's reply
 * and its client's response mailbox meet; it is handed out behind a view that does not close it, and closed
 * with the backend. A name that a declared mailbox has is that mailbox, seen with the caller's body type (a
 * reply-to naming a declared mailbox reaches its listener, as on Redis).
 */
final class MemoryBackends implements Backends {

    private final ConcurrentHashMap<String, InMemoryMailbox<?>> byName = new ConcurrentHashMap<>();
    /** The declared ones with their codecs: a name opened at run time may be one of them (a reply-to). */
    private final ConcurrentHashMap<String, Declared<?>> declared = new ConcurrentHashMap<>();

    private record Declared<T>(Mailbox<T> mailbox, Codec<T> codec) {
        <V> Mailbox<V> as(Codec<V> codec) {
            return new RecodingMailbox<>(mailbox, codec, this.codec);
        }
    }

    @Override
    public <T> Mailbox<T> declared(MailboxDeclaration d, Codec<T> codec, @Nullable RedrivePolicy redrive) {
        Mailbox<T> m = build(d, codec, redrive);
        declared.put(d.name(), new Declared<>(m, codec));
        return m;
    }

    private static <T> Mailbox<T> build(MailboxDeclaration d, Codec<T> codec, @Nullable RedrivePolicy redrive) {
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
        FifoOptions fifo = d.fifo(); // built from the properties on each call
        if (fifo != null) {
            b.fifo(fifo);
        }
        return b.build();
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> Mailbox<T> dynamic(String name, Codec<T> codec) {
        Declared<?> known = declared.get(name);
        if (known != null) {
            return known.as(codec);
        }
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
        declared.clear(); // closed by the factory, their owner
    }
}
