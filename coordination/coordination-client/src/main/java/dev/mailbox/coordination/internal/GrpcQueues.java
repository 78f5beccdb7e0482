package dev.mailbox.coordination.internal;

import static dev.mailbox.coordination.CoordinationLimits.require;

import com.google.common.util.concurrent.ListenableFuture;
import dev.mailbox.coordination.CoordinationException;
import dev.mailbox.coordination.CoordinationLimits;
import dev.mailbox.coordination.QueueChange;
import dev.mailbox.coordination.QueueInfo;
import dev.mailbox.coordination.Queues;
import dev.mailbox.coordination.ReadConsistency;
import dev.mailbox.coordination.proto.ControlPlaneGrpc;
import dev.mailbox.coordination.proto.CreateQueueRequest;
import dev.mailbox.coordination.proto.DeleteQueueRequest;
import dev.mailbox.coordination.proto.GetQueueRequest;
import dev.mailbox.coordination.proto.ListQueuesRequest;
import dev.mailbox.coordination.proto.UpdateQueueRequest;
import dev.mailbox.coordination.wire.DataPlane;
import io.grpc.Metadata;
import io.grpc.stub.MetadataUtils;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/** {@link Queues} over the control plane. */
final class GrpcQueues implements Queues {

    private final ControlPlaneCalls calls;
    private final @Nullable String onBehalfOf;

    GrpcQueues(ControlPlaneCalls calls, @Nullable String onBehalfOf) {
        this.calls = calls;
        this.onBehalfOf = onBehalfOf;
    }

    /** One call with failover, naming the caller this client acts for when it has one. */
    private <R> java.util.concurrent.CompletableFuture<R> call(
            Function<ControlPlaneGrpc.ControlPlaneFutureStub, ListenableFuture<R>> rpc) {
        if (onBehalfOf == null) {
            return calls.call(rpc);
        }
        Metadata header = new Metadata();
        header.put(DataPlane.ON_BEHALF_OF, onBehalfOf);
        return calls.call(s -> rpc.apply(s.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(header))));
    }

    @Override
    public QueueInfo createIfAbsent(QueueInfo queue) {
        Objects.requireNonNull(queue, "queue");
        require(CoordinationLimits.queueRecordProblem(queue.name(), queue.attributes(), queue.tags(),
                queue.createdAtMillis(), queue.lastModifiedAtMillis()));
        CreateQueueRequest r = CreateQueueRequest.newBuilder().setQueue(Protos.toProto(queue)).build();
        return CoordinationException.await(call(s -> s.createQueue(r)).thenApply(reply -> Protos.fromProto(reply.getQueue())));
    }

    @Override
    public Optional<QueueInfo> get(String name, @Nullable ReadConsistency consistency) {
        require(CoordinationLimits.queueNameProblem(Objects.requireNonNull(name, "name")));
        GetQueueRequest r = GetQueueRequest.newBuilder().setName(name).setConsistency(Protos.toProto(consistency)).build();
        return GrpcLeases.found(() -> CoordinationException.await(call(s -> s.getQueue(r))
                .thenApply(reply -> Protos.fromProto(reply.getQueue()))));
    }

    @Override
    public List<String> list(String prefix, String after, int limit) {
        require(CoordinationLimits.queueListProblem(Objects.requireNonNull(prefix, "prefix"),
                Objects.requireNonNull(after, "after"), limit));
        ListQueuesRequest r = ListQueuesRequest.newBuilder().setPrefix(prefix).setAfter(after).setLimit(limit).build();
        return CoordinationException.await(call(s -> s.listQueues(r)).thenApply(reply -> List.copyOf(reply.getNamesList())));
    }

    @Override
    public Optional<QueueInfo> update(String name, QueueChange change) {
        Objects.requireNonNull(change, "change");
        require(CoordinationLimits.queueChangeProblem(Objects.requireNonNull(name, "name"), change.setAttributes(),
                change.removedAttributes(), change.setTags(), change.removedTags(), change.modifiedAtMillis()));
        UpdateQueueRequest r = UpdateQueueRequest.newBuilder().setName(name).putAllSetAttributes(change.setAttributes())
                .addAllRemovedAttributes(change.removedAttributes()).putAllSetTags(change.setTags())
                .addAllRemovedTags(change.removedTags()).setModifiedAtMillis(change.modifiedAtMillis()).build();
        return GrpcLeases.found(() -> CoordinationException.await(call(s -> s.updateQueue(r))
                .thenApply(reply -> Protos.fromProto(reply.getQueue()))));
    }

    @Override
    public Optional<QueueInfo> delete(String name) {
        require(CoordinationLimits.queueNameProblem(Objects.requireNonNull(name, "name")));
        DeleteQueueRequest r = DeleteQueueRequest.newBuilder().setName(name).build();
        return GrpcLeases.found(() -> CoordinationException.await(call(s -> s.deleteQueue(r))
                .thenApply(reply -> Protos.fromProto(reply.getQueue()))));
    }

    @Override
    public Queues onBehalfOf(String principal) {
        Objects.requireNonNull(principal, "principal");
        if (principal.isEmpty() || !DataPlane.headerSafe(principal)) {
            throw new IllegalArgumentException("a principal to act for must be printable ASCII, was '" + principal + "'");
        }
        return new GrpcQueues(calls, principal);
    }
}
