package dev.mailbox.cli;

import dev.mailbox.api.Mailbox;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.LeasedRunner;
import dev.mailbox.coordination.RemoteMailbox;
import dev.mailbox.mainloop.MainLoop;
import dev.mailbox.mainloop.MainLoopCodecs;
import dev.mailbox.mainloop.MainLoopRequest;
import dev.mailbox.mainloop.MainLoopResult;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * A leased MainLoop runner that answers text requests: it takes the mailbox's lease (waiting to take
 * over while another runner holds it), consumes through a mailbox node, and releases on Ctrl-C.
 */
@Command(name = "runner", mixinStandardHelpOptions = true,
        description = "Run a leased MainLoop runner that answers each text request with 'handled by ID: BODY'.")
final class RunnerCommand implements Callable<Integer> {

    @Spec
    CommandLine.Model.CommandSpec spec;
    @Mixin
    CoordinatorOptions coordinator;
    @Option(names = "--id", required = true, description = "this runner's id")
    String id;
    @Option(names = "--mailbox", required = true, description = "the request mailbox, e.g. orders@node-a")
    String mailbox;
    @Option(names = "--node", required = true, description = "address of the mailbox node that hosts it")
    String node;
    @Option(names = "--node-id", required = true, description = "that node's id")
    String nodeId;

    @Override
    public Integer call() throws InterruptedException {
        PrintWriter out = spec.commandLine().getOut();
        CoordinationClient client = coordinator.client();
        Mailbox<MainLoopRequest<String>> requests = RemoteMailbox.builder(mailbox, MainLoopCodecs.requests(String.class))
                .node(node).build();
        MainLoop<String, String> loop = MainLoop.<String, String>builder(requests, r -> "handled by " + id + ": " + r.body())
                .replyTo(name -> (Mailbox<MainLoopResult<String>>) RemoteMailbox.builder(name,
                        MainLoopCodecs.results(String.class)).node(node).build())
                .waitTime(Duration.ofSeconds(1)).shutdownGrace(Duration.ofSeconds(2)).build();
        LeasedRunner runner = LeasedRunner.builder(client, loop, new LeaseHolder(id, nodeId, node))
                .listener(new LeasedRunner.Listener() {
                    @Override
                    public void acquired(Lease lease) {
                        say(out, "acquired the lease of " + lease.mailboxId() + " (lease " + lease.leaseId() + ", epoch "
                                + lease.epoch() + "); consuming");
                    }

                    @Override
                    public void lost(Lease lease, String reason) {
                        say(out, "lost lease " + lease.leaseId() + ": " + reason + "; stopped consuming");
                    }

                    @Override
                    public void released(Lease lease) {
                        say(out, "released lease " + lease.leaseId());
                    }
                }).build();
        say(out, "waiting for the lease of " + mailbox);
        runner.start();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            runner.close();
            client.close();
            stopped.countDown();
        }));
        stopped.await();
        return 0;
    }

    private static void say(PrintWriter out, String line) {
        synchronized (out) {
            out.println(line);
            out.flush();
        }
    }
}
