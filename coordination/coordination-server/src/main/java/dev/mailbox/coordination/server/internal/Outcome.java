package dev.mailbox.coordination.server.internal;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.internal.Protos;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What applying a command (or checking a renewal) came to. The codes map one to one onto gRPC
 * statuses in the control plane.
 *
 * @param code    the result
 * @param lease   the lease concerned, when there is one
 * @param message why, for a refusal
 * @param queue   a queue command's record: after the command, or the one it deleted
 * @param created whether a queue create made its queue (false: it existed)
 */
public record Outcome(Code code, @Nullable Lease lease, String message,
                      dev.mailbox.coordination.@Nullable QueueInfo queue, boolean created, long nextOffset,
                      dev.mailbox.coordination.proto.@Nullable ImportStateReply imported) {

    /** An outcome without a queue. */
    public Outcome(Code code, @Nullable Lease lease, String message) {
        this(code, lease, message, null, false);
    }

    /** An outcome of anything but an import chunk. */
    public Outcome(Code code, @Nullable Lease lease, String message, dev.mailbox.coordination.@Nullable QueueInfo queue,
                   boolean created) {
        this(code, lease, message, queue, created, 0, null);
    }

    /** An import chunk applied (or already there): the next one starts at {@code nextOffset}. */
    static Outcome importAt(long nextOffset) {
        return new Outcome(Code.OK, null, "", null, false, nextOffset, null);
    }

    /** An import completed: the cluster holds what it {@code imported}. */
    static Outcome imported(long size, dev.mailbox.coordination.proto.ImportStateReply imported) {
        return new Outcome(Code.OK, null, "", null, false, size, imported);
    }

    static Outcome ok(dev.mailbox.coordination.QueueInfo queue, boolean created) {
        return new Outcome(Code.OK, null, "", queue, created);
    }

    static Outcome noQueue(String name) {
        return new Outcome(Code.NOT_FOUND, null, "no queue '" + name + "'");
    }

    /** Results. */
    public enum Code {
        /** Done (or already so). */
        OK,
        /** The request itself is malformed; nothing changed. */
        INVALID_ARGUMENT,
        /** No lease for that mailbox. */
        NOT_FOUND,
        /** The lease is not in a state (or epoch) that allows it; nothing changed. */
        FAILED_PRECONDITION,
        /** What was to be created exists already. */
        ALREADY_EXISTS
    }

    static Outcome ok(Lease lease) {
        return new Outcome(Code.OK, lease, "");
    }

    static Outcome ok() {
        return new Outcome(Code.OK, null, "");
    }

    static Outcome invalid(String message) {
        return new Outcome(Code.INVALID_ARGUMENT, null, message);
    }

    static Outcome notFound(String mailboxId) {
        return new Outcome(Code.NOT_FOUND, null, "no lease for mailbox '" + mailboxId + "'");
    }

    static Outcome exists(String message) {
        return new Outcome(Code.ALREADY_EXISTS, null, message);
    }

    static Outcome refused(@Nullable Lease lease, String message) {
        return new Outcome(Code.FAILED_PRECONDITION, lease, message);
    }

    /** @return whether the command took effect (or was already in effect) */
    public boolean isOk() {
        return code == Code.OK;
    }

    /** @return this outcome as the state machine answers it */
    dev.mailbox.coordination.proto.state.Outcome toProto() {
        var b = dev.mailbox.coordination.proto.state.Outcome.newBuilder()
                .setCode(dev.mailbox.coordination.proto.state.Outcome.Code.valueOf(code.name())).setMessage(message);
        if (lease != null) {
            b.setLease(Protos.toProto(lease));
        }
        if (queue != null) {
            b.setQueue(Protos.toProto(queue)).setCreated(created);
        }
        if (nextOffset != 0) {
            b.setNextOffset(nextOffset);
        }
        if (imported != null) {
            b.setImported(imported);
        }
        return b.build();
    }

    /**
     * @param p an outcome message
     * @return the outcome
     */
    static Outcome fromProto(dev.mailbox.coordination.proto.state.Outcome p) {
        return new Outcome(Code.valueOf(p.getCode().name()), p.hasLease() ? Protos.fromProto(p.getLease()) : null,
                p.getMessage(), p.hasQueue() ? Protos.fromProto(p.getQueue()) : null, p.getCreated(),
                p.getNextOffset(), p.hasImported() ? p.getImported() : null);
    }

    /**
     * @param bytes an encoded outcome, as a state machine answered
     * @return the outcome
     */
    static Outcome parse(byte[] bytes) {
        try {
            return fromProto(dev.mailbox.coordination.proto.state.Outcome.parseFrom(bytes));
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("unreadable outcome from the state machine: " + e.getMessage(), e);
        }
    }

    /**
     * @param bytes encoded outcomes, as a state machine answered a batch
     * @return the outcomes
     */
    static List<Outcome> parseAll(byte[] bytes) {
        try {
            return dev.mailbox.coordination.proto.state.Outcomes.parseFrom(bytes).getOutcomesList().stream()
                    .map(Outcome::fromProto).toList();
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("unreadable outcomes from the state machine: " + e.getMessage(), e);
        }
    }
}
