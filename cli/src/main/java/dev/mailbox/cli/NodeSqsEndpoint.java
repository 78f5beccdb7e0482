package dev.mailbox.cli;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.coordination.ClientSecurity;
import dev.mailbox.coordination.RemoteMailbox;
import dev.mailbox.coordination.server.MailboxBackend;
import dev.mailbox.coordination.server.MailboxNode;
import dev.mailbox.sqsendpoint.AccessKey;
import dev.mailbox.sqsendpoint.AccessKeyStore;
import dev.mailbox.sqsendpoint.QueueDirectory;
import dev.mailbox.sqsendpoint.SqsEndpoint;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

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

    private final SqsEndpoint endpoint;
    private final Set<Mailbox<byte[]>> opened;
    private final MailboxNode node;
    private final Set<String> hostedHere;

    private NodeSqsEndpoint(SqsEndpoint endpoint, Set<Mailbox<byte[]>> opened, MailboxNode node,
                            Set<String> hostedHere) {
        this.endpoint = endpoint;
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
        Set<Mailbox<byte[]>> opened = ConcurrentHashMap.newKeySet();
        Set<String> hostedHere = ConcurrentHashMap.newKeySet();
        java.util.function.Function<String, Mailbox<byte[]>> opener = name -> {
            boolean routed = node.routingTable().flatMap(t -> t.route(name)).isPresent();
            if (!backend.shared() && !routed && !node.hosted().contains(name)) {
                node.host(name, backend.open(name));
                hostedHere.add(name);
            }
            Mailbox<byte[]> m = RemoteMailbox.builder(name, Codec.bytes()).node(node.address()).security(security)
                    .build();
            opened.add(m);
            return m;
        };
        QueueDirectory queues = node.coordinator()
                .<QueueDirectory>map(c -> new ReplicatedQueueDirectory(c.queues(), opener))
                .orElseGet(() -> QueueDirectory.inMemory(opener));
        SqsEndpoint.Builder b = SqsEndpoint.builder().queues(queues).listen(listen);
        if (keys.isEmpty()) {
            if (requireSecurity) {
                throw new IllegalArgumentException("--require-security is on, so the SQS endpoint needs at least one"
                        + " --sqs-access-key KEY_ID:SECRET[:PRINCIPAL]");
            }
            b.authenticationOff();
        } else {
            b.credentials(AccessKeyStore.of(keys.stream().map(NodeSqsEndpoint::key).toArray(AccessKey[]::new)));
        }
        return new NodeSqsEndpoint(b.start(), opened, node, hostedHere);
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
        opened.forEach(Mailbox::close);
        for (String name : hostedHere) {
            Mailbox<byte[]> m = node.unhost(name);
            if (m != null) {
                m.close();
            }
        }
    }
}
