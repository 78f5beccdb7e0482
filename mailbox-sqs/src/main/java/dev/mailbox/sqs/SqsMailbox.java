package dev.mailbox.sqs;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Limits;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxCapabilities;
import dev.mailbox.api.MailboxClosedException;
import dev.mailbox.api.MailboxException;
import dev.mailbox.api.MailboxUnavailableException;
import dev.mailbox.api.Message;
import dev.mailbox.api.MessageTooLargeException;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.api.SendOptions;
import dev.mailbox.api.spi.Bodies;
import org.jspecify.annotations.Nullable;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.SqsClientBuilder;
import software.amazon.awssdk.services.sqs.model.BatchResultErrorEntry;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchResponse;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.MessageNotInflightException;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;
import software.amazon.awssdk.services.sqs.model.PurgeQueueInProgressException;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueDoesNotExistException;
import software.amazon.awssdk.services.sqs.model.ReceiptHandleIsInvalidException;
import software.amazon.awssdk.services.sqs.model.ReceiveMessageResponse;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchResponse;
import software.amazon.awssdk.services.sqs.model.SqsException;

import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * A {@link Mailbox} on Amazon SQS, or any server that speaks its API (ElasticMQ, LocalStack) given an
 * endpoint override, through the AWS SDK for Java v2 {@link SqsClient}.
 *
 * <p>Mapping: send = SendMessage(Batch), receive = ReceiveMessage, acknowledge = DeleteMessage(Batch),
 * nack and extend = ChangeMessageVisibility, count = ApproximateNumberOfMessages + NotVisible +
 * Delayed, purge = PurgeQueue; delivery count from {@code ApproximateReceiveCount}, enqueued-at from
 * {@code SentTimestamp}; attributes are string message attributes. Dead letters use the queue's own
 * RedrivePolicy, so SQS moves them server-side.
 *
 * <h2>Where SQS differs (declared in {@link #capabilities()})</h2>
 * <ul>
 *   <li>Counts and purge are approximate; order is best effort.</li>
 *   <li>SQS accepts a DeleteMessage with an old receipt handle without telling, so a stale
 *       {@link Message#acknowledge()} returns normally ({@code detectsStaleAcknowledge() == false});
 *       nack and extend with a stale handle do throw {@link ReceiptHandleExpiredException}.</li>
 *   <li>Time is whole seconds: delays and visibility timeouts are rounded up to the next second.</li>
 *   <li>No capacity: the builder refuses one.</li>
 *   <li>A receive waits at most 20 s per SQS call; longer waits loop. {@link #close()} therefore
 *       wakes a waiting receive when its current call ends, within 20 s.</li>
 *   <li>SQS stores a batch entry by entry: if some entries of a {@code sendBatch} fail, the others
 *       are stored and the call throws {@link MailboxUnavailableException} saying how many.</li>
 * </ul>
 *
 * <p>Bodies travel as text when the codec's bytes are valid UTF-8 text SQS accepts (JSON always
 * is); other bytes travel as base64 with a reserved attribute, {@value #ENCODING_ATTRIBUTE}, which
 * counts toward the ten attributes and is hidden from {@link Message#attributes()}.
 *
 * @param <T> the body type
 */
public final class SqsMailbox<T> implements Mailbox<T> {

    /** Marks a body sent as base64 because its bytes are not text SQS accepts. */
    public static final String ENCODING_ATTRIBUTE = "mailbox-encoding";

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-]{1,80}");
    private static final long MAX_WAIT_PER_CALL_SECONDS = 20;
    /**
     * How long before a receive's response the server is assumed to have handed its messages out. A long
     * poll can wait many seconds before a message arrives, so counting visibility from the request's
     * start would declare short-lived handles expired on arrival; SQS hands messages out as it answers.
     */
    private static final long HANDOUT_ALLOWANCE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final String name;
    private final Codec<T> codec;
    private final SqsClient sqs;
    private final boolean ownsClient;
    private final String queueUrl;
    private final int maxMessageBytes;
    private final ReceiveOptions defaults;
    private final MailboxCapabilities capabilities;
    private volatile boolean closed;

    private SqsMailbox(Builder<T> b, SqsClient sqs, boolean ownsClient, String queueUrl) {
        this.name = b.name;
        this.codec = b.codec;
        this.sqs = sqs;
        this.ownsClient = ownsClient;
        this.queueUrl = queueUrl;
        this.maxMessageBytes = b.maxMessageBytes;
        this.defaults = b.defaults;
        this.capabilities = MailboxCapabilities.builder()
                .exactCount(false).fifo(false).detectsStaleAcknowledge(false).capacity(false).atomicDeadLetter(true)
                .maxMessageBytes(maxMessageBytes).timeGranularity(Duration.ofSeconds(1))
                .build();
    }

    /**
     * @param name  the queue's name: 1 to 80 characters from {@code A-Z a-z 0-9 _ -}
     * @param codec how bodies are encoded
     * @param <T>   the body type
     * @return a builder; give it a {@link Builder#client(SqsClient) client} or a
     *         {@link Builder#region(Region) region} (and optionally an endpoint and credentials)
     */
    public static <T> Builder<T> builder(String name, Codec<T> codec) {
        return new Builder<>(name, codec);
    }

    @Override
    public String name() {
        return name;
    }

    /** @return the queue's URL */
    public String queueUrl() {
        return queueUrl;
    }

    @Override
    public MailboxCapabilities capabilities() {
        return capabilities;
    }

    @Override
    public String send(T body, SendOptions options) {
        Objects.requireNonNull(body, "body");
        Objects.requireNonNull(options, "options");
        Outgoing out = outgoing(body, options);
        ensureOpen();
        return call("send", () -> sqs.sendMessage(r -> r.queueUrl(queueUrl).messageBody(out.body)
                .delaySeconds(seconds(options.delay())).messageAttributes(out.attributes))).messageId();
    }

    @Override
    public List<String> sendBatch(List<? extends T> bodies, SendOptions options) {
        Objects.requireNonNull(bodies, "bodies");
        Objects.requireNonNull(options, "options");
        Limits.requireBatchSize(bodies.size(), "batch size");
        List<SendMessageBatchRequestEntry> entries = new ArrayList<>(bodies.size());
        for (int i = 0; i < bodies.size(); i++) {
            Outgoing out = outgoing(Objects.requireNonNull(bodies.get(i), "bodies contains null"), options);
            entries.add(SendMessageBatchRequestEntry.builder().id(Integer.toString(i)).messageBody(out.body)
                    .delaySeconds(seconds(options.delay())).messageAttributes(out.attributes).build());
        }
        ensureOpen();
        SendMessageBatchResponse response = call("sendBatch",
                () -> sqs.sendMessageBatch(r -> r.queueUrl(queueUrl).entries(entries)));
        if (!response.failed().isEmpty()) {
            // SQS stores a batch entry by entry; say exactly which ones were not stored
            BatchResultErrorEntry first = response.failed().get(0);
            throw new MailboxUnavailableException("SQS stored " + response.successful().size() + " of "
                    + entries.size() + " messages of a batch to '" + name + "'; entry " + first.id() + " failed: "
                    + first.code() + " " + first.message(), !Boolean.TRUE.equals(first.senderFault()), null);
        }
        String[] ids = new String[entries.size()];
        response.successful().forEach(e -> ids[Integer.parseInt(e.id())] = e.messageId());
        return List.of(ids);
    }

    @Override
    public List<Message<T>> receive() {
        return receive(defaults);
    }

    @Override
    public List<Message<T>> receive(ReceiveOptions options) {
        Objects.requireNonNull(options, "options");
        ensureOpen();
        long deadline = System.nanoTime() + options.waitTime().toNanos();
        int visibility = seconds(options.visibilityTimeout());
        long visibilityNanos = options.visibilityTimeout().toNanos();
        while (true) {
            long requestStart = System.nanoTime();
            long remaining = deadline - requestStart;
            int wait = remaining <= 0 ? 0 : (int) Math.min(MAX_WAIT_PER_CALL_SECONDS,
                    (TimeUnit.NANOSECONDS.toMillis(remaining) + 999) / 1000);
            ReceiveMessageResponse response = call("receive", () -> sqs.receiveMessage(r -> r.queueUrl(queueUrl)
                    .maxNumberOfMessages(options.maxMessages()).visibilityTimeout(visibility).waitTimeSeconds(wait)
                    .messageAttributeNames("All")
                    .messageSystemAttributeNames(MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT,
                            MessageSystemAttributeName.SENT_TIMESTAMP)));
            if (response.hasMessages() && !response.messages().isEmpty()) {
                long handedOut = Math.max(requestStart, System.nanoTime() - HANDOUT_ALLOWANCE_NANOS);
                List<Message<T>> out = new ArrayList<>(response.messages().size());
                response.messages().forEach(m -> out.add(incoming(m, handedOut + visibilityNanos)));
                return out;
            }
            if (closed || deadline - System.nanoTime() <= 0) {
                return List.of();
            }
        }
    }

    @Override
    public List<Message<T>> acknowledgeBatch(List<? extends Message<T>> messages) {
        Objects.requireNonNull(messages, "messages");
        Limits.requireBatchSize(messages.size(), "batch size");
        List<DeleteMessageBatchRequestEntry> entries = new ArrayList<>(messages.size());
        for (int i = 0; i < messages.size(); i++) {
            entries.add(DeleteMessageBatchRequestEntry.builder().id(Integer.toString(i))
                    .receiptHandle(own(messages.get(i)).receiptHandle()).build());
        }
        ensureOpen();
        DeleteMessageBatchResponse response = call("acknowledgeBatch",
                () -> sqs.deleteMessageBatch(r -> r.queueUrl(queueUrl).entries(entries)));
        List<Message<T>> stale = new ArrayList<>();
        for (BatchResultErrorEntry e : response.failed()) {
            if (!"ReceiptHandleIsInvalid".equals(e.code())) {
                throw new MailboxUnavailableException("SQS failed to delete a message of '" + name + "': " + e.code()
                        + " " + e.message(), !Boolean.TRUE.equals(e.senderFault()), null);
            }
            stale.add(messages.get(Integer.parseInt(e.id())));
        }
        return stale;
    }

    @Override
    public long purge() {
        ensureOpen();
        long before = approximateCount();
        call("purge", () -> sqs.purgeQueue(r -> r.queueUrl(queueUrl)));
        return before;
    }

    @Override
    public long approximateCount() {
        ensureOpen();
        Map<QueueAttributeName, String> a = call("count", () -> sqs.getQueueAttributes(r -> r.queueUrl(queueUrl)
                .attributeNames(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES,
                        QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE,
                        QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_DELAYED))).attributes();
        return a.values().stream().mapToLong(Long::parseLong).sum();
    }

    /** Closes the client too if this mailbox made it. Messages and the queue stay. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (ownsClient) {
            sqs.close();
        }
    }

    @Override
    public String toString() {
        return "SqsMailbox[" + name + ", " + queueUrl + "]";
    }

    // ---- one delivery

    void delete(SqsMessage<T> m) {
        ensureOpen();
        call("acknowledge", m.receiptHandle(),
                () -> sqs.deleteMessage(r -> r.queueUrl(queueUrl).receiptHandle(m.receiptHandle())));
    }

    void changeVisibility(SqsMessage<T> m, Duration timeout, String operation) {
        ensureOpen();
        call(operation, m.receiptHandle(), () -> sqs.changeMessageVisibility(r -> r
                .queueUrl(queueUrl).receiptHandle(m.receiptHandle()).visibilityTimeout(seconds(timeout))));
    }

    // ---- encoding

    private record Outgoing(String body, Map<String, MessageAttributeValue> attributes) {
    }

    private Outgoing outgoing(T body, SendOptions options) {
        if (options.attributes().containsKey(ENCODING_ATTRIBUTE)) {
            throw new IllegalArgumentException("attribute name '" + ENCODING_ATTRIBUTE + "' is reserved by SqsMailbox");
        }
        byte[] bytes = Bodies.encode(codec, body, options.attributes(), maxMessageBytes, name);
        Map<String, String> attributes = options.attributes();
        String text = sqsText(bytes);
        if (text == null) {
            text = Base64.getEncoder().encodeToString(bytes);
            Map<String, String> withMarker = new LinkedHashMap<>(attributes);
            withMarker.put(ENCODING_ATTRIBUTE, "base64");
            if (withMarker.size() > Limits.MAX_ATTRIBUTES) {
                throw new IllegalArgumentException("a binary body is sent as base64 with the attribute '"
                        + ENCODING_ATTRIBUTE + "', which leaves room for " + (Limits.MAX_ATTRIBUTES - 1)
                        + " attributes, not " + attributes.size());
            }
            attributes = withMarker;
            int size = Limits.messageSize(text.length(), attributes);
            if (size > maxMessageBytes) {
                throw new MessageTooLargeException(name, size, maxMessageBytes);
            }
        }
        Map<String, MessageAttributeValue> sqsAttributes = new LinkedHashMap<>();
        attributes.forEach((k, v) -> sqsAttributes.put(k,
                MessageAttributeValue.builder().dataType("String").stringValue(v).build()));
        return new Outgoing(text, sqsAttributes);
    }

    /** @return the bytes as text if they are UTF-8 made only of characters SQS accepts, else null */
    private static @Nullable String sqsText(byte[] bytes) {
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
        try {
            Limits.requireSqsText(text, "body");
            return text;
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    private SqsMessage<T> incoming(software.amazon.awssdk.services.sqs.model.Message m, long deadlineNanos) {
        Map<String, String> attributes = new LinkedHashMap<>();
        boolean base64 = false;
        for (Map.Entry<String, MessageAttributeValue> e : m.messageAttributes().entrySet()) {
            if (e.getKey().equals(ENCODING_ATTRIBUTE)) {
                base64 = "base64".equals(e.getValue().stringValue());
            } else {
                attributes.put(e.getKey(), e.getValue().stringValue());
            }
        }
        Object body;
        try {
            byte[] bytes = base64 ? Base64.getDecoder().decode(m.body()) : m.body().getBytes(StandardCharsets.UTF_8);
            body = Bodies.decode(codec, bytes);
        } catch (IllegalArgumentException e) {
            body = new Bodies.Undecodable("body is not valid base64: " + e.getMessage(), e,
                    m.body().getBytes(StandardCharsets.UTF_8));
        }
        Map<MessageSystemAttributeName, String> system = m.attributes();
        int count = Integer.parseInt(system.getOrDefault(MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT, "1"));
        Instant sent = Instant.ofEpochMilli(Long.parseLong(system.getOrDefault(MessageSystemAttributeName.SENT_TIMESTAMP,
                Long.toString(System.currentTimeMillis()))));
        return new SqsMessage<>(this, m.messageId(), m.receiptHandle(), count, sent,
                Collections.unmodifiableMap(attributes), body, deadlineNanos);
    }

    private SqsMessage<T> own(Message<T> m) {
        if (m instanceof SqsMessage<T> sm && sm.belongsTo(this)) {
            return sm;
        }
        throw new IllegalArgumentException("message " + m.id() + " was not received from mailbox '" + name + "'");
    }

    private static int seconds(Duration d) {
        return (int) ((d.toMillis() + 999) / 1000);
    }

    private void ensureOpen() {
        if (closed) {
            throw new MailboxClosedException(name);
        }
    }

    private <R> R call(String operation, Supplier<R> request) {
        return call(operation, "", request);
    }

    /** Runs an SQS call and maps SDK failures to the mailbox's exceptions. */
    private <R> R call(String operation, String receiptHandle, Supplier<R> request) {
        try {
            return request.get();
        } catch (ReceiptHandleIsInvalidException | MessageNotInflightException e) {
            throw new ReceiptHandleExpiredException(receiptHandle, "receipt handle " + receiptHandle + " given to "
                    + operation + " on mailbox '" + name + "' is stale: " + e.awsErrorDetails().errorMessage());
        } catch (QueueDoesNotExistException e) {
            throw new MailboxException("SQS queue '" + name + "' (" + queueUrl + ") does not exist", e);
        } catch (PurgeQueueInProgressException e) {
            throw new MailboxUnavailableException("SQS allows one purge of '" + name + "' per 60 seconds and one is"
                    + " in progress", true, e);
        } catch (SqsException e) {
            int status = e.statusCode();
            String code = e.awsErrorDetails() == null ? "" : e.awsErrorDetails().errorCode();
            boolean retryable = status >= 500 || status == 429 || e.isThrottlingException()
                    || "RequestThrottled".equals(code) || "ServiceUnavailable".equals(code);
            if (retryable) {
                throw new MailboxUnavailableException("SQS is unavailable for " + operation + " on mailbox '" + name
                        + "': " + e.getMessage(), true, e);
            }
            throw new MailboxException("SQS refused " + operation + " on mailbox '" + name + "': " + e.getMessage(), e);
        } catch (SdkClientException e) {
            throw new MailboxUnavailableException("cannot reach SQS for " + operation + " on mailbox '" + name + "': "
                    + e.getMessage(), !closed, e);
        } catch (SdkException e) {
            throw new MailboxUnavailableException("SQS failed " + operation + " on mailbox '" + name + "': "
                    + e.getMessage(), e.retryable(), e);
        }
    }

    /**
     * Builds an {@link SqsMailbox}: resolves the queue (or creates it with
     * {@link #createIfMissing(boolean)}), applies the redrive policy, and checks the size limit
     * against the queue. Not thread-safe.
     *
     * @param <T> the body type
     */
    public static final class Builder<T> {
        private final String name;
        private final Codec<T> codec;
        private @Nullable SqsClient client;
        private @Nullable Region region;
        private @Nullable URI endpoint;
        private @Nullable AwsCredentialsProvider credentials;
        private @Nullable String queueUrl;
        private boolean create;
        private final Map<QueueAttributeName, String> queueAttributes = new EnumMap<>(QueueAttributeName.class);
        private int maxMessageBytes = Limits.DEFAULT_MAX_MESSAGE_BYTES;
        private ReceiveOptions defaults = ReceiveOptions.defaults();
        private @Nullable RedrivePolicy redrivePolicy;

        private Builder(String name, Codec<T> codec) {
            Objects.requireNonNull(name, "name");
            if (!NAME.matcher(name).matches()) {
                throw new IllegalArgumentException("SQS queue names are 1 to 80 characters from A-Z, a-z, 0-9, '_'"
                        + " and '-', was '" + name + "'");
            }
            this.name = name;
            this.codec = Objects.requireNonNull(codec, "codec");
        }

        /**
         * @param client the SDK client to use, shared by any number of mailboxes; not closed by the mailbox
         * @return this builder
         */
        public Builder<T> client(SqsClient client) {
            this.client = Objects.requireNonNull(client, "client");
            return this;
        }

        /**
         * @param region the region of the client the mailbox makes (and closes) itself
         * @return this builder
         */
        public Builder<T> region(Region region) {
            this.region = Objects.requireNonNull(region, "region");
            return this;
        }

        /**
         * @param endpoint an endpoint override for the mailbox's own client, e.g. ElasticMQ's or LocalStack's
         * @return this builder
         */
        public Builder<T> endpointOverride(URI endpoint) {
            this.endpoint = Objects.requireNonNull(endpoint, "endpoint");
            return this;
        }

        /**
         * @param credentials credentials for the mailbox's own client; default: the SDK's default chain
         * @return this builder
         */
        public Builder<T> credentialsProvider(AwsCredentialsProvider credentials) {
            this.credentials = Objects.requireNonNull(credentials, "credentials");
            return this;
        }

        /**
         * @param queueUrl the queue's URL, used as given instead of resolving the name
         * @return this builder
         */
        public Builder<T> queueUrl(String queueUrl) {
            this.queueUrl = Objects.requireNonNull(queueUrl, "queueUrl");
            return this;
        }

        /**
         * @param create whether to create the queue when it does not exist, with the
         *               {@link #queueAttribute queue attributes} given
         * @return this builder
         */
        public Builder<T> createIfMissing(boolean create) {
            this.create = create;
            return this;
        }

        /**
         * @param attribute a queue attribute to create the queue with, such as VisibilityTimeout,
         *                  MessageRetentionPeriod or MaximumMessageSize
         * @param value     its value
         * @return this builder
         */
        public Builder<T> queueAttribute(QueueAttributeName attribute, String value) {
            queueAttributes.put(Objects.requireNonNull(attribute, "attribute"), Objects.requireNonNull(value, "value"));
            return this;
        }

        /**
         * @param bytes the largest message (encoded body plus attributes), 1 byte to 1 MiB, and no more
         *              than the queue's MaximumMessageSize; default 256 KiB
         * @return this builder
         */
        public Builder<T> maxMessageBytes(int bytes) {
            this.maxMessageBytes = Limits.requireMaxMessageBytes(bytes);
            return this;
        }

        /**
         * @param defaults what {@link SqsMailbox#receive()} uses
         * @return this builder
         */
        public Builder<T> defaultReceiveOptions(ReceiveOptions defaults) {
            this.defaults = Objects.requireNonNull(defaults, "defaults");
            return this;
        }

        /**
         * SQS queues have no capacity; this always refuses, so code that needs one finds out at once.
         *
         * @param capacity 0 is accepted and means no limit
         * @return this builder
         * @throws IllegalArgumentException for any capacity above 0
         */
        public Builder<T> capacity(long capacity) {
            if (Limits.requireCapacity(capacity) > 0) {
                throw new IllegalArgumentException("SQS queues have no capacity; mailbox '" + name
                        + "' cannot be bounded to " + capacity);
            }
            return this;
        }

        /**
         * @param policy dead-lettering through the queue's own RedrivePolicy, to another {@code SqsMailbox}
         *               on the same account and region; set on the queue when the mailbox is built
         * @return this builder
         */
        public Builder<T> redrivePolicy(RedrivePolicy policy) {
            Objects.requireNonNull(policy, "policy");
            if (!(policy.deadLetterMailbox() instanceof SqsMailbox<?>)) {
                throw new IllegalArgumentException("the dead-letter mailbox of an SqsMailbox must be an SqsMailbox, was "
                        + policy.deadLetterMailbox().getClass().getName());
            }
            this.redrivePolicy = policy;
            return this;
        }

        /** @return the mailbox, with its queue resolved (or created) and configured */
        public SqsMailbox<T> build() {
            if ((client == null) == (region == null)) {
                throw new IllegalArgumentException("give exactly one of client(...) and region(...) for mailbox '"
                        + name + "'");
            }
            boolean owns = client == null;
            SqsClient sqs = owns ? ownClient() : client;
            try {
                String url = queueUrl != null ? queueUrl : resolve(sqs);
                if (redrivePolicy != null) {
                    SqsMailbox<?> dlq = (SqsMailbox<?>) redrivePolicy.deadLetterMailbox();
                    String arn = sqs.getQueueAttributes(r -> r.queueUrl(dlq.queueUrl)
                            .attributeNames(QueueAttributeName.QUEUE_ARN)).attributes().get(QueueAttributeName.QUEUE_ARN);
                    String json = "{\"deadLetterTargetArn\":\"" + arn + "\",\"maxReceiveCount\":\""
                            + redrivePolicy.maxReceiveCount() + "\"}";
                    sqs.setQueueAttributes(r -> r.queueUrl(url).attributes(Map.of(QueueAttributeName.REDRIVE_POLICY, json)));
                }
                String max = sqs.getQueueAttributes(r -> r.queueUrl(url).attributeNames(QueueAttributeName.MAXIMUM_MESSAGE_SIZE))
                        .attributes().get(QueueAttributeName.MAXIMUM_MESSAGE_SIZE);
                if (max != null && maxMessageBytes > Integer.parseInt(max)) {
                    throw new IllegalArgumentException("maxMessageBytes " + maxMessageBytes + " is more than queue '"
                            + name + "' allows (MaximumMessageSize " + max + ")");
                }
                return new SqsMailbox<>(this, sqs, owns, url);
            } catch (RuntimeException e) {
                if (owns) {
                    sqs.close();
                }
                throw e;
            }
        }

        private SqsClient ownClient() {
            SqsClientBuilder b = SqsClient.builder().region(region).httpClientBuilder(UrlConnectionHttpClient.builder());
            if (endpoint != null) {
                b.endpointOverride(endpoint);
            }
            if (credentials != null) {
                b.credentialsProvider(credentials);
            }
            return b.build();
        }

        private String resolve(SqsClient sqs) {
            try {
                return sqs.getQueueUrl(r -> r.queueName(name)).queueUrl();
            } catch (QueueDoesNotExistException e) {
                if (!create) {
                    throw new MailboxException("SQS queue '" + name + "' does not exist; create it, or build the"
                            + " mailbox with createIfMissing(true)", e);
                }
                return sqs.createQueue(r -> r.queueName(name).attributes(queueAttributes)).queueUrl();
            }
        }
    }
}
