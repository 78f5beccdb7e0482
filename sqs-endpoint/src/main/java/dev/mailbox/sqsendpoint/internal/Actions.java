package dev.mailbox.sqsendpoint.internal;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mailbox.sqsendpoint.QueueRecord;
import dev.mailbox.sqsendpoint.QueueUpdate;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/**
 * The SQS actions: dispatch, and those on queues (the message actions are in {@link Messages}). Each takes a
 * request's parameters in the JSON protocol's shape and returns the result in the same shape; refusals are
 * {@link SqsError}s.
 */
final class Actions {

    /** Actions SQS has that this endpoint does not serve: none left. */
    private static final Set<String> UNSUPPORTED = Set.of();
    /** The actions {@link #run} serves: every action of SQS's API (2012-11-05). */
    private static final Set<String> SERVED = Set.of("CreateQueue", "GetQueueUrl", "ListQueues", "DeleteQueue",
            "GetQueueAttributes", "SetQueueAttributes", "PurgeQueue", "TagQueue", "UntagQueue", "ListQueueTags",
            "ListDeadLetterSourceQueues", "SendMessage", "SendMessageBatch", "ReceiveMessage", "DeleteMessage",
            "DeleteMessageBatch", "ChangeMessageVisibility", "ChangeMessageVisibilityBatch", "AddPermission",
            "RemovePermission", "StartMessageMoveTask", "ListMessageMoveTasks", "CancelMessageMoveTask");

    /**
     * Refuses an action this endpoint does not serve, as SQS does (InvalidAction, or UnsupportedOperation for one of
     * SQS's it leaves out), before the authorizer is asked: an authenticated caller is told that the action does not
     * exist rather than that it may not perform it.
     *
     * @throws SqsError for any action but those served
     */
    static void requireServed(String action) {
        if (!SERVED.contains(action)) {
            throw UNSUPPORTED.contains(action)
                    ? new SqsError(ErrorCode.UNSUPPORTED_OPERATION, action + " is not supported by this endpoint.")
                    : new SqsError(ErrorCode.INVALID_ACTION, "The action " + action + " is not valid for this"
                    + " endpoint.");
        }
    }
    private static final int MAX_TAGS = 50;
    private static final int MAX_LIST = 1000;

    private final Context context;
    private final Messages messages;
    private final MoveTasks moveTasks;

    Actions(Context context) {
        this.context = context;
        this.messages = new Messages(context);
        this.moveTasks = new MoveTasks(context, messages);
    }

    /** Stops the message move tasks. */
    void close() {
        moveTasks.close();
    }

    /** @return the queue a call is about, for the authorizer: its URL's or path's, or the name it asks for */
    @Nullable String queueOf(String action, Context.Request request) {
        if (action.equals("CreateQueue") || action.equals("GetQueueUrl")) {
            return request.params().text("QueueName");
        }
        if (action.equals("ListQueues")) {
            return null;
        }
        if (action.equals("StartMessageMoveTask") || action.equals("ListMessageMoveTasks")) {
            String arn = request.params().text("SourceArn");
            return arn == null ? null : context.arns.queueName(arn);
        }
        if (action.equals("CancelMessageMoveTask")) {
            String handle = request.params().text("TaskHandle");
            MoveTasks.Task task = handle == null ? null : moveTasks.find(handle);
            return task == null ? null : task.source;
        }
        try {
            return context.queueName(request);
        } catch (SqsError noQueue) {
            return null; // the action will refuse it in its own words
        }
    }

    ObjectNode run(String action, Context.Request request) {
        return switch (action) {
            case "CreateQueue" -> createQueue(request);
            case "GetQueueUrl" -> getQueueUrl(request);
            case "ListQueues" -> listQueues(request);
            case "DeleteQueue" -> deleteQueue(request);
            case "GetQueueAttributes" -> getQueueAttributes(request);
            case "SetQueueAttributes" -> setQueueAttributes(request);
            case "PurgeQueue" -> purgeQueue(request);
            case "TagQueue" -> tagQueue(request);
            case "UntagQueue" -> untagQueue(request);
            case "ListQueueTags" -> listQueueTags(request);
            case "ListDeadLetterSourceQueues" -> listDeadLetterSourceQueues(request);
            case "SendMessage" -> messages.send(request);
            case "SendMessageBatch" -> messages.sendBatch(request);
            case "ReceiveMessage" -> messages.receive(request);
            case "DeleteMessage" -> messages.delete(request);
            case "DeleteMessageBatch" -> messages.deleteBatch(request);
            case "ChangeMessageVisibility" -> messages.changeVisibility(request);
            case "ChangeMessageVisibilityBatch" -> messages.changeVisibilityBatch(request);
            case "AddPermission" -> addPermission(request);
            case "RemovePermission" -> removePermission(request);
            case "StartMessageMoveTask" -> startMessageMoveTask(request);
            case "ListMessageMoveTasks" -> listMessageMoveTasks(request);
            case "CancelMessageMoveTask" -> cancelMessageMoveTask(request);
            default -> {
                requireServed(action);
                throw new IllegalStateException("action " + action + " is served but has no case");
            }
        };
    }

