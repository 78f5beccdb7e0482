package dev.mailbox.cli;

import dev.mailbox.coordination.server.CoordinatorNode;
import dev.mailbox.coordination.server.MailboxBackend;
import dev.mailbox.coordination.server.MailboxNode;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * What a process tells its probes ({@code /health/live}, {@code /health/ready} on its metrics port), each answer a
 * verdict and the checks behind it.
 *
 * <ul>
 *   <li><b>Live</b>: the process is worth keeping. A coordinator that hits a fatal fault (an {@link Error}, its Raft
 *       server stopping by itself) exits so that its supervisor restarts it, so a live process is one that answers;
 *       a closed node is not live.</li>
 *   <li><b>Ready</b>: the process should be sent traffic. A coordinator: it serves (no fault, such as a full disk)
 *       and knows a leader. A mailbox node: its registration is fresh ({@link MailboxNode#registered()}) and its
 *       backend answers ({@link MailboxBackend#probe()}).</li>
 * </ul>
 */
interface ProcessHealth {

    /**
     * @param checks filled with what was checked, name to finding, in the order checked
     * @return whether the process is live
     */
    boolean live(Map<String, String> checks);

    /**
     * @param checks filled with what was checked, name to finding, in the order checked
     * @return whether the process is ready
     */
    boolean ready(Map<String, String> checks);

    /**
     * @param node a coordinator
     * @return its health
     */
    static ProcessHealth of(CoordinatorNode node) {
        return new ProcessHealth() {
            @Override
            public boolean live(Map<String, String> checks) {
                checks.put("role", node.role());
                return true;
            }

            @Override
            public boolean ready(Map<String, String> checks) {
                String fault = node.fault();
                String leader = node.leaderId();
                checks.put("role", node.role());
                checks.put("fault", fault == null ? "none" : fault);
                checks.put("leader", leader == null ? "none known" : leader);
                return fault == null && leader != null;
            }
        };
    }

    /**
     * @param node    a mailbox node
     * @param backend where its mailboxes live
     * @return its health; the backend is probed at most once a {@link BackendProbe#EVERY} however often asked
     */
    static ProcessHealth of(MailboxNode node, MailboxBackend backend) {
        BackendProbe probe = new BackendProbe(backend);
        return new ProcessHealth() {
            @Override
            public boolean live(Map<String, String> checks) {
                boolean open = !node.isClosed();
                checks.put("node", open ? "serving" : "closed");
                return open;
            }

            @Override
            public boolean ready(Map<String, String> checks) {
                boolean registered = node.registered();
                checks.put("registration", registered ? "fresh" : "missing or lapsed");
                String problem = probe.problem();
                checks.put("backend", problem == null ? "answers" : problem);
                return registered && problem == null && !node.isClosed();
            }
        };
    }

    /**
     * Probes a backend for readiness without letting the probes' callers drive load onto it or pile up behind it: one
     * probe at a time on a thread of its own, its answer reused for {@link #EVERY}; a caller waits for a probe under
     * way only until {@link #TIMEOUT} after it started, and a probe still running then counts as a failure.
     */
    final class BackendProbe {
        static final Duration EVERY = Duration.ofSeconds(1);
        static final Duration TIMEOUT = Duration.ofSeconds(2);

        private final MailboxBackend backend;
        private final ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "mailbox-health-probe");
            t.setDaemon(true);
            return t;
        });
        // guarded by this
        private @Nullable Future<?> running;
        private long startedNanos;
        private long answeredNanos;
        private boolean answered;
        private @Nullable String problem;

        BackendProbe(MailboxBackend backend) {
            this.backend = backend;
        }

        /** @return null if the backend answered its last probe, else why not */
        @Nullable String problem() {
            Future<?> f;
            long waitNanos;
            synchronized (this) {
                long now = System.nanoTime();
                if (running == null && (!answered || now - answeredNanos >= EVERY.toNanos())) {
                    startedNanos = now;
                    running = thread.submit(this::probeOnce);
                }
                if (running == null) {
                    return problem;
                }
                f = running;
                waitNanos = startedNanos + TIMEOUT.toNanos() - now;
            }
            try {
                if (waitNanos > 0) {
                    f.get(waitNanos, TimeUnit.NANOSECONDS);
                }
            } catch (TimeoutException | java.util.concurrent.ExecutionException e) {
                // below
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "interrupted";
            }
            synchronized (this) {
                if (f.isDone()) {
                    return problem;
                }
                return "no answer within " + TIMEOUT.toMillis() + " ms";
            }
        }

        /** A pooled connection that broke while the backend restarted fails its first call: one more try. */
        private void probeTwice() {
            try {
                backend.probe();
            } catch (RuntimeException first) {
                backend.probe();
            }
        }

        private void probeOnce() {
            String found;
            try {
                probeTwice();
                found = null;
            } catch (RuntimeException e) {
                found = String.valueOf(e.getMessage());
            }
            synchronized (this) {
                problem = found;
                answered = true;
                answeredNanos = System.nanoTime();
                running = null;
            }
        }
    }

    /** @return a new map for checks, in the order they are put */
    static Map<String, String> checks() {
        return new LinkedHashMap<>();
    }
}
