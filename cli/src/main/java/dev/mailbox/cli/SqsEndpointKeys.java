package dev.mailbox.cli;

import dev.mailbox.coordination.settings.Setting;
import java.net.InetSocketAddress;
import java.util.List;

/**
 * The settings of a node's SQS endpoint ({@link NodeSqsEndpoint}), each defined once like the builders' own
 * ({@link dev.mailbox.coordination.server.NodeKeys}): {@code node start} makes its {@code --sqs-*} flags and config
 * keys from them.
 */
final class SqsEndpointKeys {

    private SqsEndpointKeys() {
    }

    /** Where the SQS endpoint listens; without it there is none. */
    static final Setting<InetSocketAddress> SQS_LISTEN = Setting.address("sqs-listen")
            .help("also serve the SQS HTTP API at HOST:PORT (see above); the other --sqs-* options need it")
            .defaults(s -> null, "none: no SQS endpoint").build();

    /** The access keys it accepts. */
    static final Setting<List<String>> SQS_ACCESS_KEYS = Setting.list("sqs-access-keys", "KEY",
                    t -> t.strip(), k -> k)
            .flags("--sqs-access-key")
            .help("an access key the SQS endpoint accepts in SigV4 signatures, KEY_ID:SECRET[:PRINCIPAL] (principal "
                    + "defaults to the key id), or env:NAME or file:PATH holding such keys (one per line); repeat for "
                    + "more (the key is a comma-separated list). With --access each call is checked against the rules "
                    + "as the key's principal (queues are namespaces; creating and configuring them is an admin's)")
            .defaults(List.of(), "none: unsigned requests are accepted (refused with --require-security)").build();

    /** Whether it serves HTTPS. */
    static final Setting<Boolean> SQS_TLS = Setting.onOff("sqs-tls")
            .help("serve the SQS endpoint over HTTPS with the node's --tls-cert and --tls-key (clients trust the CA "
                    + "that signed it: aws --ca-bundle, boto3 verify=, a JVM trust store)").build();

    /** Every setting of the SQS endpoint. */
    static final List<Setting<?>> ALL = List.of(SQS_LISTEN, SQS_ACCESS_KEYS, SQS_TLS);
}
