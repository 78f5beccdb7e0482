package dev.mailbox.samples.cluster;

import dev.mailbox.api.Mailbox;
import dev.mailbox.coordination.RemoteMailbox;
import dev.mailbox.json.JsonCodec;
import dev.mailbox.samples.Order;

/**
 * A plain mailbox through a node, with no runner: whoever sends and whoever receives use the same codec (here
 * JSON), as with any other mailbox.
 */
public final class Audit {

    private Audit() {
    }

    /** @return the {@code audit} mailbox, reached through the node at {@code nodeAddress} */
    public static Mailbox<Order> mailbox(String nodeAddress) {
        return RemoteMailbox.builder("audit", JsonCodec.of(Order.class)).node(nodeAddress).build();
    }
}