    private ObjectNode result() {
        return context.json.createObjectNode();
    }

    // ---- queues

    private ObjectNode createQueue(Context.Request request) {
        Params p = request.params();
        String name = p.required("QueueName");
        Map<String, String> given = p.stringMap("Attributes");
        boolean fifo = "true".equals(given.get(QueueAttributes.FIFO_QUEUE));
        Context.requireQueueName(name, fifo);
        Map<String, String> attributes = QueueAttributes.check(given, true, fifo, null, this::findOrNull, name,
                context.arns, context.json);
        attributes.values().removeIf(String::isEmpty); // removing a policy means nothing on a new queue
        Map<String, String> tags = new LinkedHashMap<>(p.stringMap("Tags"));
        tags.putAll(p.stringMap("tags"));
        checkTags(tags, Set.of(), name);
        Instant now = context.clock.instant();
        QueueRecord proposed = new QueueRecord(name, attributes, tags, now, now);
        QueueRecord stored;
        try {
            stored = context.directory.createIfAbsent(proposed);
        } catch (UnsupportedOperationException e) {
            throw new SqsError(ErrorCode.UNSUPPORTED_OPERATION, String.valueOf(e.getMessage()));
        }
        if (stored != proposed) {
            for (Map.Entry<String, String> e : attributes.entrySet()) {
                if (!QueueAttributes.value(stored, e.getKey()).equals(e.getValue())) {
                    throw new SqsError(ErrorCode.QUEUE_NAME_EXISTS, "A queue already exists with the same name and a"
                            + " different value for attribute " + e.getKey());
                }
            }
        } else if (fifo) {
            requireFifoMailbox(name, request.principal());
        }
        return result().put("QueueUrl", context.url(request, name));
    }

    /**
     * Refuses a new FIFO queue whose directory gave it a mailbox that is not FIFO (a backend without FIFO mailboxes
     * yet): the queue is deleted again, and the caller told why, rather than served with no order.
     */
    private void requireFifoMailbox(String name, String principal) {
        boolean fifo;
        try {
            fifo = context.mailbox(name, principal).capabilities().fifo();
        } catch (RuntimeException e) {
            context.directory.delete(name);
            throw e;
        }
        if (!fifo) {
            context.directory.delete(name);
            throw new SqsError(ErrorCode.UNSUPPORTED_OPERATION, "FIFO queues are not supported by this endpoint's"
                    + " backend (its mailboxes are not FIFO mailboxes); create a standard queue.");
        }
    }

    private ObjectNode getQueueUrl(Context.Request request) {
        String name = request.params().required("QueueName");
        String owner = request.params().text("QueueOwnerAWSAccountId");
        if ((owner != null && !owner.equals(context.accountId)) || !Context.isQueueName(name)) {
            throw Context.doesNotExist();
        }
        context.record(name);
        return result().put("QueueUrl", context.url(request, name));
    }

    private ObjectNode listQueues(Context.Request request) {
        Params p = request.params();
        String prefix = p.text("QueueNamePrefix");
        Integer max = p.integer("MaxResults", 1, MAX_LIST, "MaxResults must be an integer between 1 and 1000");
        String after = after(p.text("NextToken"));
        int limit = max == null ? MAX_LIST : max;
        // only the queues the authorizer lets the caller see, so a list shows no queue the caller has no right to
        List<String> names = new ArrayList<>();
        String from = after;
        while (names.size() <= limit) {
            List<String> chunk = context.directory.list(prefix == null ? "" : prefix, from, MAX_LIST);
            for (String candidate : chunk) {
                if (names.size() <= limit && context.authorizer.allows(request.principal(), "ListQueues", candidate)) {
                    names.add(candidate);
                }
            }
            if (chunk.size() < MAX_LIST) {
                break;
            }
            from = chunk.get(chunk.size() - 1);
        }
        return page(request, names, limit, max != null, "QueueUrls");
    }

