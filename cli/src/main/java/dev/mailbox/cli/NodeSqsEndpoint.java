package dev.mailbox.cli;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.coordination.ClientSecurity;
import dev.mailbox.coordination.RemoteMailbox;
import dev.mailbox.coordination.server.MailboxBackend;
import dev.mailbox.coordination.server.Access;
import dev.mailbox.coordination.server.MailboxNode;
import dev.mailbox.sqsendpoint.AccessKey;
import dev.mailbox.sqsendpoint.AccessKeyStore;
import dev.mailbox.sqsendpoint.QueueDirectory;
import dev.mailbox.sqsendpoint.SqsEndpoint;
import io.grpc.ManagedChannel;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The SQS endpoint of a {@code mailboxctl node start --sqs-listen} process. Each queue's mailbox is a
 * {@link RemoteMailbox} on the node's own data plane, so a call takes the same path as any client's: served here
 * when this node hosts the mailbox (or the backend is shared), forwarded to the owner when a route names another
 * node. On a node-local backend (memory) a queue's name names no node (SQS names hold no '@'), so a queue
 * used here with no route elsewhere is hosted by this node. Queue records (attributes, tags) live in the
 * coordinators' replicated state ({@link ReplicatedQueueDirectory}): every node's endpoint sees the same queues with
 * the same attributes, a restarted node forgets nothing, and concurrent changes from two nodes never lose each
 * other. Only a node without coordinators (not what {@code mailboxctl node start} makes) keeps them in this process
 * ({@link QueueDirectory#inMemory}).
 */
final class NodeSqsEndpoint implements AutoCloseable {

    /**
     * How many SQS receives may wait at once. Each waits in the node's data plane, which lets 256 receives wait in
     * all (its default, {@code MailboxNode.Builder#maxWaitingReceives}): the endpoint takes half, leaving the rest to the node's gRPC clients, so that its waiting receives are never
     * refused as busy there. Past it, an SQS receive answers at once with what the queue has.
     */
    static final int MAX_WAITING_RECEIVES = 128;

    private final SqsEndpoint endpoint;
    private final Set<Mailbox<byte[]>> opened;
    private final MailboxNode node;
    private final Set<String> hostedHere;
    private final @Nullable ActingQueueDirectory acting;
    private final ManagedChannel channel;

    private NodeSqsEndpoint(SqsEndpoint endpoint, Set<Mailbox<byte[]>> opened, MailboxNode node,
                            Set<String> hostedHere, @Nullable ActingQueueDirectory acting, ManagedChannel channel) {
        this.endpoint = endpoint;
        this.acting = acting;
        this.channel = channel;
        this.opened = opened;
        this.node = node;
        this.hostedHere = hostedHere;
    }

    /**
     * @param node            the running node whose data plane serves the queues
     * @param backend         the node's backend
     * @param listen          where to serve HTTP
     * @param keys            access keys as {@code KEY_ID:SECRET[:PRINCIPAL]}; none turns signatures off
     * @param security        how to call the node's data plane (its TLS and token)
     * @param requireSecurity whether the node runs with security required: then keys are required too
     * @return the endpoint, listening
     * @throws IllegalArgumentException for a malformed key, or no key while security is required
     */
    static NodeSqsEndpoint start(MailboxNode node, MailboxBackend backend, InetSocketAddress listen,
                                 List<String> keys, ClientSecurity security, boolean requireSecurity) {
        return start(node, backend, listen, keys, security, requireSecurity, null);
    }

    /**
     * With access rules, every SQS call is checked as the principal its key maps to (an unsigned one, without
     * keys, as {@value SqsEndpoint#ANONYMOUS}), twice: here, before anything, by {@link SqsAccessRules} (which
     * answers a refusal as SQS does, audited, and covers the queue actions the data plane never sees), and by
     * the data plane, because each message call goes there on behalf of that principal
     * ({@link ActingQueueDirectory}): checked by this node, and by the owner when it is forwarded, against the
     * owner's rules. The node's own principal needs the {@code node} role over the queues' namespaces to be
     * believed; it lends the caller none of its rights.
     *
     * @param access the node's access rules, or null when security is off (then every key may do everything)
     * @see #start(MailboxNode, MailboxBackend, InetSocketAddress, List, ClientSecurity, boolean)
     */
    static NodeSqsEndpoint start(MailboxNode node, MailboxBackend backend, InetSocketAddress listen,
                                 List<String> keys, ClientSecurity security, boolean requireSecurity,
                                 @Nullable Access access) {
        return start(node, backend, listen, keys, security, requireSecurity, access, null);
    }

    /**
     * @param https the server context to serve HTTPS with (the node's certificate), or null for plain HTTP (beyond
     *              loopback a warning, or a refusal when {@code requireSecurity})
     * @see #start(MailboxNode, MailboxBackend, InetSocketAddress, List, ClientSecurity, boolean, Access)
     */
    static NodeSqsEndpoint start(MailboxNode node, MailboxBackend backend, InetSocketAddress listen,
                                 List<String> keys, ClientSecurity security, boolean requireSecurity,
                                 @Nullable Access access, javax.net.ssl.@Nullable SSLContext https) {
        if (https == null && !(listen.getAddress() != null ? listen.getAddress().isLoopbackAddress()
                : listen.getHostString().equals("localhost"))) {
            String message = "the SQS endpoint listens on " + listen + " without TLS: message bodies and signed requests"
                    + " cross the network in the clear (add --sqs-tls with the node's --tls-cert)";
            if (requireSecurity) {
                throw new IllegalArgumentException("--require-security is on, so " + message);
            }
            org.slf4j.LoggerFactory.getLogger(NodeSqsEndpoint.class).warn("UNSECURED: {}", message);
        }
        Set<Mailbox<byte[]>> opened = ConcurrentHashMap.newKeySet();
        Set<String> hostedHere = ConcurrentHashMap.newKeySet();
        // one channel to the node's own data plane for every queue and caller: the mailboxes on it are views
        ManagedChannel channel = dev.mailbox.coordination.internal.Tls.channel(node.address(), security)
                .maxInboundMessageSize(dev.mailbox.coordination.wire.DataPlane.MAX_MESSAGE).build();
        try {
            return start(node, backend, listen, keys, requireSecurity, access, https, opened, hostedHere, channel);
        } catch (RuntimeException | Error e) {
            channel.shutdownNow();
            throw e;
        }
    }

    private static NodeSqsEndpoint start(MailboxNode node, MailboxBackend backend, InetSocketAddress listen,
                                         List<String> keys, boolean requireSecurity, @Nullable Access access,
                                         javax.net.ssl.@Nullable SSLContext https, Set<Mailbox<byte[]>> opened,
                                         Set<String> hostedHere, ManagedChannel channel) {
        java.util.function.Function<String, Mailbox<byte[]>> opener = name -> {
            boolean routed = node.routingTable().flatMap(t -> t.route(name)).isPresent();
            if (!backend.shared() && !routed && !node.hosted().contains(name)) {
                node.host(name, backend.open(name));
                hostedHere.add(name);
            }
            Mailbox<byte[]> m = RemoteMailbox.builder(name, Codec.bytes()).channel(channel).build();
            opened.add(m);
            return m;
        };
        QueueDirectory queues = node.coordinator()
                .<QueueDirectory>map(c -> new ReplicatedQueueDirectory(c.queues(), opener))
                .orElseGet(() -> QueueDirectory.inMemory(opener));
        ActingQueueDirectory acting = access == null ? null
                : new ActingQueueDirectory(queues, channel);
        SqsEndpoint.Builder b = SqsEndpoint.builder().queues(acting == null ? queues : acting).listen(listen)
                .maxWaitingReceives(MAX_WAITING_RECEIVES);
        if (access != null) {
            b.authorizer(new SqsAccessRules(access));
        }
        if (https != null) {
            b.tls(https);
        }
        if (keys.isEmpty()) {
            if (requireSecurity) {
                throw new IllegalArgumentException("--require-security is on, so the SQS endpoint needs at least one"
                        + " --sqs-access-key KEY_ID:SECRET[:PRINCIPAL]");
            }
            b.authenticationOff();
        } else {
            AccessKey[] parsed = keys.stream().map(NodeSqsEndpoint::key).toArray(AccessKey[]::new);
            for (AccessKey k : parsed) {
                if (access != null && !k.principal().matches("[\\x21-\\x7e]{1,256}")) {
                    throw new IllegalArgumentException("the principal of SQS access key " + k.accessKeyId() + " must be"
                            + " 1 to 256 printable ASCII characters with no space, as in the access rules");
                }
            }
            b.credentials(AccessKeyStore.of(parsed));
        }
        return new NodeSqsEndpoint(b.start(), opened, node, hostedHere, acting, channel);
    }

    private static AccessKey key(String spec) {
        String[] parts = spec.split(":", 3);
        if (parts.length < 2) {
            throw new IllegalArgumentException("an SQS access key is KEY_ID:SECRET[:PRINCIPAL], was '"
                    + (parts[0].isEmpty() ? spec : parts[0] + ":...") + "'");
        }
        return new AccessKey(parts[0], parts[1], parts.length == 3 ? parts[2] : parts[0]);
    }

    URI url() {
        return endpoint.url();
    }

    @Override
    public void close() {
        endpoint.close();
        if (acting != null) {
            acting.close();
        }
        opened.forEach(Mailbox::close);
        channel.shutdown();
        for (String name : hostedHere) {
            Mailbox<byte[]> m = node.unhost(name);
            if (m != null) {
                m.close();
            }
        }
    }
}
