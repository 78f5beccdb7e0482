package dev.mailbox.coordination.server;

import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.LeasedRunner;
import dev.mailbox.coordination.RemoteMailbox;
import dev.mailbox.api.Mailbox;
import dev.mailbox.mainloop.MainLoop;
import dev.mailbox.mainloop.MainLoopCodecs;
import dev.mailbox.mainloop.MainLoopRequest;
import dev.mailbox.mainloop.MainLoopResult;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;

/**
 * A leased runner in its own JVM, so tests can kill it for real: it answers each request with
 * {@code <runnerId>:<body>} and prints ACQUIRED / LOST lines on stdout.
 *
 * <p>Arguments: runnerId nodeId nodeAddress mailboxId coordinatorEndpoints(comma-separated).
 */
public final class RunnerMain {

    private RunnerMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        String runnerId = args[0];
        String nodeId = args[1];
        String nodeAddress = args[2];
        String mailboxId = args[3];
        CoordinationClient client = CoordinationClient.builder()
                .endpoints(Arrays.asList(args[4].split(","))).callTimeout(Duration.ofSeconds(2)).build();
        Mailbox<MainLoopRequest<String>> requests = RemoteMailbox.builder(mailboxId, MainLoopCodecs.requests(String.class))
                .node(nodeAddress).build();
        MainLoop<String, String> loop = MainLoop.<String, String>builder(requests, r -> runnerId + ":" + r.body())
                .replyTo(name -> (Mailbox<MainLoopResult<String>>) RemoteMailbox.builder(name,
                        MainLoopCodecs.results(String.class)).node(nodeAddress).build())
                .waitTime(Duration.ofSeconds(1)).concurrency(4).build();
        LeasedRunner runner = LeasedRunner.builder(client, loop, new LeaseHolder(runnerId, nodeId, nodeAddress))
                .listener(new LeasedRunner.Listener() {
                    @Override
                    public void acquired(Lease lease) {
                        System.out.println("ACQUIRED " + lease.leaseId() + " " + lease.epoch());
                        System.out.flush();
                    }

                    @Override
                    public void lost(Lease lease, String reason) {
                        System.out.println("LOST " + lease.leaseId() + " " + reason);
                        System.out.flush();
                    }
                }).build().start();
        Runtime.getRuntime().addShutdownHook(new Thread(runner::close));
        new CountDownLatch(1).await();
    }
}
