package dev.mailbox.opentelemetry;

import static io.opentelemetry.api.common.AttributeKey.longKey;
import static io.opentelemetry.api.common.AttributeKey.stringKey;

import io.opentelemetry.api.common.AttributeKey;

/**
 * The names of OpenTelemetry's semantic conventions this module uses. They are copied rather than taken from
 * {@code opentelemetry-semconv-incubating}, whose messaging and RPC names may still change between releases (its
 * own advice to libraries); {@code SemConvTest} checks them against that artifact's 1.37.0.
 */
final class SemConv {

    static final AttributeKey<String> MESSAGING_SYSTEM = stringKey("messaging.system");
    static final AttributeKey<String> MESSAGING_OPERATION_NAME = stringKey("messaging.operation.name");
    static final AttributeKey<String> MESSAGING_OPERATION_TYPE = stringKey("messaging.operation.type");
    static final AttributeKey<String> MESSAGING_DESTINATION_NAME = stringKey("messaging.destination.name");
    static final AttributeKey<String> MESSAGING_MESSAGE_ID = stringKey("messaging.message.id");
    static final AttributeKey<Long> MESSAGING_BATCH_MESSAGE_COUNT = longKey("messaging.batch.message_count");
    static final AttributeKey<String> ERROR_TYPE = stringKey("error.type");

    /*
     * Ours, in the messaging.{system} namespace the conventions give each system: which backend holds the
     * mailbox, and how often the message has been delivered.
     * TODO(integrator): add messaging.mailbox.message.group_id from Message.groupId() (being added by another
     * change) to the receive, process and settle spans of a single message, and from the send's group id.
     */
    static final AttributeKey<String> MAILBOX_BACKEND = stringKey("messaging.mailbox.backend");
    static final AttributeKey<Long> MAILBOX_DELIVERY_COUNT = longKey("messaging.mailbox.message.delivery_count");

    /** Our messaging.system: the backend is told apart by {@link #MAILBOX_BACKEND}. */
    static final String SYSTEM = "mailbox";

    static final String SEND = "send";
    static final String RECEIVE = "receive";
    static final String PROCESS = "process";
    static final String SETTLE = "settle";

    static final AttributeKey<String> RPC_SYSTEM = stringKey("rpc.system");
    static final AttributeKey<String> RPC_SERVICE = stringKey("rpc.service");
    static final AttributeKey<String> RPC_METHOD = stringKey("rpc.method");
    static final AttributeKey<Long> RPC_GRPC_STATUS_CODE = longKey("rpc.grpc.status_code");
    static final AttributeKey<String> SERVER_ADDRESS = stringKey("server.address");
    static final AttributeKey<Long> SERVER_PORT = longKey("server.port");

    private SemConv() {
    }
}
