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
import dev.mailbox.mainloop.RequestHandler;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
 * over while another runner holds it), consumes through a mailbox node under the lease's epoch, and
 * releases on Ctrl-C. With {@code --exec} each request runs a command (any language); without it, it
 * answers "handled by ID: BODY", for demos.
 */
@Command(name = "runner", mixinStandardHelpOptions = true,
        description = {"Run a leased MainLoop runner for text requests, through a mailbox node.",
                "With --exec 'COMMAND': run COMMAND (with /bin/sh -c) once per request, the request body on its stdin; "
                        + "its stdout is the reply, a non-zero exit is an error result (stderr in the message), retried "
                        + "and dead-lettered like any failure. The environment has MAILBOX_REQUEST_ID and MAILBOX_ID.",
                "Without --exec it answers each request with 'handled by ID: BODY'."},
        footer = {"  mailboxctl runner --id r1 --mailbox orders@node-a --node 127.0.0.1:9000 \\",
                "      --node-id node-a",
                "  mailboxctl runner --id r2 --mailbox orders@node-a --node 127.0.0.1:9000 \\",
                "      --node-id node-a --exec 'tr a-z A-Z' --concurrency 4"})
final class RunnerCommand implements Callable<Integer> {

    /** The most stdout a command may write as its reply, and the most stderr kept for its error. */
    static final int MAX_REPLY_BYTES = 1024 * 1024;
    private static final int MAX_STDERR_BYTES = 4 * 1024;

    @Spec
    CommandLine.Model.CommandSpec spec;
    @Mixin
    CoordinatorOptions coordinator;
    @Option(names = "--id", required = true, description = "this runner's id (required)")
    String id;
    @Option(names = "--mailbox", required = true, description = "the request mailbox, e.g. orders@node-a (required)")
    String mailbox;
    @Option(names = "--node", required = true, description = "address of the mailbox node that hosts it (required)")
    String node;
    @Option(names = "--node-id", required = true, description = "that node's id (required)")
    String nodeId;
    @Option(names = "--exec", description = "a command to run per request (see above; default: none, answer "
            + "'handled by ID: BODY')")
    String exec;
    @Option(names = "--exec-timeout-ms", defaultValue = "60000",
            description = "kill a command that runs longer, failing its request (default: ${DEFAULT-VALUE})")
    long execTimeoutMillis;
    @Option(names = "--concurrency", defaultValue = "1", description = "requests run at once (default: ${DEFAULT-VALUE})")
    int concurrency;
    @Option(names = "--visibility-ms", defaultValue = "30000", description = "how long a request taken by this "
            + "runner stays invisible to others; the loop extends it while the request runs (default: ${DEFAULT-VALUE})")
    long visibilityMillis;

    @Override
    public Integer call() throws InterruptedException {
        if (concurrency < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--concurrency must be 1 or more, was "
                    + concurrency);
        }
        if (execTimeoutMillis < 1) {
            // waitFor would give up at once: every request would fail as timed out, be retried and dead-lettered
            throw new CommandLine.ParameterException(spec.commandLine(), "--exec-timeout-ms must be 1 or more, was "
                    + execTimeoutMillis);
        }
        PrintWriter out = spec.commandLine().getOut();
        CoordinationClient client = coordinator.client();
        Mailbox<MainLoopRequest<String>> requests = RemoteMailbox.builder(mailbox, MainLoopCodecs.requests(String.class))
                .node(node).security(coordinator.security.clientSecurity()).build();
        RequestHandler<String, String> handler = exec == null ? r -> "handled by " + id + ": " + r.body()
                : r -> run(exec, r, mailbox, execTimeoutMillis);
        MainLoop<String, String> loop = MainLoop.<String, String>builder(requests, handler).concurrency(concurrency)
                .replyTo(name -> (Mailbox<MainLoopResult<String>>) RemoteMailbox.builder(name,
                        MainLoopCodecs.results(String.class)).node(node).security(coordinator.security.clientSecurity())
                        .build())
                .visibilityTimeout(Duration.ofMillis(visibilityMillis))
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

    /**
     * Runs the command for one request.
     *
     * @return its stdout, as UTF-8
     * @throws IllegalStateException if it exits non-zero (with its stderr), runs too long, or writes too much
     * @throws InterruptedException  if the loop interrupts the handler (deadline, shutdown): the command is killed
     */
    static String run(String command, MainLoopRequest<String> request, String mailbox, long timeoutMillis)
            throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder("/bin/sh", "-c", command);
        pb.environment().put("MAILBOX_REQUEST_ID", request.requestId());
        pb.environment().put("MAILBOX_ID", mailbox);
        Process p = pb.start();
        try {
            // stdout and stderr are drained while stdin is written, so a command that answers before it has
            // read everything (or never reads) cannot deadlock on a full pipe
            CompletableFuture<byte[]> stdout = drain(p.getInputStream(), MAX_REPLY_BYTES + 1);
            CompletableFuture<byte[]> stderr = drain(p.getErrorStream(), MAX_STDERR_BYTES);
            try (OutputStream in = p.getOutputStream()) {
                in.write(request.body().getBytes(StandardCharsets.UTF_8));
            } catch (IOException closedEarly) {
                // the command did not read its input: its exit status decides
            }
            if (!p.waitFor(timeoutMillis, TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("command timed out after " + timeoutMillis + " ms: " + command);
            }
            byte[] reply = stdout.join();
            if (p.exitValue() != 0) {
                throw new IllegalStateException("command exited with status " + p.exitValue() + ": "
                        + new String(stderr.join(), StandardCharsets.UTF_8).strip());
            }
            if (reply.length > MAX_REPLY_BYTES) {
                throw new IllegalStateException("command wrote more than " + MAX_REPLY_BYTES + " bytes of reply");
            }
            return new String(reply, StandardCharsets.UTF_8);
        } finally {
            p.destroyForcibly(); // no-op once it exited; kills it on a timeout or an interrupt
        }
    }

    private static CompletableFuture<byte[]> drain(InputStream in, int limit) {
        return CompletableFuture.supplyAsync(() -> {
            try (in) {
                java.io.ByteArrayOutputStream kept = new java.io.ByteArrayOutputStream();
                byte[] buf = new byte[8192];
                for (int n; (n = in.read(buf)) >= 0; ) {
                    kept.write(buf, 0, Math.max(0, Math.min(n, limit - kept.size())));
                }
                return kept.toByteArray();
            } catch (IOException e) {
                return new byte[0];
            }
        }, DRAINERS);
    }

    /** Threads that read commands' output; daemons, so they never hold the process open. */
    private static final java.util.concurrent.ExecutorService DRAINERS = java.util.concurrent.Executors
            .newCachedThreadPool(r -> {
                Thread t = new Thread(r, "runner-exec-output");
                t.setDaemon(true);
                return t;
            });

    private static void say(PrintWriter out, String line) {
        synchronized (out) {
            out.println(line);
            out.flush();
        }
    }
}
