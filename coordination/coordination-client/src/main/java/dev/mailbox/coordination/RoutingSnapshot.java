package dev.mailbox.coordination;

import java.util.List;

/**
 * The routing table at one revision.
 *
 * @param revision the log index of its last change
 * @param routes   a route per mailbox with an active lease, by mailbox id
 */
public record RoutingSnapshot(long revision, List<Route> routes) {

    /** Copies the routes. */
    public RoutingSnapshot {
        routes = List.copyOf(routes);
    }
}
