package dev.mailbox.samples.cluster;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.LeasedRunner;
import dev.mailbox.coordination.RemoteMailbox;
import dev.mailbox.mainloop.MainLoop;
import dev.mailbox.mainloop.MainLoopClient;
import dev.mailbox.mainloop.MainLoopCodecs;
import dev.mailbox.mainloop.RequestHandler;
import dev.mailbox.samples.Order;
import dev.mailbox.samples.Quote;

/**
 * Pricing behind a cluster: runners that serve the {@code pricing} mailbox only while they hold its lease, and
 * callers that reach it through any mailbox node. Links {@code coordination-client} and {@code mainloop} only.
 */
public final class CoordinatedPricing {

    private CoordinatedPricing() {
    }

    /**
     * A runner on one node: it waits for the lease of {@code pricing}, serves it while it holds the lease, and
     * stops receiving the moment it loses it.
     *
     * @param nodeAddress the host:port of the mailbox node this runner works through
     */
    public static LeasedRunner runner(CoordinationClient coordinator, String runnerId, String nodeId, String nodeAddress) {
        MainLoop<Order, Quote> loop = MainLoop.builder(
                        RemoteMailbox.builder("pricing", MainLoopCodecs.requests(Order.class)).node(nodeAddress).build(),
                        RequestHandler.ofBody(Quote::price))
                .replyTo(name -> RemoteMailbox.builder(name, MainLoopCodecs.results(Quote.class)).node(nodeAddress).build())
                .build();
        return LeasedRunner.builder(coordinator, loop, new LeaseHolder(runnerId, nodeId, nodeAddress))
                .build()
                .start();
    }

    /** A caller, through any node: the node forwards each call to the node whose runner holds the lease. */
    public static MainLoopClient<Order, Quote> caller(String nodeAddress) {
        return MainLoopClient.builder(
                        RemoteMailbox.builder("pricing", MainLoopCodecs.requests(Order.class)).node(nodeAddress).build(),
                        name -> RemoteMailbox.builder(name, MainLoopCodecs.results(Quote.class)).node(nodeAddress).build())
                .build();
    }
}
