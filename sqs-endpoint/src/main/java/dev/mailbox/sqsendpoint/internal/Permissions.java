package dev.mailbox.sqsendpoint.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A queue's access policy ({@code Policy}), as AddPermission and RemovePermission write it and as the endpoint
 * reads it to let a principal do what the {@link dev.mailbox.sqsendpoint.SqsAuthorizer authorizer} alone would
 * refuse. The account ids of AddPermission are the endpoint's principals (the names its access keys map to).
 *
 * <p>What is enforced: statements with {@code "Effect": "Allow"}, a {@code Principal} of {@code "*"} or
 * {@code {"AWS": ...}} naming principals as {@code arn:aws:iam::PRINCIPAL:root}, a bare principal or {@code *},
 * actions as {@code SQS:Action} (any case), {@code sqs:*} or {@code *}, and a {@code Resource} that is the
 * queue's ARN or {@code *} (or none). A statement with a {@code Condition}, and every {@code Deny}, is kept in the
 * policy but grants nothing here (a policy only ever adds to what the authorizer allows).
 */
final class Permissions {

    /** How many actions one AddPermission may name (SQS's limit per statement). */
    static final int MAX_ACTIONS = 7;
    private static final Pattern LABEL = Pattern.compile("[A-Za-z0-9_-]{1,80}");
    /** A principal as the endpoint's access keys and rules name them: printable ASCII, no space. */
    private static final Pattern PRINCIPAL = Pattern.compile("[\\x21-\\x7e]{1,256}");
    /**
     * The actions a permission may name: those on one queue to which SQS applies cross-account permissions (not
     * CreateQueue, DeleteQueue, SetQueueAttributes, the tag calls, AddPermission or RemovePermission, which stay
     * the owner's).
     */
    static final Set<String> GRANTABLE = Set.of("SendMessage", "ReceiveMessage", "DeleteMessage",
            "ChangeMessageVisibility", "GetQueueAttributes", "GetQueueUrl", "ListDeadLetterSourceQueues", "PurgeQueue",
            "StartMessageMoveTask", "ListMessageMoveTasks", "CancelMessageMoveTask");

    private Permissions() {
    }

    /**
     * @param value a Policy attribute as a client set it
     * @return the value to store
     * @throws SqsError InvalidAttributeValue unless it is a JSON object
     */
    static String checkPolicy(String value, ObjectMapper json) {
        JsonNode node;
        try {
            node = json.readTree(value);
        } catch (IOException e) {
            node = null;
        }
        if (node == null || !node.isObject()) {
            throw new SqsError(ErrorCode.INVALID_ATTRIBUTE_VALUE, "Invalid value for the parameter Policy.");
        }
        return value;
    }

    /**
     * @return the policy with a statement for {@code label} added, as AddPermission makes it
     * @throws SqsError as SQS refuses a bad label, principal or action, or a label that exists
     */
    static String add(@Nullable String policy, String queueArn, String label, List<String> principals,
                      List<String> actions, ObjectMapper json) {
        if (!LABEL.matcher(label).matches()) {
            throw SqsError.invalidParameter("Value " + label + " for parameter Label is invalid. Reason: Can only"
                    + " include alphanumeric characters, hyphens, or underscores. 1 to 80 in length.");
        }
        if (principals.isEmpty()) {
            throw SqsError.missing("AWSAccountIds");
        }
        if (actions.isEmpty()) {
            throw SqsError.missing("Actions");
        }
        for (String p : principals) {
            if (!PRINCIPAL.matcher(p).matches()) {
                throw SqsError.invalidParameter("Value " + p + " for parameter AWSAccountIds is invalid. Reason: a"
                        + " principal is 1 to 256 printable ASCII characters with no space.");
            }
        }
        for (String a : actions) {
            if (!a.equals("*") && !GRANTABLE.contains(a)) {
                throw SqsError.invalidParameter("Value SQS:" + a + " for parameter ActionName is invalid. Reason:"
                        + " Please refer to the appropriate WSDL for a list of valid actions.");
            }
        }
        if (actions.size() > MAX_ACTIONS) {
            throw new SqsError(ErrorCode.OVER_LIMIT, actions.size() + " Actions were found, maximum allowed is "
                    + MAX_ACTIONS + ".");
        }
        ObjectNode root = policy == null ? null : object(policy, json);
        if (root == null) {
            root = json.createObjectNode().put("Version", "2012-10-17").put("Id", queueArn + "/SQSDefaultPolicy");
        }
        ArrayNode statements = statements(root);
        for (JsonNode s : statements) {
            if (label.equals(s.path("Sid").asText(null))) {
                throw SqsError.invalidParameter("Value " + label + " for parameter Label is invalid. Reason: Already"
                        + " exists.");
            }
        }
        ObjectNode statement = statements.addObject().put("Sid", label).put("Effect", "Allow");
        ObjectNode principal = statement.putObject("Principal");
        if (principals.size() == 1) {
            principal.put("AWS", principalArn(principals.get(0)));
        } else {
            ArrayNode list = principal.putArray("AWS");
            principals.forEach(p -> list.add(principalArn(p)));
        }
        if (actions.size() == 1) {
            statement.put("Action", "SQS:" + actions.get(0));
        } else {
            ArrayNode list = statement.putArray("Action");
            actions.forEach(a -> list.add("SQS:" + a));
        }
        statement.put("Resource", queueArn);
        return root.toString();
    }

