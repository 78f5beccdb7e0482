package dev.mailbox.spring.boot.autoconfigure;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.coordination.RemoteMailbox;
import org.jspecify.annotations.Nullable;

/**
 * Mailboxes hosted on mailbox nodes, reached through any of {@code mailbox.node.addresses}. The hosting
 * node's mailbox has its own capacity and redrive policy, so they cannot be set here.
 */
final class NodeBackends implements Backends {

    private final MailboxProperties.Node properties;

    NodeBackends(MailboxProperties.Node properties) {
        if (properties.getAddresses().isEmpty()) {
            throw new IllegalStateException("a node mailbox needs mailbox.node.addresses (host:port of mailbox nodes)");
        }
        this.properties = properties;
    }

    @Override
    public <T> Mailbox<T> declared(MailboxDeclaration d, Codec<T> codec, @Nullable RedrivePolicy redrive) {
        if (redrive != null || d.spec().getCapacity() > 0) {
            throw new IllegalStateException("mailbox '" + d.name() + "' is hosted on a mailbox node, which keeps its"
                    + " capacity and redrive policy: remove them from mailbox.mailboxes." + d.name());
        }
        if (d.spec().isFifo()) {
            throw new IllegalStateException("mailbox '" + d.name() + "' is hosted on a mailbox node, where it is FIFO"
                    + " exactly when the node hosts a FIFO mailbox (an id ending in .fifo on a node's memory or SQS"
                    + " backend): remove fifo and content-based-deduplication from mailbox.mailboxes." + d.name());
        }
        return dynamic(d.name(), codec);
    }

    @Override
    public <T> Mailbox<T> dynamic(String name, Codec<T> codec) {
        return RemoteMailbox.builder(name, codec).nodes(properties.getAddresses())
                .callTimeout(properties.getCallTimeout()).routeWait(properties.getRouteWait()).build();
    }

    @Override
    public String describe() {
        return "node " + String.join(",", properties.getAddresses());
    }

    @Override
    public void close() {
        // each RemoteMailbox closes its own channel
    }
}
