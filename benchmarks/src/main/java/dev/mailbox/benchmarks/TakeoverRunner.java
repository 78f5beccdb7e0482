package dev.mailbox.benchmarks;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.LeasedRunner;
import dev.mailbox.coordination.RemoteMailbox;
import dev.mailbox.coordination.server.MailboxNode;
import dev.mailbox.mainloop.MainLoop;
import dev.mailbox.mainloop.MainLoopCodecs;
import dev.mailbox.mainloop.MainLoopRequest;
import dev.mailbox.mainloop.MainLoopResult;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * Node A of {@link NodeHarness}'s takeover measurement, in a JVM of its own so that it can be SIGKILLed
 * (no release, no last renewal): a mailbox node on the shared Redis and a leased echo runner attached to
 * it. Prints {@code ACQUIRED <epoch>} once the runner holds the lease.
 *
 * <pre>java -cp benchmarks.jar dev.mailbox.benchmarks.TakeoverRunner REDIS_URI COORDINATOR NODE_ID RUNNER_ID MAILBOX</pre>
 */
public final class TakeoverRunner {

    private TakeoverRunner() {
    }

    /**
     * @param args redis URI, coordinator endpoint, node id, runner id, mailbox id
     * @throws InterruptedException never: it runs until killed
     */
    public static void main(String[] args) throws InterruptedException {
        LibraryLog.toFile("takeover-runner");
        CoordinationClient client = CoordinationClient.builder().endpoints(List.of(args[1])).build();
        MailboxNode node = MailboxNode.builder(args[2]).coordinator(client)
                .backend(new NodeHarness.RedisBackend(NodeHarness.redis(args[0]))).start();
        echoRunner(client, node, args[4], args[3], Duration.ZERO, new LeasedRunner.Listener() {
            @Override
            public void acquired(Lease lease) {
                System.out.println("ACQUIRED " + lease.epoch());
                System.out.flush();
            }
        });
        new CountDownLatch(1).await();
    }

    /**
     * Starts a leased runner on a node that answers each request with {@code <runnerId>:<body>}; it
     * reaches the mailbox (fenced under its lease) and the reply mailboxes through that node.
     *
     * @param ttl the lease TTL the runner asks for; zero for the namespace's policy
     * @return closes the runner (releasing its lease), its loop and its mailboxes
     */
    static AutoCloseable echoRunner(CoordinationClient client, MailboxNode node, String mailboxId, String runnerId,
                                    Duration ttl, LeasedRunner.Listener listener) {
        RemoteMailbox<MainLoopRequest<String>> requests = RemoteMailbox.builder(mailboxId,
                MainLoopCodecs.requests(String.class)).node(node.address()).build();
        MainLoop<String, String> loop = MainLoop.<String, String>builder(requests, r -> runnerId + ":" + r.body())
                .replyTo(name -> RemoteMailbox.<MainLoopResult<String>>builder(name, MainLoopCodecs.results(String.class))
                        .node(node.address()).build())
                .waitTime(Duration.ofSeconds(1)).build();
        LeasedRunner runner = LeasedRunner.builder(client, loop, new LeaseHolder(runnerId, node.id(), node.address()))
                .ttl(ttl).listener(listener).build().start();
        return () -> {
            runner.close();
            loop.close(); // LeasedRunner.close() only shuts the loop down: its reply mailboxes stay open
            requests.close();
        };
    }
}