    private ObjectNode page(Context.Request request, List<String> names, int limit, boolean paged, String field) {
        ObjectNode out = result();
        ArrayNode urls = out.putArray(field);
        names.stream().limit(limit).forEach(n -> urls.add(context.url(request, n)));
        if (paged && names.size() > limit) {
            out.put("NextToken", Base64.getUrlEncoder().encodeToString(names.get(limit - 1)
                    .getBytes(StandardCharsets.UTF_8)));
        }
        return out;
    }

    /** @return the name a NextToken stands for (the last one of the page before) */
    private static String after(@Nullable String token) {
        if (token == null) {
            return "";
        }
        try {
            return new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw SqsError.invalidParameter("Invalid NextToken value.");
        }
    }

    private ObjectNode deleteQueue(Context.Request request) {
        String name = context.queueName(request);
        context.record(name);
        // the messages go first, as the caller's purge: a queue created again under the name starts empty, and
        // where the mailboxes check rights (a node's data plane) the directory's own view may not purge. If the
        // purge fails, nothing is deleted and the client retries
        context.mailbox(name, request.principal()).purge();
        if (!context.directory.delete(name)) {
            throw Context.doesNotExist();
        }
        context.deliveries.forget(name);
        moveTasks.forget(name);
        return result();
    }

    private ObjectNode getQueueAttributes(Context.Request request) {
        String name = context.queueName(request);
        QueueRecord q = context.record(name);
        Set<String> wanted = new LinkedHashSet<>(request.params().strings("AttributeNames"));
        for (String w : wanted) {
            if (!w.equals("All") && !QueueAttributes.isKnown(w)) {
                throw new SqsError(ErrorCode.INVALID_ATTRIBUTE_NAME, "Unknown Attribute " + w + ".");
            }
        }
        boolean all = wanted.contains("All");
        Map<String, String> values = new LinkedHashMap<>();
        if (all || wanted.stream().anyMatch(w -> w.startsWith("ApproximateNumberOfMessages"))) {
            long now = context.clock.millis();
            Deliveries.Counts c = context.deliveries.counts(name, context.mailbox(name, request.principal()).approximateCount(), now);
            values.put("ApproximateNumberOfMessages", Long.toString(c.visible()));
            values.put("ApproximateNumberOfMessagesNotVisible", Long.toString(c.notVisible()));
            values.put("ApproximateNumberOfMessagesDelayed", Long.toString(c.delayed()));
        }
        values.put("CreatedTimestamp", Long.toString(q.createdAt().getEpochSecond()));
        values.put("LastModifiedTimestamp", Long.toString(q.lastModifiedAt().getEpochSecond()));
        values.put("QueueArn", context.arns.arn(name));
        QueueAttributes.DEFAULTS.keySet().forEach(k -> values.put(k, QueueAttributes.value(q, k)));
        if (q.fifo()) {
            QueueAttributes.FIFO_DEFAULTS.keySet().forEach(k -> values.put(k, QueueAttributes.value(q, k)));
        }
        values.putAll(q.attributes());
        ObjectNode attributes = result();
        values.forEach((k, v) -> {
            if (all || wanted.contains(k)) {
                attributes.put(k, v);
            }
        });
        ObjectNode out = result();
        out.set("Attributes", attributes);
        return out;
    }

    private ObjectNode setQueueAttributes(Context.Request request) {
        String name = context.queueName(request);
        QueueRecord q = context.record(name);
        Map<String, String> given = request.params().stringMap("Attributes");
        if (given.isEmpty()) {
            throw SqsError.missing("Attribute.Name");
        }
        Map<String, String> attributes = QueueAttributes.check(given, false, q.fifo(), q, this::findOrNull, name,
                context.arns, context.json);
        update(name, new QueueUpdate(attributes, Map.of(), Set.of(), context.clock.instant()));
        return result();
    }

    private ObjectNode purgeQueue(Context.Request request) {
        String name = context.queueName(request);
        context.record(name);
        context.mailbox(name, request.principal()).purge();
        context.deliveries.forget(name);
        return result();
    }

    // ---- tags

