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

    /** The defaults of the attributes every queue has, in the order GetQueueAttributes lists them. */
    static final Map<String, String> DEFAULTS;

    static {
        Map<String, String> d = new LinkedHashMap<>();
        d.put(VISIBILITY_TIMEOUT, "30");
        d.put(DELAY_SECONDS, "0");
        d.put(MAXIMUM_MESSAGE_SIZE, "262144");
        d.put(MESSAGE_RETENTION_PERIOD, "345600");
        d.put(RECEIVE_WAIT, "0");
        DEFAULTS = java.util.Collections.unmodifiableMap(d);
    }

    /** Integer attributes and their ranges. */
    private static final Map<String, long[]> RANGES = Map.of(
            VISIBILITY_TIMEOUT, new long[] {0, 43_200},
            DELAY_SECONDS, new long[] {0, 900},
            MAXIMUM_MESSAGE_SIZE, new long[] {1024, 1_048_576},
            MESSAGE_RETENTION_PERIOD, new long[] {60, 1_209_600},
            RECEIVE_WAIT, new long[] {0, 20},
            "KmsDataKeyReusePeriodSeconds", new long[] {60, 86_400});
    /** Accepted and kept, with no effect here (access policy, encryption at rest). */
    private static final Set<String> KEPT_AS_GIVEN = Set.of("Policy", "KmsMasterKeyId", "SqsManagedSseEnabled");
    /** Attributes GetQueueAttributes reports but nobody sets. */
    static final List<String> READ_ONLY = List.of("ApproximateNumberOfMessages",
            "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed", "CreatedTimestamp",
            "LastModifiedTimestamp", "QueueArn");
    /**
     * Attributes only FIFO queues have: GetQueueAttributes may ask for them on a standard queue (SqsMailbox asks
     * for FifoQueue to learn the queue's type) and, as on SQS, gets no value for them.
     */
    private static final Set<String> FIFO_ONLY = Set.of(FIFO_QUEUE, "ContentBasedDeduplication", "DeduplicationScope",
            "FifoThroughputLimit");

    private QueueAttributes() {
    }

    /** A queue's redrive policy, read. */
    record Redrive(String deadLetterQueue, int maxReceiveCount) {
    }

    /** What a queue needs in order to answer: its settings, read from its record once per call. */
    record Settings(int visibilityTimeout, int delaySeconds, int maximumMessageSize, int retentionSeconds,
                    int receiveWaitSeconds, @Nullable Redrive redrive) {
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
                redrive);
    }

    /** @return the stored value, or the default */
    static String value(QueueRecord q, String name) {
        String v = q.attributes().get(name);
        return v != null ? v : DEFAULTS.getOrDefault(name, "");
    }

    private static int intValue(QueueRecord q, String name) {
        return Integer.parseInt(value(q, name));
    }

    /** @return whether GetQueueAttributes knows the name (a settable, kept, read-only or FIFO-only attribute) */
    static boolean isKnown(String name) {
        return FIFO_ONLY.contains(name) || RANGES.containsKey(name) || KEPT_AS_GIVEN.contains(name) || READ_ONLY.contains(name)
                || name.equals(REDRIVE_POLICY) || name.equals(REDRIVE_ALLOW_POLICY);
    }

    /**
     * Checks attributes a client wants to set and puts them in stored form (an empty value for a policy removes
     * it, as on SQS).
     *
     * @param given   the attributes as the client sent them
     * @param creating whether this is CreateQueue (where FifoQueue=false is accepted)
     * @param lookup  finds a queue's record by name, for the redrive checks
     * @param self    the queue's name
     * @return the attributes to store
     * @throws SqsError InvalidAttributeName or InvalidAttributeValue, as SQS
     */
    static Map<String, String> check(Map<String, String> given, boolean creating,
                                     java.util.function.Function<String, @Nullable QueueRecord> lookup, String self,
                                     Arns arns, ObjectMapper json) {
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : given.entrySet()) {
            String name = e.getKey();
            String value = e.getValue();
            long[] range = RANGES.get(name);
            if (range != null) {
                out.put(name, Long.toString(integer(name, value, range)));
            } else if (KEPT_AS_GIVEN.contains(name)) {
                out.put(name, value);
            } else if (name.equals(REDRIVE_POLICY)) {
                out.put(name, value.isEmpty() ? "" : redrivePolicy(value, lookup, self, arns, json));
            } else if (name.equals(REDRIVE_ALLOW_POLICY)) {
                out.put(name, value.isEmpty() ? "" : redriveAllowPolicy(value, arns, json));
            } else if (name.equals(FIFO_QUEUE) && creating) {
                if (value.equalsIgnoreCase("true")) {
                    throw new SqsError(ErrorCode.UNSUPPORTED_OPERATION, "FIFO queues are not supported by this"
                            + " endpoint; create a standard queue.");
                }
                if (!value.equalsIgnoreCase("false")) {
                    throw invalidValue(name);
                }
            } else {
                // read-only, FIFO-only (this is a standard queue) or unknown: SQS answers all alike
                throw new SqsError(ErrorCode.INVALID_ATTRIBUTE_NAME, "Unknown Attribute " + name + ".");
            }
        }
        return out;
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

    private static SqsError invalidValue(String name) {
        return new SqsError(ErrorCode.INVALID_ATTRIBUTE_VALUE, "Invalid value for the parameter " + name + ".");
    }

    private static String redrivePolicy(String value, java.util.function.Function<String, @Nullable QueueRecord> lookup,
                                        String self, Arns arns, ObjectMapper json) {
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
