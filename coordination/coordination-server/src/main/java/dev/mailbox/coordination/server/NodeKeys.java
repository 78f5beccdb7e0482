package dev.mailbox.coordination.server;

import dev.mailbox.coordination.CoordinationLimits;
import dev.mailbox.coordination.settings.Setting;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;

/**
 * The settings of a mailbox node, each defined once (see {@link CoordinatorKeys}): {@link MailboxNode.Builder}
 * starts from these defaults and refuses with these rules, and {@code mailboxctl node start} makes its flags and
 * config keys from them. Its security settings are {@link SecurityKeys}'; the backend, the coordinators' addresses
 * and the SQS endpoint are the process's own ({@code mailboxctl}'s).
 */
public final class NodeKeys {

    private NodeKeys() {
    }

    /** The most waiting receives {@link #MAX_WAITING_RECEIVES} allows. */
    static final int MAX_MAX_WAITING_RECEIVES = 1_000_000;

    /** This node's id. */
    public static final Setting<String> ID = Setting.text("id").name("id").label("ID")
            .help("this node's id: the node of namespace@node mailbox ids, and its name in the routing table")
            .check((v, s) -> {
                String p = CoordinationLimits.nodeIdProblem(v);
                return p == null ? null : p.replaceFirst("^node id ", "");
            })
            .defaults(s -> null, "the builder's argument").processDefault("node-1").build();

    /** Where the data plane listens. */
    public static final Setting<InetSocketAddress> LISTEN = Setting.address("listen").name("listen")
            .help("where the MailboxService (the data plane) listens")
            .defaults(new InetSocketAddress("127.0.0.1", 0), "127.0.0.1 on a free port")
            .processDefault(new InetSocketAddress("127.0.0.1", 9000)).build();

    /** The address routes name for this node. */
    public static final Setting<String> ADVERTISE = Setting.text("advertise").name("advertise").label("HOST:PORT")
            .help("the address routes name for this node, where clients and other nodes reach it, if not --listen")
            .defaults(s -> null, "the --listen address").build();

    /** A placement hint. */
    public static final Setting<String> REGION = Setting.text("region").name("region").label("REGION")
            .help("a placement hint, shown in nodes list").defaults("", "none").build();

    /** How long a mailbox opened on a shared backend stays open without a call. */
    public static final Setting<Duration> IDLE_CLOSE = Setting.millis("idle-close-ms").name("idleClose")
            .help("close a mailbox opened on a shared backend (Redis, SQS) after this long without a call; memory "
                    + "mailboxes hold their messages and stay open")
            .range("more than 0", (v, s) -> v.isNegative() || v.isZero() ? "must be positive, was " + v.toMillis()
                    + " ms" : null)
            .defaults(Duration.ofMinutes(5)).build();

    /** The most receives that may wait at once. */
    public static final Setting<Integer> MAX_WAITING_RECEIVES = Setting.integer("max-waiting-receives")
            .name("maxWaitingReceives")
            .help("the most receives that may wait (long-poll) on this node at once; one past it is refused at once, "
                    + "RESOURCE_EXHAUSTED")
            .range("1 to " + MAX_MAX_WAITING_RECEIVES, (v, s) -> v < 1 || v > MAX_MAX_WAITING_RECEIVES
                    ? "must be a whole number from 1 to " + MAX_MAX_WAITING_RECEIVES + ", was '" + v + "'" : null)
            .defaults(10_000).build();

    /** Every setting of this registry, in the order the reference lists them. */
    public static final List<Setting<?>> ALL = List.of(ID, LISTEN, ADVERTISE, REGION, IDLE_CLOSE, MAX_WAITING_RECEIVES);
}
