package dev.mailbox.sqsendpoint.internal;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
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
import dev.mailbox.sqsendpoint.SqsMessageAttribute;
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
import java.util.function.BiConsumer;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The message actions: send, receive (with retention and redrive), delete and change visibility, one and batch. */
final class Messages {

    private static final Logger LOG = LoggerFactory.getLogger(Messages.class);
    private static final Pattern BATCH_ID = Pattern.compile("[A-Za-z0-9_-]{1,80}");
    private static final Set<String> SYSTEM_ATTRIBUTES = Set.of("SenderId", "SentTimestamp",
            "ApproximateReceiveCount", "ApproximateFirstReceiveTimestamp");
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
        Outgoing out = Outgoing.of(request.params(), queue);
        String id = sendFailingAsSqs(() -> context.mailbox(name, request.principal()).send(out.bytes(), out.options()), queue);
        sent(name, id, out);
        return sendResult(context.json.createObjectNode(), out, id);
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
        // entries with the same delay and attributes go to the mailbox as one batch
        Map<SendOptions, List<Integer>> groups = new LinkedHashMap<>();
        Outgoing[] outs = new Outgoing[entries.size()];
        for (int i = 0; i < entries.size(); i++) {
            try {
                outs[i] = Outgoing.of(entries.get(i), queue);
                groups.computeIfAbsent(outs[i].options(), k -> new ArrayList<>()).add(i);
            } catch (SqsError e) {
                batch.failed(entries.get(i).required("Id"), e, true);
            }
        }
        String[] ids = new String[entries.size()];
        Mailbox<byte[]> mailbox = context.mailbox(name, request.principal());
        for (Map.Entry<SendOptions, List<Integer>> g : groups.entrySet()) {
            List<Integer> members = g.getValue();
            try {
                List<String> stored = sendFailingAsSqs(() -> members.size() == 1
                        ? List.of(mailbox.send(outs[members.get(0)].bytes(), g.getKey()))
                        : mailbox.sendBatch(members.stream().map(i -> outs[i].bytes()).toList(), g.getKey()), queue);
                for (int k = 0; k < members.size(); k++) {
                    ids[members.get(k)] = stored.get(k);
                    sent(name, stored.get(k), outs[members.get(k)]);
                }
            } catch (SqsError e) {
                members.forEach(i -> batch.failed(entries.get(i).required("Id"), e, e.code.status < 500));
            }
        }
        for (int i = 0; i < entries.size(); i++) {
            if (ids[i] != null) {
                batch.succeeded(sendResult(context.json.createObjectNode().put("Id", entries.get(i).required("Id")),
                        outs[i], ids[i]));
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

    private static ObjectNode sendResult(ObjectNode out, Outgoing message, String id) {
        out.put("MessageId", id).put("MD5OfMessageBody", message.md5OfBody());
        if (message.md5OfAttributes() != null) {
            out.put("MD5OfMessageAttributes", message.md5OfAttributes());
        }
        if (message.md5OfSystemAttributes() != null) {
            out.put("MD5OfMessageSystemAttributes", message.md5OfSystemAttributes());
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
        Set<String> system = new HashSet<>(p.strings("AttributeNames"));
        system.addAll(p.strings("MessageSystemAttributeNames"));
        AttributeFilter filter = new AttributeFilter(p.strings("MessageAttributeNames"));

        Mailbox<byte[]> mailbox = context.mailbox(name, request.principal());
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
        for (Message<byte[]> m : kept) {
            if (visibilitySeconds == 0) {
                letGo(mailbox, m);
            }
            long firstReceived = context.deliveries.received(name, m.id(), m.receiptHandle(),
                    now + visibilitySeconds * 1000L, now);
            list.add(rendered(m, system, filter, firstReceived));
        }
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
     * Moves a message received more than maxReceiveCount times to the dead-letter queue: sent there first, then
     * deleted here, so it is never lost (if the second step fails it is in both, and this receive skips it).
     */
    private boolean deadLettered(String queue, Mailbox<byte[]> mailbox, Message<byte[]> m,
                                 QueueAttributes.Settings settings, String principal) {
        QueueAttributes.Redrive redrive = settings.redrive();
        if (redrive == null || m.deliveryCount() <= redrive.maxReceiveCount()) {
            return false;
        }
        if (context.directory.get(redrive.deadLetterQueue()).isEmpty()) {
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
            context.mailbox(redrive.deadLetterQueue(), principal).send(m.body(),
                    SendOptions.defaults().withAttributes(m.attributes()));
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

    private ObjectNode rendered(Message<byte[]> m, Set<String> system, AttributeFilter filter, long firstReceived) {
        Map<String, SqsMessageAttribute> attributes = new LinkedHashMap<>();
        m.attributes().forEach((k, v) -> attributes.put(k, SqsMessageAttribute.decode(v)));
        SqsMessageAttribute trace = attributes.remove(Outgoing.TRACE_HEADER); // a system attribute, not a message one
        String body = text(m.body());
        if (body == null) {
            // bytes SQS cannot carry as text: SqsMailbox's convention
            body = Base64.getEncoder().encodeToString(m.body());
            attributes.put(Outgoing.ENCODING_ATTRIBUTE, SqsMessageAttribute.string("base64"));
        }
        ObjectNode out = context.json.createObjectNode();
        out.put("MessageId", m.id()).put("ReceiptHandle", m.receiptHandle())
                .put("MD5OfBody", Digests.ofBody(body)).put("Body", body);
        boolean all = system.contains("All");
        ObjectNode attrs = context.json.createObjectNode();
        BiConsumer<String, String> put = (k, v) -> {
            if (all || system.contains(k)) {
                attrs.put(k, v);
            }
        };
        put.accept("SenderId", context.accountId);
        put.accept("SentTimestamp", Long.toString(m.enqueuedAt().toEpochMilli()));
        put.accept("ApproximateReceiveCount", Integer.toString(m.deliveryCount()));
        put.accept("ApproximateFirstReceiveTimestamp", Long.toString(firstReceived));
        if (trace != null && trace.stringValue() != null) {
            put.accept(Outgoing.TRACE_HEADER, trace.stringValue());
        }
        if (!attrs.isEmpty()) {
            out.set("Attributes", attrs);
        }
        Map<String, SqsMessageAttribute> returned = new LinkedHashMap<>();
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

    /** Which message attributes a receive asked for: names, {@code prefix.*}, or {@code All} / {@code .*}. */
    private record AttributeFilter(List<String> names) {
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
        context.record(name);
        delete(name, context.mailbox(name, request.principal()), request.params().required("ReceiptHandle"));
        return context.json.createObjectNode();
    }

    ObjectNode deleteBatch(Context.Request request) {
        String name = context.queueName(request);
        context.record(name);
        Mailbox<byte[]> mailbox = context.mailbox(name, request.principal());
        Batch batch = new Batch(context);
        for (Params e : entries(request.params(), "DeleteMessageBatchRequestEntry")) {
            String id = e.required("Id");
            try {
                delete(name, mailbox, e.required("ReceiptHandle"));
                batch.succeeded(context.json.createObjectNode().put("Id", id));
            } catch (SqsError error) {
                batch.failed(id, error, error.code.status < 500);
            }
        }
        return batch.result();
    }

    private void delete(String queue, Mailbox<byte[]> mailbox, String handle) {
        try {
            mailbox.acknowledge(handle);
            context.deliveries.deleted(queue, handle);
        } catch (IllegalArgumentException e) {
            throw invalidHandle(handle);
        } catch (ReceiptHandleExpiredException e) {
            // as on SQS: a handle that is no longer the message's latest (received again, let go, or already
            // deleted) is accepted and deletes nothing, which is what SqsEndpoint's Javadoc promises
            context.deliveries.deleted(queue, handle);
        } catch (MailboxUnavailableException e) {
            throw unavailable(e);
        }
    }

    ObjectNode changeVisibility(Context.Request request) {
        String name = context.queueName(request);
        context.record(name);
        Params p = request.params();
        String handle = p.required("ReceiptHandle");
        Integer timeout = visibilityTimeout(p);
        if (timeout == null) {
            throw SqsError.missing("VisibilityTimeout");
        }
        changeVisibility(name, context.mailbox(name, request.principal()), handle, timeout);
        return context.json.createObjectNode();
    }

    ObjectNode changeVisibilityBatch(Context.Request request) {
        String name = context.queueName(request);
        context.record(name);
        Mailbox<byte[]> mailbox = context.mailbox(name, request.principal());
        Batch batch = new Batch(context);
        for (Params e : entries(request.params(), "ChangeMessageVisibilityBatchRequestEntry")) {
            String id = e.required("Id");
            try {
                Integer timeout = visibilityTimeout(e);
                changeVisibility(name, mailbox, e.required("ReceiptHandle"), timeout == null ? 0 : timeout);
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

    private void changeVisibility(String queue, Mailbox<byte[]> mailbox, String handle, int seconds) {
        try {
            // extend, not nack: on SQS the handle stays usable after a change, and extend keeps it current
            mailbox.extendVisibility(handle, Duration.ofSeconds(seconds));
            long now = context.clock.millis();
            context.deliveries.visibilityChanged(queue, handle, now + seconds * 1000L, now);
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

    private static SqsError unavailable(MailboxUnavailableException e) {
        return new SqsError(ErrorCode.SERVICE_UNAVAILABLE, "The service is unavailable. Please retry. ("
                + e.getMessage() + ")");
    }
}
