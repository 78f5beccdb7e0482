package dev.mailbox.console;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who the console's user is and what they may see and do: the same principals and rules as the control plane
 * and the data plane (a coordinator's or node's {@code Access} gives its own, see
 * {@code dev.mailbox.coordination.server.Access#forConsole()}), and the same audit trail. The browser presents a
 * bearer token (pasted once, kept in the tab's session storage, sent as {@code Authorization: Bearer}); a request
 * without a known token is refused 401, one the rules do not allow 403, and both are audited.
 *
 * <p>What each part of the console needs, in the namespace concerned ({@code *} for the cluster as a whole):
 * cluster status, any principal; namespaces, leases and routes, {@link Right#READ} in their namespace (the list
 * shows only those); nodes, READ on {@code *}; a mailbox's counts, {@link Right#COUNT}; a peek,
 * {@link Right#RECEIVE} (it shows message bodies); a purge, {@link Right#PURGE}; a redrive, RECEIVE on the
 * dead-letter mailbox and {@link Right#SEND} on the destination. Implementations are thread-safe.
 */
public interface ConsoleAccess {

    /** What a read or an action needs in a namespace. */
    enum Right {
        /** Lists and gets of the cluster's state. */
        READ,
        /** A mailbox's counts. */
        COUNT,
        /** Reading messages: a peek, and taking them out of a dead-letter mailbox in a redrive. */
        RECEIVE,
        /** Sending: putting messages into the destination of a redrive. */
        SEND,
        /** Purging a mailbox. */
        PURGE
    }

    /** The principal when security is off. */
    String ANONYMOUS = "anonymous";

    /** @return whether requests must present a token; false only when the process runs without access rules */
    boolean enforced();

    /**
     * @param bearerToken a token as presented
     * @return its principal, or null if it is none of the known tokens (never logged: it may be a mistyped secret)
     */
    @Nullable String principalOfToken(String bearerToken);

    /**
     * @param principal an authenticated principal
     * @param right     what the read or action needs
     * @param namespace the namespace concerned, or {@code *}
     * @return whether a grant allows it
     */
    boolean allows(String principal, Right right, String namespace);

    /**
     * Writes an audit line for an action that ran (or failed) on the {@code dev.mailbox.audit} logger.
     *
     * @param principal who
     * @param action    what ({@code console:Purge})
     * @param target    on what
     * @param outcome   {@code OK}, or what went wrong
     */
    void audited(String principal, String action, String target, String outcome);

    /**
     * Writes an audit line for a refused request.
     *
     * @param principal who, or {@code ?} before authentication
     * @param action    what it asked for
     * @param target    on what, or {@code -}
     * @param reason    why it was refused; never a token
     */
    void refused(String principal, String action, String target, String reason);

    /**
     * No security: every request is {@link #ANONYMOUS} and may do anything; actions are still audited. For a
     * process without access rules, which listens on loopback (or warns loudly that it does not).
     *
     * @return the open access
     */
    static ConsoleAccess open() {
        return new ConsoleAccess() {
            private final Logger audit = LoggerFactory.getLogger("dev.mailbox.audit");

            @Override
            public boolean enforced() {
                return false;
            }

            @Override
            public @Nullable String principalOfToken(String bearerToken) {
                return ANONYMOUS;
            }

            @Override
            public boolean allows(String principal, Right right, String namespace) {
                return true;
            }

            @Override
            public void audited(String principal, String action, String target, String outcome) {
                audit.info("audit principal={} action={} target={} outcome={}", AuditText.quote(principal), action,
                        AuditText.quote(target), AuditText.quote(outcome));
            }

            @Override
            public void refused(String principal, String action, String target, String reason) {
                audit.warn("audit principal={} action={} target={} outcome=REFUSED reason={}",
                        AuditText.quote(principal), action, AuditText.quote(target), AuditText.quote(reason));
            }
        };
    }
}