    private ObjectNode tagQueue(Context.Request request) {
        String name = context.queueName(request);
        QueueRecord q = context.record(name);
        Map<String, String> tags = request.params().stringMap("Tags");
        if (tags.isEmpty()) {
            throw SqsError.missing("Tags");
        }
        checkTags(tags, q.tags().keySet(), name);
        update(name, new QueueUpdate(Map.of(), tags, Set.of(), context.clock.instant()));
        return result();
    }

    private ObjectNode untagQueue(Context.Request request) {
        String name = context.queueName(request);
        context.record(name);
        List<String> keys = request.params().strings("TagKeys");
        if (keys.isEmpty()) {
            throw SqsError.missing("TagKeys");
        }
        update(name, new QueueUpdate(Map.of(), Map.of(), new TreeSet<>(keys), context.clock.instant()));
        return result();
    }

    private ObjectNode listQueueTags(Context.Request request) {
        QueueRecord q = context.record(context.queueName(request));
        ObjectNode out = result();
        ObjectNode tags = out.putObject("Tags");
        q.tags().forEach(tags::put);
        return out;
    }

    private static void checkTags(Map<String, String> tags, Set<String> existing, String queue) {
        for (Map.Entry<String, String> t : tags.entrySet()) {
            String key = t.getKey();
            if (key.isEmpty() || key.length() > 128 || t.getValue().length() > 256
                    || key.toLowerCase(java.util.Locale.ROOT).startsWith("aws:")) {
                throw SqsError.invalidParameter("Tag keys must be 1 to 128 characters not starting with 'aws:', and"
                        + " values at most 256 characters; '" + key + "' is not.");
            }
        }
        Set<String> after = new TreeSet<>(existing);
        after.addAll(tags.keySet());
        if (after.size() > MAX_TAGS) {
            throw SqsError.invalidParameter("Too many tags added for queue " + queue + ": a queue may have at most "
                    + MAX_TAGS + ".");
        }
    }

    // ---- dead-letter sources

    private ObjectNode listDeadLetterSourceQueues(Context.Request request) {
        String name = context.queueName(request);
        context.record(name);
        Params p = request.params();
        Integer max = p.integer("MaxResults", 1, MAX_LIST, "MaxResults must be an integer between 1 and 1000");
        String after = after(p.text("NextToken"));
        int limit = max == null ? MAX_LIST : max;
        List<String> sources = new ArrayList<>();
        String from = after;
        while (sources.size() <= limit) {
            List<String> chunk = context.directory.list("", from, MAX_LIST);
            for (String candidate : chunk) {
                // like ListQueues: a source queue the caller may not see is not named (and not even read)
                if (!context.authorizer.allows(request.principal(), "ListQueues", candidate)) {
                    continue;
                }
                QueueRecord r = findOrNull(candidate);
                if (r != null) {
                    QueueAttributes.Redrive redrive = context.settings(r).redrive();
                    if (redrive != null && redrive.deadLetterQueue().equals(name)) {
                        sources.add(candidate);
                    }
                }
            }
            if (chunk.size() < MAX_LIST) {
                break;
            }
            from = chunk.get(chunk.size() - 1);
        }
        return page(request, sources, limit, max != null, "queueUrls");
    }

    private @Nullable QueueRecord findOrNull(String queue) {
        return context.directory.get(queue).orElse(null);
    }

    private void update(String name, QueueUpdate change) {
        if (context.directory.update(name, change).isEmpty()) {
            throw Context.doesNotExist();
        }
    }

    // ---- permissions

    private ObjectNode addPermission(Context.Request request) {
        Params p = request.params();
        String name = context.queueName(request);
        String label = p.required("Label");
        List<String> principals = p.strings("AWSAccountIds");
        List<String> actions = p.strings("Actions");
        // read, changed and written back whole: two AddPermissions on one queue at the same instant may keep only
        // one statement (the directory sets attribute values, it does not merge policies); for an administrative
        // call that is rare, and the caller sees its statement missing in the Policy
        QueueRecord q = context.record(name);
        String policy = Permissions.add(q.attributes().get(QueueAttributes.POLICY), context.arns.arn(name), label,
                principals, actions, context.json);
        update(name, new QueueUpdate(Map.of(QueueAttributes.POLICY, policy), Map.of(), Set.of(), context.clock.instant()));
        return result();
    }

