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
 * first, and on UNAVAILABLE a search for the leader (all coordinators asked at once) and a retry there,
 * with exponential backoff while nobody leads, up to the client's attempt limit.
 */
final class ControlPlaneCalls implements AutoCloseable {

    /** The largest reply this client takes from a coordinator. */
    static final int MAX_REPLY_BYTES = 64 << 20;

    private final List<String> endpoints;
    private final List<ManagedChannel> channels;
    private final Duration callTimeout;
    private final int maxAttempts;
    private final Duration backoff;
    private final Duration maxBackoff;
    private final AtomicInteger current = new AtomicInteger();
    private final ScheduledThreadPoolExecutor scheduler;

    ControlPlaneCalls(List<String> endpoints, Duration callTimeout, int maxAttempts, Duration backoff,
                      Duration maxBackoff, dev.mailbox.coordination.ClientSecurity security) {
        this.endpoints = List.copyOf(endpoints);
        this.callTimeout = callTimeout;
        this.maxAttempts = maxAttempts;
        this.backoff = backoff;
        this.maxBackoff = maxBackoff;
        List<ManagedChannel> list = new ArrayList<>();
        for (String endpoint : this.endpoints) {
            // list replies and the routing table's first snapshot hold whole tables: 4 MiB (gRPC's default) is
            // about 130 namespaces with the largest labels allowed, or 20,000 routes
            list.add(Tls.channel(endpoint, security).maxInboundMessageSize(MAX_REPLY_BYTES).build());
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
        CompletableFuture<R> result = new CompletableFuture<>();
        attempt(rpc, attemptMillis, 1, result);
        return result;
    }

    private <R> void attempt(Function<ControlPlaneGrpc.ControlPlaneFutureStub, ListenableFuture<R>> rpc,
                             long attemptMillis, int attempt, CompletableFuture<R> result) {
        int index = Math.floorMod(current.get(), channels.size());
        ListenableFuture<R> future;
        try {
            future = rpc.apply(ControlPlaneGrpc.newFutureStub(channels.get(index))
                    .withDeadlineAfter(attemptMillis, TimeUnit.MILLISECONDS));
        } catch (RuntimeException e) {
            result.completeExceptionally(failure(e, index));
            return;
        }
        Futures.addCallback(future, new FutureCallback<>() {
            @Override
            public void onSuccess(R value) {
                result.complete(value);
            }

            @Override
            public void onFailure(Throwable t) {
                CoordinationException e = failure(t, index);
                if (!e.isRetryable() || attempt >= maxAttempts || scheduler.isShutdown()) {
                    result.completeExceptionally(e);
                    return;
                }
                // this coordinator is down or has no leader to forward to: move on, and wait for a leader
                current.compareAndSet(index, index + 1);
                retryAtLeader(rpc, attemptMillis, attempt + 1, result, e);
            }
        }, MoreExecutors.directExecutor());
    }

    /**
     * Asks the coordinators who leads and retries there as soon as one does (while the cluster elects, a
     * call to a follower would only wait in its forwarding client); without a leader it asks again after a
     * growing pause, and once the attempts are used up it sends the call wherever it can.
     */
    private <R> void retryAtLeader(Function<ControlPlaneGrpc.ControlPlaneFutureStub, ListenableFuture<R>> rpc,
                                   long attemptMillis, int attempt, CompletableFuture<R> result,
                                   CoordinationException last) {
        discoverLeader().whenComplete((found, ignored) -> {
            try {
                if (Boolean.TRUE.equals(found) || attempt >= maxAttempts || channels.size() == 1) {
                    long pause = Boolean.TRUE.equals(found) ? 0 : pause(attempt);
                    scheduler.schedule(() -> attempt(rpc, attemptMillis, attempt, result), pause,
                            TimeUnit.MILLISECONDS);
                } else {
                    scheduler.schedule(() -> retryAtLeader(rpc, attemptMillis, attempt + 1, result, last),
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
     * Asks every endpoint who leads, briefly, and points this client at the leader's endpoint if one
     * says it is the leader. Completes when all have answered or timed out.
     */
    private CompletableFuture<Boolean> discoverLeader() {
        if (channels.size() == 1) {
            return CompletableFuture.completedFuture(false);
        }
        long deadline = Math.min(callTimeout.toMillis(), 500);
        List<CompletableFuture<Boolean>> asks = new ArrayList<>();
        for (int i = 0; i < channels.size(); i++) {
            int index = i;
            CompletableFuture<Boolean> ask = new CompletableFuture<>();
            asks.add(ask);
            try {
                Futures.addCallback(ControlPlaneGrpc.newFutureStub(channels.get(i))
                        .withDeadlineAfter(deadline, TimeUnit.MILLISECONDS)
                        .clusterStatus(ClusterStatusRequest.getDefaultInstance()), new FutureCallback<>() {
                            @Override
                            public void onSuccess(ClusterStatusReply reply) {
                                boolean leads = Protos.fromProto(reply).isLeader();
                                if (leads) {
                                    current.set(index);
                                }
                                ask.complete(leads);
                            }

                            @Override
                            public void onFailure(Throwable t) {
                                ask.complete(false);
                            }
                        }, MoreExecutors.directExecutor());
            } catch (RuntimeException e) {
                ask.complete(false);
            }
        }
        return CompletableFuture.allOf(asks.toArray(CompletableFuture[]::new))
                .thenApply(v -> asks.stream().anyMatch(CompletableFuture::join));
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
            message = "coordinator " + endpoints.get(index) + ": " + status.getCode() + ": " + message;
        } else if (reason == CoordinationException.Reason.UNAUTHENTICATED
                || reason == CoordinationException.Reason.PERMISSION_DENIED) {
            message = status.getCode() + ": " + message;
        }
        return new CoordinationException(reason, message, t);
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
        channels.forEach(ManagedChannel::shutdownNow);
    }
}
