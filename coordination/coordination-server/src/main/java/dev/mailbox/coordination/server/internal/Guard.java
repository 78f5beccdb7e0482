package dev.mailbox.coordination.server.internal;

import com.google.protobuf.Message;
import dev.mailbox.coordination.CoordinationLimits;
import dev.mailbox.coordination.Lease;
import dev.mailbox.coordination.proto.AcquireLeaseRequest;
import dev.mailbox.coordination.proto.CreateNamespaceRequest;
import dev.mailbox.coordination.proto.GetLeasePolicyRequest;
import dev.mailbox.coordination.proto.GetLeaseRequest;
import dev.mailbox.coordination.proto.GetNamespaceRequest;
import dev.mailbox.coordination.proto.ListLeasesRequest;
import dev.mailbox.coordination.proto.ReclaimLeaseRequest;
import dev.mailbox.coordination.proto.RegisterNodeRequest;
import dev.mailbox.coordination.proto.ReleaseLeaseRequest;
import dev.mailbox.coordination.proto.RenewLeaseRequest;
import dev.mailbox.coordination.proto.RenewLeasesRequest;
import dev.mailbox.coordination.proto.RevokeLeaseRequest;
import dev.mailbox.coordination.proto.SetLeasePolicyRequest;
import dev.mailbox.coordination.server.internal.AccessPolicy.Permission;
import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Authorization of the control plane: checks each request against the access policy before the service
 * sees it, so a refused call changes nothing, and writes the audit trail of administrative actions. Leases
 * belong to the runner ids a principal owns: its own name, or names that start with it and a '/'
 * ({@code r1}, {@code r1/worker-2}); a node registers under its own name only.
 *
 * <p>Queue records (what SQS endpoints keep about each queue) follow the mailbox rules: a queue named N is a
 * mailbox named N, in namespace N, so the grants that let a principal use mailbox N decide what it may do with
 * queue N. Reading a record ({@code GetQueue}) needs any grant on N: a client that only sends to a queue must
 * still look it up. Listing shows only the queues the principal could read. Creating, changing and deleting a
 * record configure the mailbox, as setting a lease policy does, and need {@code admin} on N, or the
 * {@code node} role on N: a node's SQS endpoint acts for the callers its own access keys authenticate. A node
 * that names the caller it acts for ({@code mailbox-on-behalf-of}, as on the data plane) vouches for it, and is
 * believed only if it has the node role on N: the named caller is then checked instead of the node, so a node
 * cannot lend its own rights to a caller who lacks them.
 */
public final class Guard implements ServerInterceptor {

    /** Methods that change the cluster's configuration: every outcome is audited. */
    private static final Set<String> ADMIN_ACTIONS = Set.of("RevokeLease", "ReclaimLease", "SetLeasePolicy",
            "CreateNamespace", "AddMember", "RemoveMember", "ImportState", "ExportState", "CreateQueue", "UpdateQueue",
            "DeleteQueue", "ExportStateStream", "ImportStateChunk");

    /**
     * Which queue names a {@code ListQueues} caller may see, or absent when it may see every queue (or security
     * is off): the service filters its answer with it.
     */
    public static final io.grpc.Context.Key<java.util.function.Predicate<String>> QUEUE_FILTER =
            io.grpc.Context.key("mailbox-queue-filter");

    private final AccessPolicy policy;
    private final Function<String, Optional<Lease>> leases;
    private final java.util.function.BooleanSupplier leads;

    /**
     * A Guard that never counts its node's state as the leader's: see {@link #Guard(AccessPolicy, Function,
     * java.util.function.BooleanSupplier)}.
     *
     * @param policy who may do what
     * @param leases the current lease of a mailbox, as this node knows it (to see whose a lease is)
     */
    public Guard(AccessPolicy policy, Function<String, Optional<Lease>> leases) {
        this(policy, leases, () -> false);
    }

