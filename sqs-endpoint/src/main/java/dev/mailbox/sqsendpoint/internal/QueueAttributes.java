package dev.mailbox.sqsendpoint.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mailbox.sqsendpoint.QueueRecord;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * SQS's queue attributes: which exist, which may be set and to what, their defaults, and the values a queue's
 * record stands for. Values are checked here, once, before anything is stored, so a directory never holds a
 * value SQS would refuse; policies are stored in one canonical JSON form.
 */
final class QueueAttributes {

    static final String VISIBILITY_TIMEOUT = "VisibilityTimeout";
    static final String DELAY_SECONDS = "DelaySeconds";
    static final String MAXIMUM_MESSAGE_SIZE = "MaximumMessageSize";
    static final String MESSAGE_RETENTION_PERIOD = "MessageRetentionPeriod";
    static final String RECEIVE_WAIT = "ReceiveMessageWaitTimeSeconds";
    static final String REDRIVE_POLICY = "RedrivePolicy";
    static final String REDRIVE_ALLOW_POLICY = "RedriveAllowPolicy";
    static final String FIFO_QUEUE = "FifoQueue";
    static final String CONTENT_BASED_DEDUPLICATION = "ContentBasedDeduplication";
    static final String DEDUPLICATION_SCOPE = "DeduplicationScope";
    static final String FIFO_THROUGHPUT_LIMIT = "FifoThroughputLimit";
    static final String POLICY = "Policy";

    /** The defaults of the attributes every queue has, in the order GetQueueAttributes lists them. */
    static final Map<String, String> DEFAULTS;

    static {
        Map<String, String> d = new LinkedHashMap<>();
        d.put(VISIBILITY_TIMEOUT, "30");
        d.put(DELAY_SECONDS, "0");
        d.put(MAXIMUM_MESSAGE_SIZE, Integer.toString(dev.mailbox.api.Limits.MAX_MESSAGE_BYTES));
        d.put(MESSAGE_RETENTION_PERIOD, "345600");
        d.put(RECEIVE_WAIT, "0");
        DEFAULTS = java.util.Collections.unmodifiableMap(d);
        Map<String, String> f = new LinkedHashMap<>();
        f.put(FIFO_QUEUE, "true");
        f.put(CONTENT_BASED_DEDUPLICATION, "false");
        f.put(DEDUPLICATION_SCOPE, "queue");
        f.put(FIFO_THROUGHPUT_LIMIT, "perQueue");
        FIFO_DEFAULTS = java.util.Collections.unmodifiableMap(f);
    }

    /** What a FIFO queue has besides, with their defaults, in the order GetQueueAttributes lists them. */
    static final Map<String, String> FIFO_DEFAULTS;

    /** Integer attributes and their ranges. */
    private static final Map<String, long[]> RANGES = Map.of(
            VISIBILITY_TIMEOUT, new long[] {0, 43_200},
            DELAY_SECONDS, new long[] {0, 900},
            MAXIMUM_MESSAGE_SIZE, new long[] {1024, 1_048_576},
            MESSAGE_RETENTION_PERIOD, new long[] {60, 1_209_600},
            RECEIVE_WAIT, new long[] {0, 20},
            "KmsDataKeyReusePeriodSeconds", new long[] {60, 86_400});
    /** Accepted and kept, with no effect here (encryption at rest). */
    private static final Set<String> KEPT_AS_GIVEN = Set.of("KmsMasterKeyId", "SqsManagedSseEnabled");
    /** Attributes GetQueueAttributes reports but nobody sets. */
    static final List<String> READ_ONLY = List.of("ApproximateNumberOfMessages",
            "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed", "CreatedTimestamp",
            "LastModifiedTimestamp", "QueueArn");
    /**
     * Attributes only FIFO queues have: GetQueueAttributes may ask for them on a standard queue (SqsMailbox asks
     * for FifoQueue to learn the queue's type) and, as on SQS, gets no value for them.
     */
    private static final Set<String> FIFO_ONLY = FIFO_DEFAULTS.keySet();

    private QueueAttributes() {
    }