    /**
     * @return the policy without the statement of {@code label}, or the empty string when none is left (the
     *         queue then has no policy)
     * @throws SqsError InvalidParameterValue when no statement has that label
     */
    static String remove(@Nullable String policy, String label, ObjectMapper json) {
        ObjectNode root = policy == null ? null : object(policy, json);
        if (root != null) {
            ArrayNode statements = statements(root);
            for (int i = 0; i < statements.size(); i++) {
                if (label.equals(statements.get(i).path("Sid").asText(null))) {
                    statements.remove(i);
                    return statements.isEmpty() ? "" : root.toString();
                }
            }
        }
        throw SqsError.invalidParameter("Value " + label + " for parameter Label is invalid. Reason: can't find"
                + " label.");
    }

    /**
     * @param policy    a queue's stored policy, or null
     * @param principal the caller
     * @param action    the SQS action
     * @param queueArn  the queue's ARN
     * @return whether an Allow statement of the policy grants the action to the principal on the queue
     */
    static boolean allows(@Nullable String policy, String principal, String action, String queueArn, ObjectMapper json) {
        if (policy == null) {
            return false;
        }
        ObjectNode root = object(policy, json);
        if (root == null) {
            return false;
        }
        String granted = grantedBy(action);
        for (JsonNode s : statementsOf(root)) {
            if (s.path("Effect").asText("").equals("Allow") && !s.has("Condition")
                    && matchesPrincipal(s.get("Principal"), principal) && matchesAction(s.get("Action"), granted)
                    && matchesResource(s.get("Resource"), queueArn)) {
                return true;
            }
        }
        return false;
    }

    /** A batch call is granted with its single form, as SQS grants them. */
    private static String grantedBy(String action) {
        return switch (action) {
            case "SendMessageBatch" -> "SendMessage";
            case "DeleteMessageBatch" -> "DeleteMessage";
            case "ChangeMessageVisibilityBatch" -> "ChangeMessageVisibility";
            default -> action;
        };
    }

    private static String principalArn(String principal) {
        return "arn:aws:iam::" + principal + ":root";
    }

    private static boolean matchesPrincipal(@Nullable JsonNode node, String principal) {
        if (node == null) {
            return false;
        }
        if (node.isTextual()) {
            return node.asText().equals("*");
        }
        JsonNode aws = node.get("AWS");
        if (aws == null) {
            return false;
        }
        for (JsonNode p : aws.isArray() ? aws : List.of(aws)) {
            String text = p.asText("");
            if (text.equals("*") || text.equals(principal) || text.equals(principalArn(principal))) {
                return true;
            }
        }
        return false;
    }

    private static boolean matchesAction(@Nullable JsonNode node, String action) {
        if (node == null) {
            return false;
        }
        for (JsonNode a : node.isArray() ? node : List.of(node)) {
            String text = a.asText("").toLowerCase(Locale.ROOT);
            if (text.equals("*") || text.equals("sqs:*") || text.equals("sqs:" + action.toLowerCase(Locale.ROOT))) {
                return true;
            }
        }
        return false;
    }

    private static boolean matchesResource(@Nullable JsonNode node, String queueArn) {
        if (node == null) {
            return true;
        }
        for (JsonNode r : node.isArray() ? node : List.of(node)) {
            String text = r.asText("");
            if (text.equals("*") || text.equals(queueArn)) {
                return true;
            }
        }
        return false;
    }

    private static @Nullable ObjectNode object(String policy, ObjectMapper json) {
        try {
            JsonNode node = json.readTree(policy);
            return node instanceof ObjectNode o ? o : null;
        } catch (IOException e) {
            return null; // a policy was checked when set; one that does not read grants nothing
        }
    }

    private static ArrayNode statements(ObjectNode root) {
        JsonNode s = root.get("Statement");
        if (s instanceof ArrayNode list) {
            return list;
        }
        ArrayNode list = root.putArray("Statement");
        if (s instanceof ObjectNode one) {
            list.add(one);
        }
        return list;
    }

    private static List<JsonNode> statementsOf(ObjectNode root) {
        JsonNode s = root.get("Statement");
        List<JsonNode> out = new ArrayList<>();
        if (s == null) {
            return out;
        }
        for (JsonNode n : s.isArray() ? s : List.of(s)) {
            out.add(n);
        }
        return out;
    }
}