    private ObjectNode removePermission(Context.Request request) {
        String name = context.queueName(request);
        String label = request.params().required("Label");
        QueueRecord q = context.record(name);
        String policy = Permissions.remove(q.attributes().get(QueueAttributes.POLICY), label, context.json);
        update(name, new QueueUpdate(Map.of(QueueAttributes.POLICY, policy), Map.of(), Set.of(), context.clock.instant()));
        return result();
    }

    /**
     * @return whether the queue's policy (AddPermission's statements) lets the principal make the call: asked only
     *         when the authorizer alone refuses it
     */
    boolean policyAllows(String principal, String action, @Nullable String queue) {
        if (queue == null || !Permissions.GRANTABLE.contains(grantedAs(action))) {
            return false;
        }
        QueueRecord q = findOrNull(queue);
        return q != null && Permissions.allows(q.attributes().get(QueueAttributes.POLICY), principal, action,
                context.arns.arn(queue), context.json);
    }

    private static String grantedAs(String action) {
        return action.endsWith("Batch") ? action.substring(0, action.length() - "Batch".length()) : action;
    }

    // ---- message move tasks

    private ObjectNode startMessageMoveTask(Context.Request request) {
        Params p = request.params();
        String sourceArn = p.required("SourceArn");
        String source = existingQueue(sourceArn, "SourceArn");
        QueueRecord sourceRecord = context.record(source);
        String destinationArn = p.text("DestinationArn");
        String destination = destinationArn == null ? null : existingQueue(destinationArn, "DestinationArn");
        Integer rate = p.integer("MaxNumberOfMessagesPerSecond", 1, MoveTasks.MAX_RATE,
                "MaxNumberOfMessagesPerSecond must be an integer between 1 and " + MoveTasks.MAX_RATE);
        if (!isDeadLetterQueue(source)) {
            throw SqsError.invalidParameter("Source queue must be configured as a Dead Letter Queue.");
        }
        if (destination != null) {
            if (destination.equals(source)) {
                throw SqsError.invalidParameter("Source and destination queues must be different.");
            }
            if (context.record(destination).fifo() != sourceRecord.fifo()) {
                throw SqsError.invalidParameter("Source and destination queues must be of the same type.");
            }
            if (!context.authorizer.allows(request.principal(), "SendMessage", destination)
                    && !policyAllows(request.principal(), "SendMessage", destination)) {
                throw new SqsError(ErrorCode.ACCESS_DENIED, "User: " + request.principal() + " is not authorized to"
                        + " perform: sqs:SendMessage on resource: " + destination);
            }
        }
        long toMove = context.mailbox(source, request.principal()).approximateCount();
        String handle = moveTasks.start(source, destination, rate, request.principal(), toMove);
        return result().put("TaskHandle", handle);
    }

    private ObjectNode listMessageMoveTasks(Context.Request request) {
        Params p = request.params();
        String source = existingQueue(p.required("SourceArn"), "SourceArn");
        Integer max = p.integer("MaxResults", 1, 10, "MaxResults must be an integer between 1 and 10");
        ObjectNode out = result();
        ArrayNode results = out.putArray("Results");
        moveTasks.list(source, max == null ? 1 : max).forEach(results::add);
        return out;
    }

    private ObjectNode cancelMessageMoveTask(Context.Request request) {
        long moved = moveTasks.cancel(request.params().required("TaskHandle"));
        return result().put("ApproximateNumberOfMessagesMoved", moved);
    }

    /** @return the queue an ARN names; ResourceNotFoundException if it names none here */
    private String existingQueue(String arn, String parameter) {
        String name = context.arns.queueName(arn);
        if (name == null || findOrNull(name) == null) {
            throw new SqsError(ErrorCode.RESOURCE_NOT_FOUND, "The resource that you specified for the " + parameter
                    + " parameter doesn't exist.");
        }
        return name;
    }

    /** @return whether some queue names this one as its dead-letter queue */
    private boolean isDeadLetterQueue(String queue) {
        String from = "";
        while (true) {
            List<String> chunk = context.directory.list("", from, MAX_LIST);
            for (String candidate : chunk) {
                QueueRecord r = findOrNull(candidate);
                if (r != null) {
                    QueueAttributes.Redrive redrive = context.settings(r).redrive();
                    if (redrive != null && redrive.deadLetterQueue().equals(queue)) {
                        return true;
                    }
                }
            }
            if (chunk.size() < MAX_LIST) {
                return false;
            }
            from = chunk.get(chunk.size() - 1);
        }
    }
}