    /** A queue's redrive policy, read. */
    record Redrive(String deadLetterQueue, int maxReceiveCount) {
    }

    /**
     * What a queue needs in order to answer: its settings, read from its record once per call.
     *
     * @param fifo                      whether it is a FIFO queue
     * @param contentBasedDeduplication a FIFO queue's ContentBasedDeduplication
     * @param groupScope                whether a FIFO queue's DeduplicationScope is messageGroup
     */
    record Settings(int visibilityTimeout, int delaySeconds, int maximumMessageSize, int retentionSeconds,
                    int receiveWaitSeconds, @Nullable Redrive redrive, boolean fifo, boolean contentBasedDeduplication,
                    boolean groupScope) {
    }

    static Settings settings(QueueRecord q, Arns arns, ObjectMapper json) {
        Redrive redrive = null;
        String policy = q.attributes().get(REDRIVE_POLICY);
        if (policy != null) {
            JsonNode node = readJson(json, policy);
            String target = arns.queueName(node.path("deadLetterTargetArn").asText(""));
            if (target != null) {
                redrive = new Redrive(target, node.path("maxReceiveCount").asInt(Integer.MAX_VALUE));
            }
        }
        return new Settings(intValue(q, VISIBILITY_TIMEOUT), intValue(q, DELAY_SECONDS),
                intValue(q, MAXIMUM_MESSAGE_SIZE), intValue(q, MESSAGE_RETENTION_PERIOD), intValue(q, RECEIVE_WAIT),
                redrive, q.fifo(), "true".equals(value(q, CONTENT_BASED_DEDUPLICATION)),
                "messageGroup".equals(value(q, DEDUPLICATION_SCOPE)));
    }

    /** @return the stored value, or the default (a FIFO-only attribute has none on a standard queue) */
    static String value(QueueRecord q, String name) {
        String v = q.attributes().get(name);
        if (v != null) {
            return v;
        }
        String d = DEFAULTS.get(name);
        if (d != null) {
            return d;
        }
        return q.fifo() ? FIFO_DEFAULTS.getOrDefault(name, "") : "";
    }

    private static int intValue(QueueRecord q, String name) {
        return Integer.parseInt(value(q, name));
    }

    /** @return whether GetQueueAttributes knows the name (a settable, kept, read-only or FIFO-only attribute) */
    static boolean isKnown(String name) {
        return FIFO_ONLY.contains(name) || RANGES.containsKey(name) || KEPT_AS_GIVEN.contains(name) || READ_ONLY.contains(name)
                || name.equals(REDRIVE_POLICY) || name.equals(REDRIVE_ALLOW_POLICY) || name.equals(POLICY);
    }