    /**
     * @param policy who may do what
     * @param leases the current lease of a mailbox, as this node knows it (to see whose a lease is)
     * @param leads  whether this node leads now: then what it has applied holds every lease a caller can have
     *               been told of. A follower may lag; a renewal or release naming a lease (an epoch) it has not
     *               applied yet is sent back UNAVAILABLE, to be retried where it can be told whose the lease is,
     *               rather than forwarded to the leader unchecked
     */
    public Guard(AccessPolicy policy, Function<String, Optional<Lease>> leases,
                 java.util.function.BooleanSupplier leads) {
        this.policy = policy;
        this.leases = leases;
        this.leads = leads;
    }

    /** Starts what {@link #leaseOfCaller} says when this node cannot tell whose the named lease is (yet). */
    private static final String NOT_APPLIED = "\u0000not applied: ";

    @Override
    public <Q, A> ServerCall.Listener<Q> interceptCall(ServerCall<Q, A> call, Metadata headers,
                                                       ServerCallHandler<Q, A> next) {
        String method = call.getMethodDescriptor().getBareMethodName();
        String caller = Caller.current();
        String vouched = QUEUE_METHODS.contains(String.valueOf(method)) ? headers.get(
                dev.mailbox.coordination.wire.DataPlane.ON_BEHALF_OF) : null;
        // audited as the caller it acts for when a node names one (whether it is believed is decided per queue)
        String principal = vouched == null ? caller : vouched + " via " + caller;
        String[] target = {"-"}; // what the request names, for the audit line written when the call ends
        ServerCall<Q, A> audited = !ADMIN_ACTIONS.contains(String.valueOf(method)) ? call
                : new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
                    @Override
                    public void close(Status status, Metadata trailers) {
                        // a refusal closes the underlying call, not this one: it is audited once, as a refusal
                        Audit.action(principal, method, target[0], status.getCode().name());
                        super.close(status, trailers);
                    }
                };
        ServerCall.Listener<Q> delegate;
        if ("ListQueues".equals(method) && !policy.allows(effective(caller, vouched, "*"), Permission.READ, "*")) {
            // the names are filtered as the service reads them; a node's vouching is weighed per name
            java.util.function.Predicate<String> visible = name -> mayReadQueue(effective(caller, vouched, name), name);
            delegate = io.grpc.Contexts.interceptCall(io.grpc.Context.current().withValue(QUEUE_FILTER, visible), audited,
                    headers, next);
        } else {
            delegate = next.startCall(audited, headers);
        }
        return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(delegate) {
            private boolean refused;

            @Override
            public void onMessage(Q message) {
                target[0] = target((Message) message);
                String why = QUEUE_METHODS.contains(String.valueOf(method))
                        ? queueRefusal(caller, vouched, String.valueOf(method), (Message) message)
                        : refusal(principal, String.valueOf(method), (Message) message);
                if (why != null && why.startsWith(NOT_APPLIED)) {
                    refused = true; // not a refusal of the caller: this node is behind, another can tell
                    call.close(Status.UNAVAILABLE.withDescription(why.substring(NOT_APPLIED.length())), new Metadata());
                    return;
                }
                if (why != null) {
                    refused = true;
                    Audit.refused(principal, String.valueOf(method), target[0], why);
                    call.close(Status.PERMISSION_DENIED.withDescription(principal + " may not " + why),
                            new Metadata());
                    return;
                }
                super.onMessage(message);
            }

            @Override
            public void onHalfClose() {
                if (!refused) {
                    super.onHalfClose();
                }
            }
        };
    }

    private static final Set<String> QUEUE_METHODS = Set.of("CreateQueue", "GetQueue", "ListQueues", "UpdateQueue",
            "DeleteQueue");

    /**
     * @param caller  who calls
     * @param vouched whom the caller names as the one it acts for, or null
     * @param queue   the queue concerned
     * @return the principal whose grants decide: the named one if the caller is a node on that queue's namespace
     */
    private String effective(String caller, @Nullable String vouched, String queue) {
        return vouched != null && policy.allows(caller, Permission.NODE, queue) ? vouched : caller;
    }

    private boolean mayReadQueue(String principal, String queue) {
        for (Permission p : Permission.values()) {
            if (policy.allows(principal, p, queue)) {
                return true;
            }
        }
        return false;
    }

    /** @return what the caller (or the caller a node acts for) may not do to a queue record, or null */
    private @Nullable String queueRefusal(String caller, @Nullable String vouched, String method, Message request) {
        String queue = queueOf(request);
        if (method.equals("ListQueues")) {
            return null; // filtered name by name
        }
        String principal = effective(caller, vouched, queue);
        if (method.equals("GetQueue")) {
            return mayReadQueue(principal, queue) ? null : "read queue '" + queue + "'";
        }
        boolean own = principal.equals(caller); // not acting for a caller it names
        boolean allowed = admin(principal, queue) || (own && policy.allows(caller, Permission.NODE, queue));
        if (allowed) {
            return null;
        }
        String verb = switch (method) {
            case "CreateQueue" -> "create";
            case "UpdateQueue" -> "change";
            default -> "delete";
        };
        return verb + " queue '" + queue + "' (that needs the admin role on namespace '" + queue + "'"
                + (own ? ", or the node role" : "") + ")";
    }

    private static String queueOf(Message request) {
        if (request instanceof dev.mailbox.coordination.proto.CreateQueueRequest c) {
            return c.getQueue().getName();
        }
        var f = request.getDescriptorForType().findFieldByName("name");
        return f == null ? "" : String.valueOf(request.getField(f));
    }

    /** @return what the principal may not do, or null if the request is allowed */
    private @Nullable String refusal(String principal, String method, Message request) {
        return switch (method) {
            case "AcquireLease" -> {
                AcquireLeaseRequest r = (AcquireLeaseRequest) request;
                String ns = CoordinationLimits.namespaceOf(r.getMailboxId());
                if (!leaseAllowed(principal, ns)) {
                    yield "hold leases in namespace '" + ns + "'";
                }
                yield owns(principal, r.getRunnerId()) || admin(principal, ns) ? null
                        : "hold a lease as runner '" + r.getRunnerId() + "' (its runner ids are '" + principal + "' and '"
                        + principal + "/...')";
            }
            case "RenewLease" -> {
                RenewLeaseRequest r = (RenewLeaseRequest) request;
                yield leaseOfCaller(principal, r.getMailboxId(), r.getLeaseId(), r.getEpoch(), "renew");
            }
            case "RenewLeases" -> {
                for (RenewLeaseRequest r : ((RenewLeasesRequest) request).getRenewalsList()) {
                    String why = leaseOfCaller(principal, r.getMailboxId(), r.getLeaseId(), r.getEpoch(), "renew");
                    if (why != null) {
                        yield why;
                    }
                }
                yield null;
            }
            case "ReleaseLease" -> {
                ReleaseLeaseRequest r = (ReleaseLeaseRequest) request;
                yield leaseOfCaller(principal, r.getMailboxId(), r.getLeaseId(), r.getEpoch(), "release");
            }
            case "RevokeLease" -> adminOf(principal, CoordinationLimits.namespaceOf(((RevokeLeaseRequest) request)
                    .getMailboxId()), "revoke leases");
            case "ReclaimLease" -> adminOf(principal, CoordinationLimits.namespaceOf(((ReclaimLeaseRequest) request)
                    .getMailboxId()), "reclaim leases");
            case "SetLeasePolicy" -> adminOf(principal, ((SetLeasePolicyRequest) request).getNamespace(),
                    "set lease policies");
            case "CreateNamespace" -> adminOf(principal, ((CreateNamespaceRequest) request).getName(),
                    "create namespaces");
            case "AddMember", "RemoveMember", "ImportState", "ExportState", "ExportStateStream", "ImportStateChunk" ->
                    adminOf(principal, "*",
                    "change the cluster's membership or state");
            case "GetLease" -> readOf(principal, CoordinationLimits.namespaceOf(((GetLeaseRequest) request).getMailboxId()));
            case "GetLeasePolicy" -> readOf(principal, ((GetLeasePolicyRequest) request).getNamespace());
            case "ListLeases" -> {
                String ns = ((ListLeasesRequest) request).getNamespace();
                yield readOf(principal, ns.isEmpty() ? "*" : ns);
            }
            case "GetNamespace" -> readOf(principal, ((GetNamespaceRequest) request).getName());
            case "ListNodes", "GetPartitionMap", "ListNamespaces", "ListRoutes", "WatchRoutes" -> readOf(principal, "*");
            case "RegisterNode" -> {
                String node = ((RegisterNodeRequest) request).getNode().getNodeId();
                if (admin(principal, "*")) {
                    yield null;
                }
                yield policy.allows(principal, Permission.NODE, CoordinationLimits.NODES_NAMESPACE) && node.equals(principal)
                        ? null : "register node '" + node + "' (a principal with the node role registers as itself)";
            }
            case "ClusterStatus" -> null; // health: any authenticated caller
            default -> "call " + method + " (no rule allows it)";
        };
    }

    private boolean leaseAllowed(String principal, String namespace) {
        Permission needed = namespace.equals(CoordinationLimits.NODES_NAMESPACE) ? Permission.NODE : Permission.LEASE;
        return policy.allows(principal, needed, namespace);
    }

    /** The lease must be the caller's: in a namespace it may hold leases in, under a runner id it owns. */
    private @Nullable String leaseOfCaller(String principal, String mailboxId, long leaseId, long epoch, String verb) {
        String ns = CoordinationLimits.namespaceOf(mailboxId);
        if (admin(principal, ns)) {
            return null;
        }
        if (!leaseAllowed(principal, ns)) {
            return verb + " leases in namespace '" + ns + "'";
        }
        Optional<Lease> lease = leases.apply(mailboxId);
        if (lease.isPresent() && lease.get().leaseId() == leaseId) {
            // a lease id names one runner's lease through its re-acquisitions: whose it is, this node can tell
            return owns(principal, lease.get().runnerId()) ? null
                    : verb + " lease " + leaseId + " of '" + mailboxId + "', held by runner '" + lease.get().runnerId() + "'";
        }
        // epochs only grow: a lease named with a later epoch than this node's (or of a mailbox it has no lease of)
        // may be one it has not applied yet, granted to anyone. The leader has applied every lease a caller can
        // have been told of; a lagging follower sends the call on to be checked where the lease is known
        if ((lease.isEmpty() || lease.get().epoch() < epoch) && !leads.getAsBoolean()) {
            return NOT_APPLIED + "coordinator has not applied epoch " + epoch + " of mailbox '" + mailboxId
                    + "' yet, so it cannot tell whose lease " + leaseId + " is; retry (at the leader)";
        }
        // otherwise a lease this node does not know is an older one, the state machine's to refuse: a wrong id or
        // epoch changes nothing
        return null;
    }

    private @Nullable String adminOf(String principal, String namespace, String what) {
        return admin(principal, namespace) ? null : what + (namespace.equals("*") ? "" : " in namespace '" + namespace + "'");
    }

    private @Nullable String readOf(String principal, String namespace) {
        return policy.allows(principal, Permission.READ, namespace) || policy.allows(principal, Permission.LEASE, namespace)
                ? null : "read " + (namespace.equals("*") ? "the whole cluster's state" : "namespace '" + namespace + "'");
    }

    private boolean admin(String principal, String namespace) {
        return policy.allows(principal, Permission.ADMIN, namespace);
    }

    /** @return whether the runner id is the principal's own: its name, or its name and a '/' and more */
    static boolean owns(String principal, String runnerId) {
        return runnerId.equals(principal) || runnerId.startsWith(principal + "/");
    }

    private static String target(Message request) {
        if (request instanceof dev.mailbox.coordination.proto.CreateQueueRequest c) {
            return c.getQueue().getName();
        }
        for (String field : new String[] {"mailbox_id", "namespace", "name"}) {
            var f = request.getDescriptorForType().findFieldByName(field);
            if (f != null) {
                return String.valueOf(request.getField(f));
            }
        }
        return "-";
    }
}
