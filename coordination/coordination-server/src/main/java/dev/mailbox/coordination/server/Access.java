package dev.mailbox.coordination.server;

import dev.mailbox.coordination.server.internal.AccessPolicy;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Who may call a coordinator or a mailbox node, and what they may do. A call is made by a principal: the
 * common name (or first DNS/e-mail alternative name) of a verified client certificate, or the owner of a
 * bearer token from the tokens file. Without either it is refused {@code UNAUTHENTICATED}; anything the
 * rules do not grant is refused {@code PERMISSION_DENIED} and changes nothing. Both files are read again
 * when they change.
 *
 * <p><b>Tokens file</b>: one {@code principal:salt:hash} line per token (SHA-256 of salt and token; make
 * lines with {@link #tokenLine} or {@code mailboxctl security token PRINCIPAL}). Tokens are compared in
 * constant time and never logged.
 *
 * <p><b>Rules file</b>: one grant per line, {@code principal role namespace[,namespace...]}, where a
 * namespace is a name, a prefix ending in {@code *}, or {@code *} for all; {@code #} starts a comment.
 * Roles:
 * <ul>
 *   <li>{@code admin}: everything, including namespaces, policies, revoke and reclaim, membership and backups;</li>
 *   <li>{@code node}: register and heartbeat as itself (its principal is its node id; grant it {@code *}
 *       or {@code _nodes}), hold leases (publish mailboxes), read the cluster's state, and vouch for the
 *       callers of the calls it forwards to other nodes;</li>
 *   <li>{@code runner}: acquire, renew and release leases of its namespaces, under runner ids it owns
 *       (its principal, or its principal and {@code /...}), and send, receive and acknowledge in them;</li>
 *   <li>{@code client}: send, receive, acknowledge, count and purge in its namespaces;</li>
 *   <li>{@code reader}: lists, gets and watches.</li>
 * </ul>
 * A call forwarded by a node is checked as its original caller's, which the forwarding node names: a node
 * cannot be used to launder a call, and only principals with the {@code node} role are believed.
 */
public final class Access {

    private final AccessPolicy policy;

    private Access(AccessPolicy policy) {
        this.policy = policy;
    }

    /**
     * @param tokens the tokens file, or null when every caller presents a client certificate
     * @param rules  the rules file
     * @return the access rules
     * @throws IllegalArgumentException if a file does not parse (naming the line)
     * @throws java.io.UncheckedIOException if a file cannot be read
     */
    public static Access fromFiles(@Nullable Path tokens, Path rules) {
        return new Access(new AccessPolicy(tokens, Objects.requireNonNull(rules, "rules")));
    }

    /** @return a new random token: 32 bytes, URL-safe base64 */
    public static String newToken() {
        byte[] bytes = new byte[32];
        new SecureRandom().nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /**
     * @param principal who the token is for
     * @param token     the token
     * @return the line to add to the tokens file (with a fresh salt)
     */
    public static String tokenLine(String principal, String token) {
        return AccessPolicy.tokenLine(principal, token);
    }

    AccessPolicy policy() {
        return policy;
    }

    /**
     * What a call asks to do in a namespace, for servers that take calls other than over this project's gRPC
     * planes (the SQS endpoint of a node) and check them against the same rules. Which roles hold which:
     * {@code admin} all of them; {@code client} SEND, RECEIVE, COUNT, PURGE; {@code runner} SEND, RECEIVE, COUNT;
     * {@code reader} READ, COUNT; {@code node} READ, COUNT.
     */
    public enum Right {
        /** Configure: namespaces, policies, leases of others; for the SQS endpoint, creating and changing queues. */
        ADMIN(AccessPolicy.Permission.ADMIN),
        /** Lists, gets and watches of the cluster's state. */
        READ(AccessPolicy.Permission.READ),
        /** Send to a mailbox. */
        SEND(AccessPolicy.Permission.SEND),
        /** Receive, acknowledge, nack and extend. */
        RECEIVE(AccessPolicy.Permission.RECEIVE),
        /** Count a mailbox and read its capabilities (and, on the SQS endpoint, its attributes and tags). */
        COUNT(AccessPolicy.Permission.COUNT),
        /** Purge a mailbox. */
        PURGE(AccessPolicy.Permission.PURGE);

        private final AccessPolicy.Permission permission;

        Right(AccessPolicy.Permission permission) {
            this.permission = permission;
        }
    }

    /**
     * Checks a call against the rules (reading the files again first if they changed), exactly as the node's
     * data plane checks its own calls.
     *
     * @param principal an authenticated principal
     * @param right     what the call needs
     * @param namespace the namespace it acts on (a mailbox's is the part of its id before '@', or the whole id),
     *                  or {@code *} for all of them
     * @return whether a grant allows it
     */
    public boolean allows(String principal, Right right, String namespace) {
        return policy.allows(Objects.requireNonNull(principal, "principal"), Objects.requireNonNull(right, "right")
                .permission, Objects.requireNonNull(namespace, "namespace"));
    }

    /**
     * These rules as the web console applies them ({@link dev.mailbox.console.Console}): the browser's user presents
     * a bearer token of the tokens file, and each read and action is checked as the planes check theirs: reads need
     * READ (or the lease rights a runner reads with) in the namespace, a mailbox's counts COUNT, a peek RECEIVE, a
     * purge PURGE, a redrive RECEIVE on the dead-letter mailbox and SEND on the destination. Refusals and actions go
     * to the same audit trail. A browser cannot present a client certificate to the console, so a principal known
     * only by its certificate needs a token to use it.
     *
     * @return the console's access
     */
    public dev.mailbox.console.ConsoleAccess forConsole() {
        return new dev.mailbox.console.ConsoleAccess() {
            @Override
            public boolean enforced() {
                return true;
            }

            @Override
            public @Nullable String principalOfToken(String bearerToken) {
                return policy.principalOfToken(Objects.requireNonNull(bearerToken, "bearerToken"));
            }

            @Override
            public boolean allows(String principal, Right right, String namespace) {
                return switch (right) {
                    case READ -> policy.allows(principal, AccessPolicy.Permission.READ, namespace)
                            || policy.allows(principal, AccessPolicy.Permission.LEASE, namespace);
                    case COUNT -> policy.allows(principal, AccessPolicy.Permission.COUNT, namespace);
                    case RECEIVE -> policy.allows(principal, AccessPolicy.Permission.RECEIVE, namespace);
                    case SEND -> policy.allows(principal, AccessPolicy.Permission.SEND, namespace);
                    case PURGE -> policy.allows(principal, AccessPolicy.Permission.PURGE, namespace);
                };
            }

            @Override
            public void audited(String principal, String action, String target, String outcome) {
                dev.mailbox.coordination.server.internal.Audit.action(principal, action, target, outcome);
            }

            @Override
            public void refused(String principal, String action, String target, String reason) {
                dev.mailbox.coordination.server.internal.Audit.refused(principal, action, target, reason);
            }
        };
    }

    /**
     * Writes the audit line of a refused call, in the form of the gRPC planes' own refusals, on the
     * {@code dev.mailbox.audit} logger.
     *
     * @param principal who called
     * @param action    what it asked for (for example {@code sqs:SendMessage})
     * @param target    what it would have acted on (a queue, a namespace), or {@code -}
     * @param reason    why it was refused; never a secret or a body
     */
    public static void auditRefusal(String principal, String action, String target, String reason) {
        dev.mailbox.coordination.server.internal.Audit.refused(principal, action, target, reason);
    }
}