    /**
     * Checks attributes a client wants to set and puts them in stored form (an empty value for a policy removes
     * it, as on SQS).
     *
     * @param given    the attributes as the client sent them
     * @param creating whether this is CreateQueue (where FifoQueue is accepted)
     * @param fifo     whether the queue is (or, for CreateQueue, will be) a FIFO queue
     * @param existing the queue's record as it is, or null for CreateQueue
     * @param lookup   finds a queue's record by name, for the redrive checks
     * @param self     the queue's name
     * @return the attributes to store
     * @throws SqsError InvalidAttributeName or InvalidAttributeValue, as SQS
     */
    static Map<String, String> check(Map<String, String> given, boolean creating, boolean fifo,
                                     @Nullable QueueRecord existing,
                                     java.util.function.Function<String, @Nullable QueueRecord> lookup, String self,
                                     Arns arns, ObjectMapper json) {
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : given.entrySet()) {
            String name = e.getKey();
            String value = e.getValue();
            long[] range = RANGES.get(name);
            if (range != null) {
                long n = integer(name, value, range);
                if (fifo && name.equals(DELAY_SECONDS) && n != 0) {
                    // a FIFO mailbox takes no delay (it would hold back the group); SQS's FIFO queues take a
                    // queue-wide one: a difference of this endpoint, listed in docs/sqs-endpoint.md
                    throw new SqsError(ErrorCode.INVALID_ATTRIBUTE_VALUE, "Invalid value for the parameter "
                            + DELAY_SECONDS + ". Reason: this endpoint's FIFO queues take no delay; 0 only.");
                }
                out.put(name, Long.toString(n));
            } else if (KEPT_AS_GIVEN.contains(name)) {
                out.put(name, value);
            } else if (name.equals(POLICY)) {
                out.put(name, value.isEmpty() ? "" : Permissions.checkPolicy(value, json));
            } else if (name.equals(REDRIVE_POLICY)) {
                out.put(name, value.isEmpty() ? "" : redrivePolicy(value, lookup, self, fifo, arns, json));
            } else if (name.equals(REDRIVE_ALLOW_POLICY)) {
                out.put(name, value.isEmpty() ? "" : redriveAllowPolicy(value, arns, json));
            } else if (name.equals(FIFO_QUEUE) && creating) {
                if (!value.equals("true") && !value.equals("false")) {
                    throw invalidValue(name);
                }
                if (value.equals("true")) {
                    out.put(name, value); // "false" is a standard queue: nothing to store
                }
            } else if (fifo && name.equals(CONTENT_BASED_DEDUPLICATION)) {
                out.put(name, oneOf(name, value, "true", "false"));
            } else if (fifo && name.equals(DEDUPLICATION_SCOPE)) {
                out.put(name, oneOf(name, value, "messageGroup", "queue"));
            } else if (fifo && name.equals(FIFO_THROUGHPUT_LIMIT)) {
                out.put(name, oneOf(name, value, "perQueue", "perMessageGroupId"));
            } else {
                // read-only, FIFO-only (this is a standard queue) or unknown: SQS answers all alike
                throw new SqsError(ErrorCode.INVALID_ATTRIBUTE_NAME, "Unknown Attribute " + name + ".");
            }
        }
        if (fifo) {
            String limit = out.getOrDefault(FIFO_THROUGHPUT_LIMIT, existing == null ? "perQueue"
                    : value(existing, FIFO_THROUGHPUT_LIMIT));
            String scope = out.getOrDefault(DEDUPLICATION_SCOPE, existing == null ? "queue"
                    : value(existing, DEDUPLICATION_SCOPE));
            if (limit.equals("perMessageGroupId") && !scope.equals("messageGroup")) {
                throw new SqsError(ErrorCode.INVALID_ATTRIBUTE_VALUE, "Invalid value for the parameter "
                        + FIFO_THROUGHPUT_LIMIT + ". Reason: perMessageGroupId is allowed only with "
                        + DEDUPLICATION_SCOPE + " messageGroup.");
            }
        }
        return out;
    }

    private static String oneOf(String name, String value, String... allowed) {
        for (String a : allowed) {
            if (a.equals(value)) {
                return value;
            }
        }
        throw invalidValue(name);
    }

    private static long integer(String name, String value, long[] range) {
        long n;
        try {
            n = Long.parseLong(value.strip());
        } catch (NumberFormatException e) {
            throw invalidValue(name);
        }
        if (n < range[0] || n > range[1]) {
            throw invalidValue(name);
        }
        return n;
    }

    static SqsError invalidValue(String name) {
        return new SqsError(ErrorCode.INVALID_ATTRIBUTE_VALUE, "Invalid value for the parameter " + name + ".");
    }

    private static String redrivePolicy(String value, java.util.function.Function<String, @Nullable QueueRecord> lookup,
                                        String self, boolean fifo, Arns arns, ObjectMapper json) {
        JsonNode node = readPolicy(json, value, REDRIVE_POLICY);
        JsonNode arnNode = node.get("deadLetterTargetArn");
        JsonNode countNode = node.get("maxReceiveCount");
        if (arnNode == null || !arnNode.isTextual() || countNode == null) {
            throw invalidPolicy(value, REDRIVE_POLICY, "Redrive policy requires deadLetterTargetArn and"
                    + " maxReceiveCount.");
        }
        int count;
        try {
            count = Integer.parseInt(countNode.asText().strip());
        } catch (NumberFormatException e) {
            count = 0;
        }
        if (count < 1 || count > 1000) {
            throw invalidPolicy(value, REDRIVE_POLICY, "Invalid value for maxReceiveCount: " + countNode.asText()
                    + ", valid values are from 1 to 1000 both inclusive.");
        }
        String target = arns.queueName(arnNode.asText());
        QueueRecord dlq = target == null ? null : lookup.apply(target);
        if (dlq == null) {
            throw invalidPolicy(value, REDRIVE_POLICY, "Dead letter target does not exist.");
        }
        if (target.equals(self)) {
            throw invalidPolicy(value, REDRIVE_POLICY, "Dead letter target cannot be the queue itself.");
        }
        if (dlq.fifo() != fifo) {
            throw invalidPolicy(value, REDRIVE_POLICY, "Dead-letter queue must be same type of queue as the source.");
        }
        String allow = dlq.attributes().get(REDRIVE_ALLOW_POLICY);
        if (allow != null && !allows(readJson(json, allow), arns.arn(self))) {
            throw invalidPolicy(value, REDRIVE_POLICY, "Queue " + arns.arn(self) + " is not allowed by the"
                    + " RedriveAllowPolicy of " + arnNode.asText() + ".");
        }
        ObjectNode canonical = json.createObjectNode();
        canonical.put("deadLetterTargetArn", arns.arn(target));
        canonical.put("maxReceiveCount", count);
        return canonical.toString();
    }

    private static boolean allows(JsonNode allowPolicy, String sourceArn) {
        String permission = allowPolicy.path("redrivePermission").asText();
        if (permission.equals("denyAll")) {
            return false;
        }
        if (permission.equals("byQueue")) {
            for (JsonNode arn : allowPolicy.path("sourceQueueArns")) {
                if (arn.asText().equals(sourceArn)) {
                    return true;
                }
            }
            return false;
        }
        return true;
    }

    private static String redriveAllowPolicy(String value, Arns arns, ObjectMapper json) {
        JsonNode node = readPolicy(json, value, REDRIVE_ALLOW_POLICY);
        String permission = node.path("redrivePermission").asText("");
        JsonNode sources = node.get("sourceQueueArns");
        ObjectNode canonical = json.createObjectNode().put("redrivePermission", permission);
        switch (permission) {
            case "allowAll", "denyAll" -> {
                if (sources != null) {
                    throw invalidPolicy(value, REDRIVE_ALLOW_POLICY, "sourceQueueArns may only be given with"
                            + " redrivePermission byQueue.");
                }
            }
            case "byQueue" -> {
                if (sources == null || !sources.isArray() || sources.isEmpty() || sources.size() > 10) {
                    throw invalidPolicy(value, REDRIVE_ALLOW_POLICY, "redrivePermission byQueue needs 1 to 10"
                            + " sourceQueueArns.");
                }
                ArrayNode list = canonical.putArray("sourceQueueArns");
                for (JsonNode arn : sources) {
                    if (!arn.isTextual() || arns.queueName(arn.asText()) == null) {
                        throw invalidPolicy(value, REDRIVE_ALLOW_POLICY, "'" + arn.asText() + "' is not a queue ARN.");
                    }
                    list.add(arn.asText());
                }
            }
            default -> throw invalidPolicy(value, REDRIVE_ALLOW_POLICY, "redrivePermission must be allowAll,"
                    + " denyAll or byQueue.");
        }
        return canonical.toString();
    }

    private static JsonNode readPolicy(ObjectMapper json, String value, String attribute) {
        JsonNode node;
        try {
            node = json.readTree(value);
        } catch (IOException e) {
            node = null;
        }
        if (node == null || !node.isObject()) {
            throw invalidPolicy(value, attribute, "Invalid JSON.");
        }
        return node;
    }

    private static JsonNode readJson(ObjectMapper json, String stored) {
        try {
            return json.readTree(stored);
        } catch (IOException e) {
            // stored values were checked when they were set; an unreadable one (written by other means) is ignored
            return json.createObjectNode();
        }
    }

    private static SqsError invalidPolicy(String value, String attribute, String reason) {
        return SqsError.invalidParameter("Value " + value + " for parameter " + attribute + " is invalid. Reason: "
                + reason);
    }
}
