package dev.mailbox.sqsendpoint.internal;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mailbox.api.AttributeValue;
import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.Limits;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxException;
import dev.mailbox.api.MailboxFullException;
import dev.mailbox.api.MailboxUnavailableException;
import dev.mailbox.api.Message;
import dev.mailbox.api.MessageTooLargeException;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import dev.mailbox.sqsendpoint.QueueRecord;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The message actions: send, receive (with retention, redrive and FIFO receive attempts), delete and change
 * visibility, one and batch; and {@link #forward}, the copy of a message into another queue that a redrive and a
 * message move task make.
 */
final class Messages {

    private static final Logger LOG = LoggerFactory.getLogger(Messages.class);
    private static final Pattern BATCH_ID = Pattern.compile("[A-Za-z0-9_-]{1,80}");
    /** How often one ReceiveMessage asks the mailbox again when everything it got was expired or dead-lettered. */
    private static final int MAX_ROUNDS = 10;

    private final Context context;

    Messages(Context context) {
        this.context = context;
    }

    // ---- send

    ObjectNode send(Context.Request request) {
        String name = context.queueName(request);
        QueueAttributes.Settings queue = context.settings(context.record(name));
        Outgoing out = Outgoing.of(request.params(), queue, request.principal());
        Mailbox<byte[]> mailbox = context.mailbox(name, request.principal());
        return sendResult(context.json.createObjectNode(), name, store(name, mailbox, out, queue), out);
    }

    /** What one stored message is answered with: its id and, on a FIFO queue, its sequence number. */
    private record Stored(String id, @Nullable String sequenceNumber) {
    }

    /** Stores one message; a FIFO message gets its sequence number here, just before it is stored. */
    private Stored store(String name, Mailbox<byte[]> mailbox, Outgoing out, QueueAttributes.Settings queue) {
        if (!queue.fifo()) {
            String id = sendFailingAsSqs(() -> mailbox.send(out.bytes(), out.options()), queue);
            sent(name, id, out);
            return new Stored(id, null);
        }
        String sequence = context.sequences.next();
        String id = sendFailingAsSqs(() -> mailbox.send(out.bytes(), out.options()
                .withSystemAttribute(Outgoing.SEQUENCE_NUMBER, sequence)), queue);
        return new Stored(id, context.sequences.settled(name, id, sequence));
    }

    ObjectNode sendBatch(Context.Request request) {
        String name = context.queueName(request);
        QueueAttributes.Settings queue = context.settings(context.record(name));
        List<Params> entries = entries(request.params(), "SendMessageBatchRequestEntry");
        long total = 0;
        for (Params e : entries) {
            // as SQS counts a message's size: its body and its attributes' names, types and values
            total += Outgoing.sizeForBatchLimit(e);
        }
        // SQS counts the batch as one payload: its total is held to the queue's MaximumMessageSize, the limit of
        // a single message, so a batch is never a way around it
        int limit = Math.min(queue.maximumMessageSize(), Limits.MAX_MESSAGE_BYTES);
        if (total > limit) {
            throw new SqsError(ErrorCode.BATCH_REQUEST_TOO_LONG, "Batch requests cannot be longer than "
                    + limit + " bytes. You have sent " + total + " bytes.");
        }
        Batch batch = new Batch(context);
        Outgoing[] outs = new Outgoing[entries.size()];
        for (int i = 0; i < entries.size(); i++) {
            try {
                outs[i] = Outgoing.of(entries.get(i), queue, request.principal());
            } catch (SqsError e) {
                batch.failed(entries.get(i).required("Id"), e, true);
            }
        }
        Stored[] stored = new Stored[entries.size()];
        Mailbox<byte[]> mailbox = context.mailbox(name, request.principal());
        if (queue.fifo()) {
            // each entry has its own group and deduplication id: stored one by one, in the batch's order, which
            // is each group's order
            for (int i = 0; i < outs.length; i++) {
                if (outs[i] != null) {
                    try {
                        stored[i] = store(name, mailbox, outs[i], queue);
                    } catch (SqsError e) {
                        batch.failed(entries.get(i).required("Id"), e, e.code.status < 500);
                    }
                }
            }
        } else {
            // entries with the same delay, attributes and group go to the mailbox as one batch
            Map<SendOptions, List<Integer>> groups = new LinkedHashMap<>();
            for (int i = 0; i < outs.length; i++) {
                if (outs[i] != null) {
                    groups.computeIfAbsent(outs[i].options(), k -> new ArrayList<>()).add(i);
                }
            }
            for (Map.Entry<SendOptions, List<Integer>> g : groups.entrySet()) {
                List<Integer> members = g.getValue();
                try {
                    List<String> ids = sendFailingAsSqs(() -> members.size() == 1
                            ? List.of(mailbox.send(outs[members.get(0)].bytes(), g.getKey()))
                            : mailbox.sendBatch(members.stream().map(i -> outs[i].bytes()).toList(), g.getKey()), queue);
                    for (int k = 0; k < members.size(); k++) {
                        stored[members.get(k)] = new Stored(ids.get(k), null);
                        sent(name, ids.get(k), outs[members.get(k)]);
                    }
                } catch (SqsError e) {
                    members.forEach(i -> batch.failed(entries.get(i).required("Id"), e, e.code.status < 500));
                }
            }
        }
        for (int i = 0; i < entries.size(); i++) {
            if (stored[i] != null) {
                batch.succeeded(sendResult(context.json.createObjectNode().put("Id", entries.get(i).required("Id")),
                        name, stored[i], outs[i]));
            }
        }
        return batch.result();
    }

    private void sent(String queue, String id, Outgoing out) {
        Duration delay = out.options().delay();
        if (!delay.isZero()) {
            long now = context.clock.millis();
            context.deliveries.sentDelayed(queue, id, now + delay.toMillis(), now);
        }
    }

    private static ObjectNode sendResult(ObjectNode out, String queue, Stored stored, Outgoing message) {
        out.put("MessageId", Context.messageId(queue, stored.id())).put("MD5OfMessageBody", message.md5OfBody());
        if (message.md5OfAttributes() != null) {
            out.put("MD5OfMessageAttributes", message.md5OfAttributes());
        }
        if (message.md5OfSystemAttributes() != null) {
            out.put("MD5OfMessageSystemAttributes", message.md5OfSystemAttributes());
        }
        if (stored.sequenceNumber() != null) {
            out.put("SequenceNumber", stored.sequenceNumber());
        }
        return out;
    }

    /** Runs a mailbox send, turning what the mailbox refuses into SQS's answers. */
    private static <R> R sendFailingAsSqs(java.util.function.Supplier<R> send, QueueAttributes.Settings queue) {
        try {
            return send.get();
        } catch (MessageTooLargeException e) {
            throw SqsError.invalidParameter("One or more parameters are invalid. Reason: Message must be shorter than "
                    + Math.min(queue.maximumMessageSize(), e.limit()) + " bytes.");
        } catch (MailboxFullException e) {
            throw new SqsError(ErrorCode.OVER_LIMIT, "The queue is full: " + e.getMessage());
        } catch (IllegalArgumentException e) {
            throw SqsError.invalidParameter(String.valueOf(e.getMessage()));
        } catch (MailboxUnavailableException e) {
            throw unavailable(e);
        }
    }

    /**
     * Copies a message into another queue, as a redrive and a message move task do: its body, its attributes with
     * their types and its system attributes (SenderId, trace header, ...) kept, {@code system} set on top (null
     * values removed). Into a FIFO queue it goes to its group (or its tenant's name, or {@code default}) with a
     * deduplication id made from its id, so a copy made twice (a move retried after a failure) is stored once,
     * and a new sequence number.
     *
     * @return the id of the copy
     * @throws MailboxException         if the target refuses it or cannot be reached
     * @throws IllegalArgumentException if the target refuses its options
     */
    String forward(String target, QueueRecord targetRecord, String principal, Message<byte[]> m,
                   Map<String, @Nullable String> system) {
        SendOptions options = SendOptions.defaults().withTypedAttributes(m.typedAttributes());
        Map<String, String> systemAttributes = new LinkedHashMap<>(m.systemAttributes());
        system.forEach((k, v) -> {
            if (v == null) {
                systemAttributes.remove(k);
            } else {
                systemAttributes.put(k, v);
            }
        });
        String group = m.groupId() != null ? m.groupId() : systemAttributes.get(Outgoing.GROUP_ID);
        if (targetRecord.fifo()) {
            String key = FifoOptions.contentDeduplicationId(("forwarded\n" + m.id()).getBytes(StandardCharsets.UTF_8));
            systemAttributes.putIfAbsent(Outgoing.DEDUPLICATION_ID, key);
            systemAttributes.put(Outgoing.SEQUENCE_NUMBER, context.sequences.next());
            options = options.withGroupId(group != null ? group : "default").withDeduplicationId(key);
        } else {
            systemAttributes.remove(Outgoing.SEQUENCE_NUMBER);
            systemAttributes.remove(Outgoing.DEDUPLICATION_ID);
            if (group != null) {
                options = options.withGroupId(group);
                systemAttributes.put(Outgoing.GROUP_ID, group);
            }
        }
        for (Map.Entry<String, String> e : systemAttributes.entrySet()) {
            options = options.withSystemAttribute(e.getKey(), e.getValue());
        }
        return context.mailbox(target, principal).send(m.body(), options);
    }

    // ---- receive

    ObjectNode receive(Context.Request request) {
        Params p = request.params();
        String name = context.queueName(request);
        QueueRecord record = context.record(name);
        QueueAttributes.Settings queue = context.settings(record);
        Integer max = p.integer("MaxNumberOfMessages", 1, 10, "Must be between 1 and 10, if provided");
        Integer visibility = p.integer("VisibilityTimeout", 0, 43_200,
                "VisibilityTimeout must be an integer between 0 and 43200");
        Integer wait = p.integer("WaitTimeSeconds", 0, 20, "Must be >= 0 and <= 20, if provided");
        int visibilitySeconds = visibility != null ? visibility : queue.visibilityTimeout();
        List<String> system = new ArrayList<>(p.strings("AttributeNames"));
        system.addAll(p.strings("MessageSystemAttributeNames"));
        Selector systemSelector = new Selector(system);
        Selector filter = new Selector(p.strings("MessageAttributeNames"));
        String attemptId = p.text("ReceiveRequestAttemptId");
        if (attemptId != null && !Outgoing.TOKEN.matcher(attemptId).matches()) {
            throw SqsError.invalidParameter("Value " + attemptId + " for parameter ReceiveRequestAttemptId is invalid."
                    + " Reason: ReceiveRequestAttemptId can only include alphanumeric and punctuation characters. 1 to"
                    + " 128 in length.");
        }
        // only FIFO queues deduplicate receives, as on SQS; a standard queue ignores the id
        String attemptKey = queue.fifo() && attemptId != null
                ? ReceiveAttempts.key(name, request.principal(), attemptId) : null;

        Mailbox<byte[]> mailbox = context.mailbox(name, request.principal());
        if (attemptKey != null) {
            ObjectNode again = retried(attemptKey, mailbox);
            if (again != null) {
                return again;
            }
        }
        // a delivery that is visible again at once could not be moved to a dead-letter queue or expired (its handle
        // would be stale before it is used), so such receives hold messages for a second and let them go after
        Duration held = Duration.ofSeconds(Math.max(1, visibilitySeconds));
        // a receive the endpoint could not park (it already has as many waiting as it allows) answers with what is
        // there now, as a short poll does, rather than waiting in line for a thread
        int waitSeconds = !request.mayWait() ? 0 : wait != null ? wait : queue.receiveWaitSeconds();
        long deadline = System.nanoTime() + Duration.ofSeconds(waitSeconds).toNanos();
        List<Message<byte[]>> kept = new ArrayList<>();
        for (int round = 0; round < MAX_ROUNDS && kept.isEmpty(); round++) {
            long left = Math.max(0, deadline - System.nanoTime());
            ReceiveOptions options = ReceiveOptions.defaults().withMaxMessages(max != null ? max : 1)
                    .withVisibilityTimeout(held).withWaitTime(Duration.ofNanos(left));
            List<Message<byte[]>> got = receiveFailingAsSqs(mailbox, options);
            if (got.isEmpty()) {
                break;
            }
            for (Message<byte[]> m : got) {
                if (!expired(name, mailbox, m, queue) && !deadLettered(name, mailbox, m, queue, request.principal())) {
                    kept.add(m);
                }
            }
            if (left == 0 && kept.isEmpty()) {
                break;
            }
        }
        ObjectNode out = context.json.createObjectNode();
        ArrayNode list = out.putArray("Messages");
        long now = context.clock.millis();
        List<ObjectNode> rendered = new ArrayList<>();
        List<String> handles = new ArrayList<>();
        for (Message<byte[]> m : kept) {
            if (visibilitySeconds == 0) {
                letGo(mailbox, m);
            }
            long firstReceived = context.deliveries.received(name, m.id(), m.receiptHandle(),
                    now + visibilitySeconds * 1000L, now);
            if (queue.fifo()) {
                context.deliveries.fifoVisibleUntil(name, m.receiptHandle(), now + visibilitySeconds * 1000L);
            }
            ObjectNode one = rendered(name, m, systemSelector, filter, firstReceived, queue);
            list.add(one);
            rendered.add(one);
            handles.add(m.receiptHandle());
        }
        if (attemptKey != null && !kept.isEmpty() && visibilitySeconds > 0) {
            context.attempts.put(attemptKey, new ReceiveAttempts.Attempt(List.copyOf(rendered), List.copyOf(handles),
                    visibilitySeconds, now + ReceiveAttempts.WINDOW_MILLIS));
        }
        return out;
    }

    /**
     * A FIFO receive retried with the attempt id of one this endpoint answered: the same messages and handles, their
     * visibility timeout started again; null when the attempt is unknown, expired, or one of its messages was
     * settled since (then the receive is a new one).
     */
    private @Nullable ObjectNode retried(String key, Mailbox<byte[]> mailbox) {
        long now = context.clock.millis();
        ReceiveAttempts.Attempt attempt = context.attempts.get(key, now);
        if (attempt == null) {
            return null;
        }
        try {
            for (String handle : attempt.handles()) {
                mailbox.extendVisibility(handle, Duration.ofSeconds(attempt.visibilitySeconds()));
            }
        } catch (ReceiptHandleExpiredException | IllegalArgumentException settled) {
            context.attempts.forget(key);
            return null;
        } catch (MailboxUnavailableException e) {
            throw unavailable(e);
        }
        ObjectNode out = context.json.createObjectNode();
        ArrayNode list = out.putArray("Messages");
        attempt.messages().forEach(m -> list.add(m.deepCopy()));
        return out;
    }

    private static List<Message<byte[]>> receiveFailingAsSqs(Mailbox<byte[]> mailbox, ReceiveOptions options) {
        try {
            return mailbox.receive(options);
        } catch (MailboxUnavailableException e) {
            throw unavailable(e);
        }
    }

    /** Deletes, instead of delivering, a message older than the queue's retention period. */
    private boolean expired(String queue, Mailbox<byte[]> mailbox, Message<byte[]> m, QueueAttributes.Settings settings) {
        long ageMillis = context.clock.millis() - m.enqueuedAt().toEpochMilli();
        if (ageMillis <= settings.retentionSeconds() * 1000L) {
            return false;
        }
        try {
            mailbox.acknowledge(m.receiptHandle());
        } catch (MailboxException e) {
            LOG.debug("queue '{}': could not delete message {} past its retention period ({}); a later receive will",
                    queue, m.id(), e.toString());
        }
        return true;
    }

    /**
     * Moves a message received more than maxReceiveCount times to the dead-letter queue: sent there first (with
     * its attributes, system attributes and group, and DeadLetterQueueSourceArn naming this queue), then deleted
     * here, so it is never lost (if the second step fails it is in both, and this receive skips it).
     */
    private boolean deadLettered(String queue, Mailbox<byte[]> mailbox, Message<byte[]> m,
                                 QueueAttributes.Settings settings, String principal) {
        QueueAttributes.Redrive redrive = settings.redrive();
        if (redrive == null || m.deliveryCount() <= redrive.maxReceiveCount()) {
            return false;
        }
        QueueRecord dlq = context.directory.get(redrive.deadLetterQueue()).orElse(null);
        if (dlq == null) {
            LOG.warn("queue '{}': dead-letter queue '{}' does not exist; message {} is delivered instead", queue,
                    redrive.deadLetterQueue(), m.id());
            return false;
        }
        if (!context.authorizer.allows(principal, "SendMessage", redrive.deadLetterQueue())) {
            // the move is a send made for the receiving principal: without this, a redrive policy would let anyone
            // who may configure and receive from one queue write into any other
            LOG.warn("queue '{}': principal {} may not send to dead-letter queue '{}'; message {} is delivered"
                    + " instead", queue, principal, redrive.deadLetterQueue(), m.id());
            return false;
        }
        try {
            // as the receiving principal: a directory that checks rights checks that it may send there too
            forward(redrive.deadLetterQueue(), dlq, principal, m,
                    Map.of(Outgoing.DEAD_LETTER_SOURCE, context.arns.arn(queue)));
        } catch (MailboxException | IllegalArgumentException e) {
            LOG.warn("queue '{}': could not move message {} to dead-letter queue '{}' ({}); it stays and is delivered",
                    queue, m.id(), redrive.deadLetterQueue(), e.toString());
            return false;
        }
        try {
            mailbox.acknowledge(m.receiptHandle());
        } catch (MailboxException e) {
            LOG.warn("queue '{}': message {} was copied to dead-letter queue '{}' but could not be deleted here ({})",
                    queue, m.id(), redrive.deadLetterQueue(), e.toString());
        }
        return true;
    }

    private static void letGo(Mailbox<byte[]> mailbox, Message<byte[]> m) {
        try {
            mailbox.extendVisibility(m.receiptHandle(), Duration.ZERO);
        } catch (MailboxException e) {
            // it becomes visible when its one second ends
        }
    }

    private ObjectNode rendered(String name, Message<byte[]> m, Selector system, Selector filter, long firstReceived,
                                QueueAttributes.Settings queue) {
        Map<String, AttributeValue> attributes = new LinkedHashMap<>(m.typedAttributes());
        Map<String, String> kept = m.systemAttributes();
        String body = text(m.body());
        if (body == null) {
            // bytes SQS cannot carry as text: SqsMailbox's convention
            body = Base64.getEncoder().encodeToString(m.body());
            attributes.put(Outgoing.ENCODING_ATTRIBUTE, AttributeValue.string("base64"));
        }
        ObjectNode out = context.json.createObjectNode();
        out.put("MessageId", Context.messageId(name, m.id())).put("ReceiptHandle", m.receiptHandle())
                .put("MD5OfBody", Digests.ofBody(body)).put("Body", body);
        ObjectNode attrs = context.json.createObjectNode();
        java.util.function.BiConsumer<String, @Nullable String> put = (k, v) -> {
            if (v != null && system.matches(k)) {
                attrs.put(k, v);
            }
        };
        String sender = kept.get(Outgoing.SENDER_ID);
        put.accept(Outgoing.SENDER_ID, sender != null ? sender : context.accountId);
        put.accept("SentTimestamp", Long.toString(m.enqueuedAt().toEpochMilli()));
        put.accept("ApproximateReceiveCount", Integer.toString(m.deliveryCount()));
        put.accept("ApproximateFirstReceiveTimestamp", Long.toString(firstReceived));
        put.accept(Outgoing.TRACE_HEADER, kept.get(Outgoing.TRACE_HEADER));
        String group = m.groupId() != null ? m.groupId() : kept.get(Outgoing.GROUP_ID);
        put.accept(Outgoing.GROUP_ID, group);
        if (queue.fifo()) {
            put.accept(Outgoing.DEDUPLICATION_ID, kept.get(Outgoing.DEDUPLICATION_ID));
            String sequence = kept.get(Outgoing.SEQUENCE_NUMBER);
            put.accept(Outgoing.SEQUENCE_NUMBER, sequence != null ? sequence : m.sequenceNumber());
        }
        put.accept(Outgoing.DEAD_LETTER_SOURCE, kept.get(Outgoing.DEAD_LETTER_SOURCE));
        if (!attrs.isEmpty()) {
            out.set("Attributes", attrs);
        }
        Map<String, AttributeValue> returned = new LinkedHashMap<>();
        attributes.forEach((k, v) -> {
            if (filter.matches(k)) {
                returned.put(k, v);
            }
        });
        if (!returned.isEmpty()) {
            out.put("MD5OfMessageAttributes", Digests.ofAttributes(returned));
            ObjectNode values = out.putObject("MessageAttributes");
            returned.forEach((k, v) -> {
                ObjectNode value = values.putObject(k);
                if (v.isBinary()) {
                    value.put("BinaryValue", v.text());
                } else {
                    value.put("StringValue", v.stringValue());
                }
                value.put("DataType", v.dataType());
            });
        }
        return out;
    }

    /** @return the bytes as text if they are UTF-8 of characters SQS accepts, else null */
    private static @Nullable String text(byte[] bytes) {
        String s;
        try {
            s = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
        try {
            Limits.requireSqsText(s, "body");
        } catch (IllegalArgumentException e) {
            return null;
        }
        return s.isEmpty() ? null : s;
    }

    /**
     * Which attributes a receive asked for, as SQS reads the names: {@code All} or {@code .*} for all, a name, or a
     * prefix ending in {@code .*} ({@code Custom.*} takes every name starting with {@code Custom.}).
     */
    private record Selector(List<String> names) {
        boolean matches(String attribute) {
            for (String n : names) {
                if (n.equals("All") || n.equals(".*") || n.equals(attribute)
                        || (n.endsWith(".*") && attribute.startsWith(n.substring(0, n.length() - 1)))) {
                    return true;
                }
            }
            return false;
        }
    }

    // ---- delete and change visibility

    ObjectNode delete(Context.Request request) {
        String name = context.queueName(request);
        QueueAttributes.Settings queue = context.settings(context.record(name));
        delete(name, context.mailbox(name, request.principal()), request.params().required("ReceiptHandle"), queue);
        return context.json.createObjectNode();
    }

    ObjectNode deleteBatch(Context.Request request) {
        String name = context.queueName(request);
        QueueAttributes.Settings queue = context.settings(context.record(name));
        Mailbox<byte[]> mailbox = context.mailbox(name, request.principal());
        Batch batch = new Batch(context);
        for (Params e : entries(request.params(), "DeleteMessageBatchRequestEntry")) {
            String id = e.required("Id");
            try {
                delete(name, mailbox, e.required("ReceiptHandle"), queue);
                batch.succeeded(context.json.createObjectNode().put("Id", id));
            } catch (SqsError error) {
                batch.failed(id, error, error.code.status < 500);
            }
        }
        return batch.result();
    }

    /**
     * Deletes as SQS does. On a standard queue the most recent handle deletes the message, also after its
     * visibility timeout ended, until it is received again (the mailbox's late acknowledgement), and an older handle
     * succeeds and deletes nothing. On a FIFO queue a handle whose visibility timeout ended is refused.
     */
    private void delete(String queue, Mailbox<byte[]> mailbox, String handle, QueueAttributes.Settings settings) {
        context.attempts.touched(handle);
        if (settings.fifo() && context.deliveries.fifoLapsed(queue, handle, context.clock.millis())) {
            throw expiredHandle(handle);
        }
        try {
            mailbox.acknowledge(handle);
            context.deliveries.deleted(queue, handle);
        } catch (IllegalArgumentException e) {
            throw invalidHandle(handle);
        } catch (ReceiptHandleExpiredException e) {
            context.deliveries.deleted(queue, handle);
            if (settings.fifo()) {
                throw expiredHandle(handle);
            }
            // as on SQS: a handle that is no longer the message's latest (received again, or already deleted) is
            // accepted and deletes nothing
        } catch (MailboxUnavailableException e) {
            throw unavailable(e);
        }
    }

    ObjectNode changeVisibility(Context.Request request) {
        String name = context.queueName(request);
        QueueAttributes.Settings queue = context.settings(context.record(name));
        Params p = request.params();
        String handle = p.required("ReceiptHandle");
        Integer timeout = visibilityTimeout(p);
        if (timeout == null) {
            throw SqsError.missing("VisibilityTimeout");
        }
        changeVisibility(name, context.mailbox(name, request.principal()), handle, timeout, queue);
        return context.json.createObjectNode();
    }

    ObjectNode changeVisibilityBatch(Context.Request request) {
        String name = context.queueName(request);
        QueueAttributes.Settings queue = context.settings(context.record(name));
        Mailbox<byte[]> mailbox = context.mailbox(name, request.principal());
        Batch batch = new Batch(context);
        for (Params e : entries(request.params(), "ChangeMessageVisibilityBatchRequestEntry")) {
            String id = e.required("Id");
            try {
                Integer timeout = visibilityTimeout(e);
                changeVisibility(name, mailbox, e.required("ReceiptHandle"), timeout == null ? 0 : timeout, queue);
                batch.succeeded(context.json.createObjectNode().put("Id", id));
            } catch (SqsError error) {
                batch.failed(id, error, error.code.status < 500);
            }
        }
        return batch.result();
    }

    private static @Nullable Integer visibilityTimeout(Params p) {
        return p.integer("VisibilityTimeout", 0, 43_200, "VisibilityTimeout must be an integer between 0 and 43200");
    }

    private void changeVisibility(String queue, Mailbox<byte[]> mailbox, String handle, int seconds,
                                  QueueAttributes.Settings settings) {
        context.attempts.touched(handle);
        try {
            // extend, not nack: on SQS the handle stays usable after a change, and extend keeps it current; a change
            // to 0 ends the visibility as a lapse does, so the same handle still deletes the message until it is
            // received again (the mailbox's late acknowledgement), as on SQS
            mailbox.extendVisibility(handle, Duration.ofSeconds(seconds));
            long now = context.clock.millis();
            context.deliveries.visibilityChanged(queue, handle, now + seconds * 1000L, now);
            if (settings.fifo()) {
                context.deliveries.fifoVisibleUntil(queue, handle, now + seconds * 1000L);
            }
        } catch (IllegalArgumentException e) {
            throw invalidHandle(handle);
        } catch (ReceiptHandleExpiredException e) {
            throw staleHandle(handle);
        } catch (MailboxUnavailableException e) {
            throw unavailable(e);
        }
    }

    // ---- batches

    /** Checks a batch's entries as SQS does before any entry is acted on. */
    private static List<Params> entries(Params request, String entryName) {
        List<Params> entries = request.structs("Entries");
        if (entries.isEmpty()) {
            throw new SqsError(ErrorCode.EMPTY_BATCH_REQUEST, "There should be at least one " + entryName
                    + " in the request.");
        }
        if (entries.size() > Limits.MAX_BATCH) {
            throw new SqsError(ErrorCode.TOO_MANY_ENTRIES_IN_BATCH_REQUEST, "Maximum number of entries per request"
                    + " are " + Limits.MAX_BATCH + ". You have sent " + entries.size() + ".");
        }
        Set<String> seen = new HashSet<>();
        for (Params e : entries) {
            String id = e.text("Id");
            if (id == null || !BATCH_ID.matcher(id).matches()) {
                throw new SqsError(ErrorCode.INVALID_BATCH_ENTRY_ID, "A batch entry id can only contain alphanumeric"
                        + " characters, hyphens and underscores. It can be at most 80 letters long.");
            }
            if (!seen.add(id)) {
                throw new SqsError(ErrorCode.BATCH_ENTRY_IDS_NOT_DISTINCT, "Id " + id + " repeated.");
            }
        }
        return entries;
    }

    /** A batch's answer: the entries that succeeded and those that failed, each with SQS's code. */
    private static final class Batch {
        private final ObjectNode result;
        private final ArrayNode successful;
        private final ArrayNode failed;

        Batch(Context context) {
            this.result = context.json.createObjectNode();
            this.successful = result.putArray("Successful");
            this.failed = result.putArray("Failed");
        }

        void succeeded(ObjectNode entry) {
            successful.add(entry);
        }

        void failed(String id, SqsError error, boolean senderFault) {
            failed.addObject().put("Id", id).put("SenderFault", senderFault).put("Code", error.code.queryCode)
                    .put("Message", error.getMessage());
        }

        ObjectNode result() {
            return result;
        }
    }

    // ---- errors

    private static SqsError invalidHandle(String handle) {
        return new SqsError(ErrorCode.RECEIPT_HANDLE_IS_INVALID, "The input receipt handle \"" + handle
                + "\" is not a valid receipt handle.");
    }

    private static SqsError staleHandle(String handle) {
        return new SqsError(ErrorCode.RECEIPT_HANDLE_IS_INVALID, "The receipt handle \"" + handle + "\" is no longer"
                + " valid: the message was deleted, received again, or its visibility timeout ended.");
    }

    private static SqsError expiredHandle(String handle) {
        return new SqsError(ErrorCode.RECEIPT_HANDLE_IS_INVALID, "The receipt handle has expired.");
    }

    static SqsError unavailable(MailboxUnavailableException e) {
        return new SqsError(ErrorCode.SERVICE_UNAVAILABLE, "The service is unavailable. Please retry. ("
                + e.getMessage() + ")");
    }
}
