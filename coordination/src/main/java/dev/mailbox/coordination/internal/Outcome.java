package dev.mailbox.coordination.internal;

import dev.mailbox.coordination.Lease;
import org.jspecify.annotations.Nullable;

/**
 * What applying a command (or checking a renewal) came to. The codes map one to one onto gRPC
 * statuses in the control plane.
 *
 * @param code    the result
 * @param lease   the lease concerned, when there is one
 * @param message why, for a refusal
 */
public record Outcome(Code code, @Nullable Lease lease, String message) {

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
}
