package dev.mailbox.coordination.internal;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import dev.mailbox.coordination.ClusterStatus;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.proto.ClusterStatusReply;
import dev.mailbox.coordination.proto.ClusterStatusRequest;
import dev.mailbox.coordination.proto.ControlPlaneGrpc;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * How every control-plane call of one client travels: a channel per coordinator, the one believed to lead
 * first, and on UNAVAILABLE a search for the leader (all coordinators asked at once, again every
 * {@value #SEARCH_MILLIS} ms or so while they elect one, following a follower's hint of who leads) and a
 * retry there; an attempt that goes unanswered for {@value #STALL_MILLIS} ms while another coordinator
 * leads is given up and retried there (its coordinator is frozen or cut off, or a follower still forwarding
 * to the old leader). After the search, exponential backoff up to the client's attempt limit.
 */
final class ControlPlaneCalls implements AutoCloseable {

    /** At DEBUG: each failed attempt and each search for the leader, with timings (where failover time goes). */
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ControlPlaneCalls.class);

    /** The largest reply this client takes from a coordinator. */
    static final int MAX_REPLY_BYTES = 64 << 20;

    private final List<String> endpoints;
    private final List<ManagedChannel> channels;
    private final Duration callTimeout;
    private final int maxAttempts;
    private final Duration backoff;
    private final Duration maxBackoff;
    private final AtomicInteger current = new AtomicInteger();
    /** Coordinator id to the index of its endpoint, as their status replies said: to follow a leader hint. */
    private final java.util.Map<String, Integer> endpointOf = new java.util.concurrent.ConcurrentHashMap<>();

    /** How long one "who leads?" question to a coordinator may take. */
    static final long PROBE_MILLIS = 150;
    /** How often a client looking for a new leader asks again (with jitter: half to one and a half times). */
    static final long SEARCH_MILLIS = 20;
    /**
     * How long a coordinator may take to say who leads while a stalled attempt is checked: a member that
     * answers a status later than this counts as silent, which only makes the check come again sooner.
     */
    static final long STALL_PROBE_MILLIS = 50;
    /** How long an attempt may go unanswered before the client checks whether another coordinator leads. */
    static final long STALL_MILLIS = 150;
    private final ScheduledThreadPoolExecutor scheduler;

    ControlPlaneCalls(List<String> endpoints, Duration callTimeout, int maxAttempts, Duration backoff,
                      Duration maxBackoff, dev.mailbox.coordination.ClientSecurity security,
                      List<io.grpc.ClientInterceptor> interceptors) {
        this.endpoints = List.copyOf(endpoints);
        this.callTimeout = callTimeout;
        this.maxAttempts = maxAttempts;
        this.backoff = backoff;
        this.maxBackoff = maxBackoff;
        List<ManagedChannel> list = new ArrayList<>();
        for (String endpoint : this.endpoints) {
            // list replies and the routing table's first snapshot hold whole tables: 4 MiB (gRPC's default) is
            // about 130 namespaces with the largest labels allowed, or 20,000 routes
            list.add(Tls.channel(endpoint, security).maxInboundMessageSize(MAX_REPLY_BYTES).intercept(interceptors)
                    .build());
        }
        this.channels = List.copyOf(list);
        this.scheduler = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "coordination-client");
            t.setDaemon(true);
            return t;
        });
        scheduler.setRemoveOnCancelPolicy(true);
        if (channels.size() > 1) {
            discoverLeader(); // talk to the leader from the start: no forwarding hop
        }
    }

    List<String> endpoints() {
        return endpoints;
    }

    Duration callTimeout() {
        return callTimeout;
    }

    int maxAttempts() {
        return maxAttempts;
    }

    ScheduledThreadPoolExecutor scheduler() {
        return scheduler;
    }

    /** @return the channel calls go to now */
    ManagedChannel currentChannel() {
        return channels.get(Math.floorMod(current.get(), channels.size()));
    }

    /**
     * @param channel one of this client's channels
     * @return its index, or -1
     */
    int endpointIndex(ManagedChannel channel) {
        return channels.indexOf(channel);
    }

    /** The current coordinator failed a long-lived call (a watch): later calls start at the next one. */
    void moveOn(ManagedChannel failed) {
        int index = channels.indexOf(failed);
        if (index >= 0) {
            current.compareAndSet(index, index + 1);
        }
    }

    /**
     * One call with failover.
     *
     * @param rpc the call on a stub (with the per-attempt deadline set)
     * @param <R> its reply
     * @return the reply, or the failure as a {@link CoordinationException}
     */
    <R> CompletableFuture<R> call(Function<ControlPlaneGrpc.ControlPlaneFutureStub, ListenableFuture<R>> rpc) {
        return call(rpc, callTimeout.toMillis());
    }

    /**
     * One call with failover, each attempt bounded by {@code attemptMillis} instead of the call timeout.
     *
     * @param rpc           the call on a stub
     * @param attemptMillis how long one attempt may take
     * @param <R>           its reply
     * @return the reply, or the failure as a {@link CoordinationException}
     */
    <R> CompletableFuture<R> call(Function<ControlPlaneGrpc.ControlPlaneFutureStub, ListenableFuture<R>> rpc,
                                  long attemptMillis) {
        return call(rpc, attemptMillis, true);
    }

    /**
     * One call with failover.
     *
     * @param rpc            the call on a stub
     * @param attemptMillis  how long one attempt may take
     * @param abandonStalled whether an attempt whose coordinator stops answering while another leads may be
     *                       given up and sent to the leader; false for a call that must not run twice (an
     *                       import, a membership change), which then waits for its deadline
     * @param <R>            its reply
     * @return the reply, or the failure as a {@link CoordinationException}
     */
    <R> CompletableFuture<R> call(Function<ControlPlaneGrpc.ControlPlaneFutureStub, ListenableFuture<R>> rpc,
                                  long attemptMillis, boolean abandonStalled) {
        CompletableFuture<R> result = new CompletableFuture<>();
        attempt(rpc, attemptMillis, 1, result, abandonStalled);
        return result;
    }

    private <R> void attempt(Function<ControlPlaneGrpc.ControlPlaneFutureStub, ListenableFuture<R>> rpc,
                             long attemptMillis, int attempt, CompletableFuture<R> result, boolean abandonStalled) {
        int index = Math.floorMod(current.get(), channels.size());
        ListenableFuture<R> future;
        try {
            future = rpc.apply(ControlPlaneGrpc.newFutureStub(channels.get(index))
                    .withDeadlineAfter(attemptMillis, TimeUnit.MILLISECONDS));
        } catch (RuntimeException e) {
            result.completeExceptionally(failure(e, index));
            return;
        }
        java.util.concurrent.ScheduledFuture<?> stall = !abandonStalled || channels.size() == 1
                || attemptMillis <= STALL_MILLIS ? null
                : scheduleQuietly(() -> checkStalled(future, index, false), STALL_MILLIS);
        Futures.addCallback(future, new FutureCallback<>() {
            @Override
            public void onSuccess(R value) {
                if (stall != null) {
                    stall.cancel(false);
                }
                result.complete(value);
            }

            @Override
            public void onFailure(Throwable t) {
                if (stall != null) {
                    stall.cancel(false);
                }
                CoordinationException e = t instanceof java.util.concurrent.CancellationException
                        ? new CoordinationException(CoordinationException.Reason.UNAVAILABLE, "coordinator "
                                + endpoints.get(index) + " did not answer the call while another one leads", t)
                        : failure(t, index);
                if (LOG.isDebugEnabled()) {
                    LOG.debug("attempt {} at {} failed: {}", attempt, endpoints.get(index), e.getMessage());
                }
                if (!e.isRetryable() || attempt >= maxAttempts || scheduler.isShutdown()) {
                    result.completeExceptionally(e);
                    return;
                }
                // this coordinator is down or has no leader to forward to: move on, and wait for a leader
                current.compareAndSet(index, index + 1);
                retryAtLeader(rpc, attemptMillis, attempt + 1, result, e, abandonStalled,
                        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(callTimeout.toMillis(), 1_000)));
            }
        }, MoreExecutors.directExecutor());
    }

    /**
     * An attempt has had no answer for {@link #STALL_MILLIS}: if its coordinator is frozen or cut off, the
     * attempt would only end at its deadline (seconds), long after the others elected a new leader. Ask
     * every coordinator who leads; if another one does now, give up on this attempt (it fails as
     * UNAVAILABLE and is retried at the leader): its own coordinator either does not answer at all or
     * answers as a follower, whose forwarding may be stuck on the old leader.
     *
     * @param wasSilent whether the attempt's coordinator left the previous whole round unanswered: then the
     *                  next round comes after {@link #SEARCH_MILLIS}, not {@link #STALL_MILLIS} (the others
     *                  are electing a leader, which is a matter of milliseconds once it happens), and stops
     *                  at the first leader it finds
     */
    private void checkStalled(ListenableFuture<?> future, int index, boolean wasSilent) {
        if (future.isDone()) {
            return;
        }
        java.util.Set<Integer> answered = java.util.concurrent.ConcurrentHashMap.newKeySet();
        // short probes: a round that waited PROBE_MILLIS for the silent coordinator would notice a leader the
        // others elected meanwhile only a whole round later (measured: ~150 ms after the election, at cuts)
        // and no hints: while the old leader is cut off the others still name it, and the silent member they
        // name is the one this attempt may be waiting on (directly, or through a follower's forwarding). Only
        // a member that says it leads is a reason to give the attempt up
        discoverLeader(!wasSilent, answered, STALL_PROBE_MILLIS, false).whenComplete((found, e) -> {
            // given up on once another coordinator leads: the attempt's own is silent (frozen, cut off), or it
            // answers but as a follower, whose forwarding client may be retrying the old leader for seconds. A
            // call given up here may still be applied later (the forwarded copy); calls that may be abandoned
            // are idempotent by request id or fenced by epoch, and the others never reach this check
            boolean silent = !answered.contains(index);
            if (LOG.isDebugEnabled()) {
                LOG.debug("stalled attempt at {}: leader {}, {}", endpoints.get(index),
                        Boolean.TRUE.equals(found) ? endpoints.get(Math.floorMod(current.get(), channels.size())) : "none",
                        silent ? "its coordinator silent" : "its coordinator answers");
            }
            if (Boolean.TRUE.equals(found) && Math.floorMod(current.get(), channels.size()) != index) {
                future.cancel(true);
            } else if (!future.isDone()) {
                scheduleQuietly(() -> checkStalled(future, index, silent), silent ? SEARCH_MILLIS : STALL_MILLIS);
            }
        });
    }

    private java.util.concurrent.@org.jspecify.annotations.Nullable ScheduledFuture<?> scheduleQuietly(Runnable task,
                                                                                                      long millis) {
        try {
            return scheduler.schedule(task, millis, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException closed) {
            return null;
        }
    }

    /**
     * Asks the coordinators who leads and retries there as soon as one does (while the cluster elects, a
     * call to a follower would only wait in its forwarding client). While nobody leads it asks again every
     * {@link #SEARCH_MILLIS} (with jitter), without using up attempts, until {@code searchUntil}: an
     * election takes a few hundred milliseconds, and a client that backed off exponentially would notice
     * the new leader long after it was elected. After that it falls back to retrying wherever it can, with
     * exponential backoff, until the attempts are used up.
     */
    private <R> void retryAtLeader(Function<ControlPlaneGrpc.ControlPlaneFutureStub, ListenableFuture<R>> rpc,
                                   long attemptMillis, int attempt, CompletableFuture<R> result,
                                   CoordinationException last, boolean abandonStalled, long searchUntil) {
        long asked = System.nanoTime();
        discoverLeader().whenComplete((found, ignored) -> {
            if (LOG.isDebugEnabled()) {
                LOG.debug("leader search: {} after {} ms (now at {})", Boolean.TRUE.equals(found) ? "found" : "none",
                        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - asked),
                        endpoints.get(Math.floorMod(current.get(), channels.size())));
            }
            try {
                boolean searching = System.nanoTime() - searchUntil < 0 && channels.size() > 1;
                if (Boolean.TRUE.equals(found)) {
                    scheduler.execute(() -> attempt(rpc, attemptMillis, attempt, result, abandonStalled));
                } else if (searching) {
                    long pause = SEARCH_MILLIS / 2 + ThreadLocalRandom.current().nextLong(SEARCH_MILLIS + 1);
                    scheduler.schedule(() -> retryAtLeader(rpc, attemptMillis, attempt, result, last, abandonStalled,
                            searchUntil),
                            pause, TimeUnit.MILLISECONDS);
                } else if (attempt >= maxAttempts || channels.size() == 1) {
                    scheduler.schedule(() -> attempt(rpc, attemptMillis, attempt, result, abandonStalled), pause(attempt),
                            TimeUnit.MILLISECONDS);
                } else {
                    scheduler.schedule(() -> retryAtLeader(rpc, attemptMillis, attempt + 1, result, last,
                            abandonStalled, searchUntil),
                            pause(attempt), TimeUnit.MILLISECONDS);
                }
            } catch (RuntimeException rejected) {
                result.completeExceptionally(last);
            }
        });
    }

    /**
     * @param attempt which attempt comes next (1 is the first)
     * @return how long to pause before it: exponential from the builder's initial pause, with jitter
     */
    long pause(int attempt) {
        long pause = Math.min(maxBackoff.toMillis(), backoff.toMillis() << Math.min(Math.max(attempt - 2, 0), 16));
        return pause / 2 + ThreadLocalRandom.current().nextLong(pause / 2 + 1);
    }

    /**
     * Asks every endpoint at once who leads, each for at most {@link #PROBE_MILLIS}, and points this client
     * at the leader: an endpoint that says it leads, or failing that one that a follower names as its
     * leader while the named one did not answer in time (busy, not gone: one that refused the connection
     * or said it does not lead is not followed, so a stale hint naming a dead leader costs nothing).
     * Completes true as soon as one says it leads, false once all have answered or timed out without one.
     */
    private CompletableFuture<Boolean> discoverLeader() {
        return discoverLeader(false, java.util.concurrent.ConcurrentHashMap.newKeySet(), PROBE_MILLIS, true);
    }

    /**
     * @param waitAll     complete only once every endpoint answered or timed out, not at the first leader
     * @param answered    where the indexes of the endpoints that answered go
     * @param probeMillis how long each endpoint may take to answer
     * @param followHints whether a follower's hint may point the client at a member that did not answer
     */
    private CompletableFuture<Boolean> discoverLeader(boolean waitAll, java.util.Set<Integer> answered,
                                                      long probeMillis, boolean followHints) {
        // a channel whose coordinator was down waits out gRPC's reconnect backoff (1 s, growing to 2 min) and
        // fails every call at once meanwhile, even after the coordinator is back: a restarted member that has
        // just been elected would stay out of reach for that long. Each search (and, for a client of one
        // endpoint, each retry) connects again at once
        channels.forEach(ManagedChannel::resetConnectBackoff);
        if (channels.size() == 1) {
            return CompletableFuture.completedFuture(false);
        }
        long deadline = Math.min(callTimeout.toMillis(), probeMillis);
        CompletableFuture<Boolean> outcome = new CompletableFuture<>();
        AtomicInteger pending = new AtomicInteger(channels.size());
        java.util.concurrent.atomic.AtomicReference<String> hinted = new java.util.concurrent.atomic.AtomicReference<>();
        // endpoints that timed out: a follower's hint can only be better than what the hinted one says itself
        // when the hinted one did not answer in time (busy); one that refused or answered "not me" is not it
        java.util.Set<Integer> slow = java.util.concurrent.ConcurrentHashMap.newKeySet();
        java.util.concurrent.atomic.AtomicBoolean leads = new java.util.concurrent.atomic.AtomicBoolean();
        Runnable done = () -> {
            if (pending.decrementAndGet() == 0 && !outcome.isDone()) {
                if (leads.get()) {
                    outcome.complete(true);
                    return;
                }
                String hint = hinted.get();
                Integer at = hint == null ? null : endpointOf.get(hint);
                boolean follow = followHints && at != null && slow.contains(at);
                if (follow) {
                    current.set(at);
                }
                outcome.complete(follow);
            }
        };
        for (int i = 0; i < channels.size(); i++) {
            int index = i;
            try {
                Futures.addCallback(ControlPlaneGrpc.newFutureStub(channels.get(i))
                        .withDeadlineAfter(deadline, TimeUnit.MILLISECONDS)
                        .clusterStatus(ClusterStatusRequest.getDefaultInstance()), new FutureCallback<>() {
                            @Override
                            public void onSuccess(ClusterStatusReply reply) {
                                ClusterStatus status = Protos.fromProto(reply);
                                endpointOf.put(status.nodeId(), index);
                                answered.add(index);
                                if (status.isLeader()) {
                                    current.set(index);
                                    leads.set(true);
                                    if (!waitAll) {
                                        outcome.complete(true);
                                    }
                                } else if (status.leaderId() != null && status.fault() == null) {
                                    hinted.set(status.leaderId());
                                }
                                done.run();
                            }

                            @Override
                            public void onFailure(Throwable t) {
                                if (Status.fromThrowable(t).getCode() == Status.Code.DEADLINE_EXCEEDED) {
                                    slow.add(index);
                                }
                                done.run();
                            }
                        }, MoreExecutors.directExecutor());
            } catch (RuntimeException e) {
                done.run();
            }
        }
        return outcome;
    }

    /** Asks every endpoint for its status once, without retrying. */
    Map<String, ClusterStatus> statusOfEach() {
        Map<String, ClusterStatus> out = new LinkedHashMap<>();
        for (int i = 0; i < channels.size(); i++) {
            try {
                ClusterStatusReply reply = ControlPlaneGrpc.newBlockingStub(channels.get(i))
                        .withDeadlineAfter(callTimeout.toMillis(), TimeUnit.MILLISECONDS)
                        .clusterStatus(ClusterStatusRequest.getDefaultInstance());
                out.put(endpoints.get(i), Protos.fromProto(reply));
            } catch (RuntimeException e) {
                // not answering: left out
            }
        }
        return out;
    }

    /**
     * @param t     a call's failure
     * @param index the endpoint it went to, or -1
     * @return it as a {@link CoordinationException}
     */
    CoordinationException failure(Throwable t, int index) {
        Status status = Status.fromThrowable(t);
        if (status.getCode() == Status.Code.UNKNOWN && closedConnection(t)) {
            // the coordinator went away with the call in flight (gRPC says UNKNOWN: channel closed)
            status = Status.UNAVAILABLE.withDescription("the connection closed during the call").withCause(t);
        }
        CoordinationException.Reason reason = switch (status.getCode()) {
            case INVALID_ARGUMENT -> CoordinationException.Reason.INVALID_ARGUMENT;
            case NOT_FOUND -> CoordinationException.Reason.NOT_FOUND;
            case FAILED_PRECONDITION -> CoordinationException.Reason.FAILED_PRECONDITION;
            case ALREADY_EXISTS -> CoordinationException.Reason.ALREADY_EXISTS;
            case INTERNAL, UNKNOWN, DATA_LOSS, UNIMPLEMENTED -> CoordinationException.Reason.INTERNAL;
            case UNAUTHENTICATED -> CoordinationException.Reason.UNAUTHENTICATED;
            case PERMISSION_DENIED -> CoordinationException.Reason.PERMISSION_DENIED;
            default -> CoordinationException.Reason.UNAVAILABLE;
        };
        String message = status.getDescription() != null ? status.getDescription() : status.getCode().toString();
        if (reason == CoordinationException.Reason.UNAVAILABLE && index >= 0) {
            // the channel may be waiting out gRPC's reconnect backoff (growing to 2 min while its coordinator is
            // down) and failing every call at once meanwhile: whatever comes next (a retry, the routing table's
            // next watch, the caller's next call) finds it dialling again, not waiting on a timer. A client of a
            // single coordinator has no leader search to do this for it (issue 30, finding 8)
            channels.get(index).resetConnectBackoff();
            message = "coordinator " + endpoints.get(index) + ": " + status.getCode() + ": " + message;
        } else if (reason == CoordinationException.Reason.UNAUTHENTICATED
                || reason == CoordinationException.Reason.PERMISSION_DENIED) {
            message = status.getCode() + ": " + message;
        }
        return new CoordinationException(reason, message, t);
    }

    private static boolean closedConnection(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof java.nio.channels.ClosedChannelException || c instanceof java.io.IOException) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
        channels.forEach(ManagedChannel::shutdownNow);
    }
}
