package dev.mailbox.sqs;

import dev.mailbox.api.Codec;
import dev.mailbox.api.FencedException;
import dev.mailbox.api.FifoOptions;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.SqsClientBuilder;
import software.amazon.awssdk.services.sqs.model.BatchResultErrorEntry;
import software.amazon.awssdk.services.sqs.model.ChangeMessageVisibilityBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.ChangeMessageVisibilityBatchResponse;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchResponse;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.MessageNotInflightException;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeNameForSends;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeValue;
import software.amazon.awssdk.services.sqs.model.PurgeQueueInProgressException;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueDoesNotExistException;
import software.amazon.awssdk.services.sqs.model.ReceiptHandleIsInvalidException;
import software.amazon.awssdk.services.sqs.model.ReceiveMessageRequest;
import software.amazon.awssdk.services.sqs.model.ReceiveMessageResponse;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchResponse;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchResultEntry;
import software.amazon.awssdk.services.sqs.model.SendMessageRequest;
import software.amazon.awssdk.services.sqs.model.SqsException;

import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * A {@link Mailbox} on Amazon SQS, or any server that speaks its API (ElasticMQ, LocalStack) given an
 * endpoint override, through the AWS SDK for Java v2 {@link SqsClient}.
 *
 * <p>Mapping: send = SendMessage(Batch), receive = ReceiveMessage, acknowledge = DeleteMessage(Batch),
 * nack and extend = ChangeMessageVisibility, count = ApproximateNumberOfMessages + NotVisible +
 * Delayed, purge = PurgeQueue; delivery count from {@code ApproximateReceiveCount}, enqueued-at from
 * {@code SentTimestamp}; attributes are message attributes (typed, see below). Dead letters use the queue's own
 * RedrivePolicy, so SQS moves them server-side. A receipt handle is SQS's own, so
 * {@link #acknowledge(String)}, {@link #nack(String, Duration)} and {@link #extendVisibility(String, Duration)}
 * work from any {@code SqsMailbox}, in any process, on the same queue.
 *
 * <h2>Where SQS differs (declared in {@link #capabilities()})</h2>
 * <ul>
 *   <li>Counts and purge are approximate; order is best effort on a standard queue (per group on a FIFO
 *       queue, below).</li>
 *   <li>SQS accepts a DeleteMessage with an old receipt handle without telling, so a stale
 *       {@link Message#acknowledge()} returns normally ({@code detectsStaleAcknowledge() == false});
 *       nack and extend with a stale handle do throw {@link ReceiptHandleExpiredException}.</li>
 *   <li>SQS does not enforce a handle's deadline for ChangeMessageVisibility (ElasticMQ even revives a
 *       lapsed handle), so this object keeps the deadlines of the last {@value #MAX_TRACKED_DELIVERIES}
 *       deliveries it received. Once a deadline has passed it refuses nack and extend of that delivery, on the
 *       message and by handle; a delivery it acknowledged or nacked itself is refused for every call.
 *       Acknowledge is not refused for the deadline alone: on a standard queue SQS deletes a lapsed message by
 *       its most recent handle, as the contract's late acknowledgement says
 *       ({@code lateAcknowledge() == true}), and does not delete one that was delivered again; on a FIFO queue
 *       SQS lets the handle expire with the visibility timeout and refuses it ({@code lateAcknowledge() ==
 *       false}), so the message's own {@link Message#acknowledge()} is refused here once its deadline has
 *       passed. {@link #acknowledge(String)} by handle leaves the deadline to SQS either way, because this
 *       object does not see an extend or nack made through another object. For the same reason, after an extend through another
 *       object, nack and extend through the receiving object are refused once its own deadline has passed:
 *       extend a delivery through the object that will settle it. Calls by handle on an object that did not
 *       receive the delivery rely on SQS's checks alone ({@code sharedDeliveryState() == false}): to SQS a nack
 *       with a timeout is only a longer invisibility, so another object still extends or nacks that
 *       delivery.</li>
 *   <li>Time is whole seconds: delays and visibility timeouts are rounded up to the next second.</li>
 *   <li>No capacity: the builder refuses one.</li>
 *   <li>A receive waits at most 20 s per SQS call; longer waits loop. {@link #close()} therefore
 *       wakes a waiting receive when its current call ends, within 20 s.</li>
 *   <li>A receive that waits runs each SQS call on a thread of its own, so an interrupt ends it at once (it
 *       throws {@link MailboxUnavailableException}, not retryable, with the interrupt kept). The SQS call goes
 *       on to its end; messages it hands out are made visible again as soon as it answers, each with one more
 *       receive counted.</li>
 *   <li>SQS stores a batch entry by entry: if some entries of a {@code sendBatch} fail, the others
 *       are stored and the call throws {@link MailboxUnavailableException} saying how many.</li>
 *   <li><b>Fencing is per object</b> ({@code atomicFencing() == false}): see {@link #fenced(long)}.</li>
 *   <li><b>Send deduplication</b> is SQS's own on a FIFO queue ({@code durableDeduplication() == true}) and
 *       this object's on a standard queue ({@code false}): see {@link #send(Object, SendOptions)}.</li>
 * </ul>
 *
 * <h2>FIFO queues</h2>
 * A mailbox built with {@link Builder#fifo(FifoOptions)} (or with the queue attribute FifoQueue {@code "true"},
 * or given the URL of a FIFO queue) is a FIFO mailbox on an SQS FIFO queue ({@code capabilities().fifo()}),
 * with every rule of {@link Mailbox}'s "FIFO mailboxes" as SQS keeps them. The queue's name is the mailbox's
 * plus {@code .fifo}, as SQS requires, so the mailbox's name can have at most 75 characters.
 * <ul>
 *   <li><b>Sending.</b> The {@link SendOptions#withGroupId group id} is the MessageGroupId; a send without one,
 *       or with a per-message delay, is refused with {@link IllegalArgumentException} before anything is sent
 *       ({@link Limits#requireFifoSend}). A batch is one SendMessageBatch, in its order.</li>
 *   <li><b>Receiving.</b> {@link Message#groupId()} is the MessageGroupId and {@link Message#sequenceNumber()}
 *       the SequenceNumber SQS gives (at most 128 bits, growing within a group). Each ReceiveMessage call carries
 *       a ReceiveRequestAttemptId of its own, so when the SDK sends a call again because its answer was lost,
 *       SQS returns the same messages instead of keeping them, and their groups, hidden for the visibility
 *       timeout. A receive may return several messages of one group (a run), as SQS does.</li>
 *   <li><b>Deduplication</b> is SQS's, for its five minutes, whoever sends ({@code durableDeduplication() ==
 *       true}); this object keeps no state for it. The MessageDeduplicationId is the caller's id (a batch's
 *       {@code id + "/" + i}; an id longer than SQS's 128 characters is replaced by its SHA-256). A send without
 *       one, with {@link FifoOptions#contentBasedDeduplication()}, is left to the queue's ContentBasedDeduplication
 *       where the queue has it (SQS hashes the body as sent: the text, or the base64 of a binary body), so that
 *       it matches what other producers send to the queue; where the queue has not, this object sends
 *       {@link FifoOptions#contentDeduplicationId} of the encoded body. Without content-based deduplication such
 *       a send gets a random id, so that SQS never drops it, even on a queue with ContentBasedDeduplication.</li>
 *   <li><b>Deduplication scope.</b> {@link FifoOptions.DeduplicationScope#GROUP} is SQS's DeduplicationScope
 *       {@code messageGroup} where the queue reports it. Where it does not (a queue made with the queue scope, or
 *       a server without the attribute, such as ElasticMQ), this object writes the group into every id
 *       ({@code <length of group>:<group>:<id>}), which scopes it just as well among this library's senders (an
 *       id that another producer sends unchanged is then not matched). The mailbox scope on a queue that
 *       scopes by group cannot be had from a client, so the builder refuses it.</li>
 *   <li><b>Nack, lapse and dead letters</b> are SQS's: a nack is ChangeMessageVisibility, after which, or after
 *       the visibility timeout, the message is back at its group's head; a nack timeout holds the group. The
 *       dead-letter mailbox must be a FIFO mailbox (SQS's rule; the builder checks it before creating
 *       anything) and SQS moves the head there, with its id and group, when it has had
 *       {@code maxReceiveCount} receives and would be delivered again.</li>
 *   <li><b>Runs.</b> SQS documents that in-flight messages block the rest of their group, so a message nacked
 *       out of a run waits for the run; ElasticMQ blocks a group only while its head is in flight, so there
 *       the nacked message comes again at once, before the rest of its group. This object cannot tell the
 *       servers apart and promises the second ({@code holdsRuns() == false}); order within a group holds on
 *       both.</li>
 *   <li><b>Late acknowledgement</b> does not exist here: SQS expires a FIFO queue's receipt handles with their
 *       visibility timeout ({@code lateAcknowledge() == false}; see above).</li>
 * </ul>
 *
 * <h2>Group ids on standard queues</h2>
 * On a standard queue a group id is sent as the MessageGroupId too: AWS's standard queues use it to keep
 * tenants fair (fair queues, 2025), by AWS's own measure, which the API does not show. The mailbox therefore
 * does not declare {@link MailboxCapabilities#fairness()}, and {@link Message#groupId()} is null there, as on
 * every standard mailbox that does not. A server that predates fair queues (ElasticMQ before 1.6.13) refuses
 * the parameter: the send is then made without it, and this object sends no more group ids (logged once).
 *
 * <p>Bodies travel as text when the codec's bytes are valid UTF-8 text SQS accepts (JSON always
 * is); other bytes travel as base64 with a reserved attribute, {@value #ENCODING_ATTRIBUTE}, which
 * counts toward the ten attributes and is hidden from {@link Message#attributes()}. The attribute
 * {@value #TRACE_HEADER_ATTRIBUTE} travels as SQS's system attribute of that name (X-Ray's trace header), both ways.
 *
 * <p>Message attributes of every SQS data type are kept: {@link Message#typedAttributes()} has each with its
 * type ({@code String}, {@code Number}, {@code Binary}, custom types such as {@code Number.int}) and
 * {@link Message#attributes()} the plain strings; a typed attribute sent
 * ({@link SendOptions#withAttribute(String, dev.mailbox.api.AttributeValue)}) goes to SQS with its type. System
 * attributes ({@link SendOptions#withSystemAttribute}) are SQS's own on a queue: {@code AWSTraceHeader} goes as SQS's
 * system attribute of that name, the others are not sent.
 *
 * @param <T> the body type
 */
public final class SqsMailbox<T> implements Mailbox<T>, dev.mailbox.api.spi.Inspection {

    /** What a {@link #fenced} view calls: this mailbox's own fenced methods, with the view's epoch. */
    private final dev.mailbox.api.spi.FencedView.Operations<T> fencedCalls =
            new dev.mailbox.api.spi.FencedView.Operations<>() {
                @Override
                public List<Message<T>> receive(ReceiveOptions options, long epoch) {
                    return SqsMailbox.this.receive(options, epoch);
                }

                @Override
                public List<Message<T>> acknowledgeBatch(List<? extends Message<T>> messages, long epoch) {
                    return SqsMailbox.this.acknowledgeBatch(messages, epoch);
                }

                @Override
                public void acknowledge(String receiptHandle, long epoch) {
                    SqsMailbox.this.acknowledge(receiptHandle, epoch);
                }

                @Override
                public void nack(String receiptHandle, Duration visibilityTimeout, long epoch) {
                    SqsMailbox.this.nack(receiptHandle, visibilityTimeout, epoch);
                }

                @Override
                public void extendVisibility(String receiptHandle, Duration timeout, long epoch) {
                    SqsMailbox.this.extendVisibility(receiptHandle, timeout, epoch);
                }

                @Override
                public ReceiveOptions defaultReceiveOptions() {
                    return defaults;
                }
            };

    /** Marks a body sent as base64 because its bytes are not text SQS accepts. */
    public static final String ENCODING_ATTRIBUTE = "mailbox-encoding";
    /**
     * The attribute that stands for SQS's {@code AWSTraceHeader} message system attribute (X-Ray's trace header):
     * sent as that system attribute, not as a message attribute, and a received message's system attribute shows
     * in {@link Message#attributes()} under this name, so tracing (module {@code mailbox-opentelemetry}) and AWS
     * services continue each other's traces. It counts toward the ten attributes here, as every attribute does.
     */
    public static final String TRACE_HEADER_ATTRIBUTE = "AWSTraceHeader";
    /** The largest message of a queue whose server does not report its MaximumMessageSize: SQS's before 2025. */
    private static final int LEGACY_MAX_MESSAGE_BYTES = 256 * 1024;

    /** How many of its latest deliveries an object remembers, for calls by handle. */
    static final int MAX_TRACKED_DELIVERIES = 10_000;

    private static final Logger LOG = LoggerFactory.getLogger(SqsMailbox.class);
    private static final String FIFO_SUFFIX = ".fifo";
    private static final List<MessageSystemAttributeName> SYSTEM_ATTRIBUTES = List.of(
            MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT, MessageSystemAttributeName.SENT_TIMESTAMP,
            MessageSystemAttributeName.AWS_TRACE_HEADER);
    private static final List<MessageSystemAttributeName> FIFO_SYSTEM_ATTRIBUTES = List.of(
            MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT, MessageSystemAttributeName.SENT_TIMESTAMP,
            MessageSystemAttributeName.AWS_TRACE_HEADER, MessageSystemAttributeName.MESSAGE_GROUP_ID,
            MessageSystemAttributeName.SEQUENCE_NUMBER);
    private static final long MAX_WAIT_PER_CALL_SECONDS = 20;
    /**
     * How long before a receive's response the server is assumed to have handed its messages out. A long
     * poll can wait many seconds before a message arrives, so counting visibility from the request's
     * start would declare short-lived handles expired on arrival; SQS hands messages out as it answers.
     * The limit: a long poll's answer that takes longer than this to arrive (a distant region, a pause)
     * makes this object believe a handle lives up to the difference longer than SQS does; in that gap a
     * nack, extension or acknowledge of the lapsed handle passes this object's check and SQS decides
     * (ElasticMQ, for one, accepts a visibility change on a lapsed handle). A receive that does not wait
     * counts from when its request left instead, which is never late.
     */
    private static final long HANDOUT_ALLOWANCE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    /** Where long polls run (see {@link #longPoll}): daemon threads, made as needed, gone after a minute idle. */
    /** The name of a thread running a long poll, followed by the mailbox's name while it polls. */
    static final String LONG_POLL_THREAD = "mailbox-sqs-long-poll-";
    private static final String IDLE_POLL_THREAD = "mailbox-sqs-long-poll";
    private static final ExecutorService LONG_POLLS = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, IDLE_POLL_THREAD);
        t.setDaemon(true);
        return t;
    });

    private final String name;
    private final Codec<T> codec;
    private final SqsClient sqs;
    private final boolean ownsClient;
    private final String queueUrl;
    private final boolean fifoQueue;
    /** The FIFO options this mailbox keeps (given to the builder, or read from the queue); null on a standard queue. */
    private final @Nullable FifoOptions fifo;
    /** Whether a send without an id is left to SQS's ContentBasedDeduplication (the queue does it, as the options ask). */
    private final boolean contentBySqs;
    /** Whether the group goes into every deduplication id, because the queue does not scope ids by group itself. */
    private final boolean scopeByGroup;
    /** Set once the server refused a MessageGroupId on this standard queue (a server older than fair queues). */
    private final AtomicBoolean groupIdsRefused = new AtomicBoolean();
    private final int maxMessageBytes;
    private final ReceiveOptions defaults;
    private final MailboxCapabilities capabilities;
    private final Fence fence;
    /** Only on a standard queue; a FIFO queue deduplicates itself. */
    private final @Nullable RecentSends recentSends;
    /** The latest deliveries this object received, by receipt handle, for calls by handle. */
    private final Map<String, SqsMessage.State> deliveries = Collections.synchronizedMap(
            new LinkedHashMap<>() {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, SqsMessage.State> eldest) {
                    return size() > MAX_TRACKED_DELIVERIES;
                }
            });
    private volatile boolean closed;

    private SqsMailbox(Builder<T> b, SqsClient sqs, boolean ownsClient, Queue queue) {
        this.name = b.name;
        this.codec = b.codec;
        this.sqs = sqs;
        this.ownsClient = ownsClient;
        this.queueUrl = queue.url();
        this.fifo = queue.fifo();
        this.fifoQueue = fifo != null;
        this.contentBySqs = queue.contentBySqs();
        this.scopeByGroup = queue.scopeByGroup();
        this.maxMessageBytes = b.maxMessageBytes;
        this.defaults = b.defaults;
        this.fence = new Fence(name);
        this.recentSends = fifoQueue ? null : new RecentSends(System::nanoTime);
        this.capabilities = MailboxCapabilities.builder()
                .exactCount(false).visibilityOrder(false).detectsStaleAcknowledge(false).capacity(false).atomicDeadLetter(true)
                .maxMessageBytes(maxMessageBytes).timeGranularity(Duration.ofSeconds(1))
                .atomicFencing(false).durableDeduplication(fifoQueue)
                // SQS's FIFO queues; fair queues are AWS's own and cannot be seen through the API (see the class comment)
                .fifo(fifoQueue).fairness(false)
                // AWS holds a run while any of it is in flight, ElasticMQ only while its head is: no promise here.
                // What one object did to a delivery, another knows only as far as SQS can tell
                .holdsRuns(false).sharedDeliveryState(false)
                // SQS deletes a lapsed message of a standard queue by its latest handle; a FIFO queue's handle
                // expires with its visibility timeout ("The receipt handle has expired")
                .lateAcknowledge(!fifoQueue)
                .build();
    }

    /**
     * @param name  the queue's name: a portable mailbox name (see {@link Limits#mailboxNameProblem}); SQS has no
     *              extended names
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

    /**
     * {@inheritDoc}
     *
     * <p>With a {@link SendOptions#withDeduplicationId deduplication id}: on a FIFO queue the id goes to SQS
     * as the MessageDeduplicationId (see "FIFO queues" in the class comment), and SQS answers a duplicate with the
     * first send's message id, whichever process or object sent it. On a standard queue, which has no such thing,
     * this object remembers the ids it sent for {@link Limits#DEDUPLICATION_WINDOW} (up to 100,000 of them): a
     * retry through this object is stored once, a retry through another object or after a restart is stored
     * again. A second send with an id whose first send is still in flight waits for it.
     *
     * <p>A {@link SendOptions#withGroupId group id} is the MessageGroupId on either kind of queue (on a standard
     * queue AWS uses it for its fair queues; see the class comment).
     *
     * @throws IllegalArgumentException on a FIFO queue, if the options have no group id or have a delay
     */
    @Override
    public String send(T body, SendOptions options) {
        Objects.requireNonNull(body, "body");
        Objects.requireNonNull(options, "options");
        requireFifoSend(options);
        Outgoing out = outgoing(body, options);
        ensureOpen();
        String id = options.deduplicationId();
        if (id == null || recentSends == null) {
            return sendOne(out, options, id);
        }
        while (true) {
            RecentSends.Claim claim = recentSends.claim(id);
            if (!claim.mine()) {
                String first = RecentSends.await(claim.send(), name);
                if (first != null) {
                    return first;
                }
                continue; // the first send failed, so this one is not a duplicate: send it
            }
            try {
                String messageId = sendOne(out, options, null);
                recentSends.stored(claim.send(), messageId);
                return messageId;
            } catch (RuntimeException e) {
                recentSends.failed(id, claim.send(), e);
                throw e;
            }
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>With a deduplication id {@code id}, message {@code i} is deduplicated under {@code id + "/" + i} as
     * {@link #send(Object, SendOptions)} describes; on a standard queue only the messages not seen before are
     * sent, and if all were seen nothing is. On a FIFO queue with content-based deduplication, a batch without an
     * id is deduplicated message by message, by content, so it may repeat itself. The batch is one
     * SendMessageBatch, in its order, in one message group.
     *
     * @throws IllegalArgumentException on a FIFO queue, if the options have no group id or have a delay
     */
    @Override
    public List<String> sendBatch(List<? extends T> bodies, SendOptions options) {
        Objects.requireNonNull(bodies, "bodies");
        Objects.requireNonNull(options, "options");
        Limits.requireBatchSize(bodies.size(), "batch size");
        requireFifoSend(options);
        List<Outgoing> outs = new ArrayList<>(bodies.size());
        for (T body : bodies) {
            outs.add(outgoing(Objects.requireNonNull(body, "bodies contains null"), options));
        }
        ensureOpen();
        String id = options.deduplicationId();
        String[] ids = new String[outs.size()];
        if (id == null || recentSends == null) {
            List<Integer> all = new ArrayList<>();
            for (int i = 0; i < outs.size(); i++) {
                all.add(i);
            }
            sendEntries(outs, all, options, id, ids);
            return List.of(ids);
        }
        // standard queue: send only the entries whose ids nobody claimed; an entry whose first send failed
        // meanwhile goes round again
        List<Integer> pending = new ArrayList<>();
        for (int i = 0; i < outs.size(); i++) {
            pending.add(i);
        }
        while (!pending.isEmpty()) {
            Map<Integer, RecentSends.Send> mine = new LinkedHashMap<>();
            Map<Integer, RecentSends.Send> theirs = new LinkedHashMap<>();
            for (int i : pending) {
                RecentSends.Claim claim = recentSends.claim(id + "/" + i);
                (claim.mine() ? mine : theirs).put(i, claim.send());
            }
            pending = new ArrayList<>();
            if (!mine.isEmpty()) {
                try {
                    sendEntries(outs, new ArrayList<>(mine.keySet()), options, null, ids);
                } catch (RuntimeException e) {
                    // the entries SQS stored are remembered; the others may be sent again
                    mine.forEach((i, send) -> {
                        if (ids[i] != null) {
                            recentSends.stored(send, ids[i]);
                        } else {
                            recentSends.failed(id + "/" + i, send, e);
                        }
                    });
                    throw e;
                }
                mine.forEach((i, send) -> recentSends.stored(send, ids[i]));
            }
            for (Map.Entry<Integer, RecentSends.Send> e : theirs.entrySet()) {
                String first = RecentSends.await(e.getValue(), name);
                if (first == null) {
                    pending.add(e.getKey());
                } else {
                    ids[e.getKey()] = first;
                }
            }
        }
        return List.of(ids);
    }

    @Override
    public List<Message<T>> receive() {
        return receive(defaults);
    }

    @Override
    public List<Message<T>> receive(ReceiveOptions options) {
        return receive(options, 0);
    }

    /**
     * A receive, fenced at {@code epoch} unless it is 0. It cannot hold the fence's lock through a long poll,
     * so it is checked twice: before the first SQS call, and when messages arrive. If the fence rose above
     * {@code epoch} in between, the messages are not handed to this stale caller: they are made visible again
     * (best effort, see {@link #fenced(long)}) and the call throws.
     */
    List<Message<T>> receive(ReceiveOptions options, long epoch) {
        Objects.requireNonNull(options, "options");
        ensureOpen();
        fence.admit(epoch);
        long deadline = System.nanoTime() + options.waitTime().toNanos();
        int visibility = seconds(options.visibilityTimeout());
        long visibilityNanos = options.visibilityTimeout().toNanos();
        while (true) {
            long requestStart = System.nanoTime();
            long remaining = deadline - requestStart;
            int wait = remaining <= 0 ? 0 : (int) Math.min(MAX_WAIT_PER_CALL_SECONDS,
                    (TimeUnit.NANOSECONDS.toMillis(remaining) + 999) / 1000);
            ReceiveMessageRequest.Builder builder = ReceiveMessageRequest.builder()
                    .queueUrl(queueUrl).maxNumberOfMessages(options.maxMessages()).visibilityTimeout(visibility)
                    .waitTimeSeconds(wait).messageAttributeNames("All")
                    .messageSystemAttributeNames(fifoQueue ? FIFO_SYSTEM_ATTRIBUTES : SYSTEM_ATTRIBUTES);
            if (fifoQueue) {
                // one attempt id per call: the SDK sends the same request again when an answer is lost, and SQS
                // then returns the same messages instead of hiding them (and blocking their groups) for the
                // visibility timeout
                builder.receiveRequestAttemptId(UUID.randomUUID().toString());
            }
            ReceiveMessageRequest receive = builder.build();
            Supplier<ReceiveMessageResponse> request = () -> call("receive", () -> sqs.receiveMessage(receive));
            ReceiveMessageResponse response = wait == 0 ? request.get() : longPoll(request);
            if (response.hasMessages() && !response.messages().isEmpty()) {
                if (closed) {
                    // closed while the call waited: the caller gets an empty list, as close() promises, and
                    // the messages go back rather than stay hidden in an object that can no longer settle them
                    handBack(response.messages());
                    return List.of();
                }
                long raised = fence.value();
                if (epoch != 0 && raised > epoch) {
                    handBack(response.messages());
                    throw new FencedException(name, epoch, raised);
                }
                // a call that did not wait was answered at once, at some instant after it left: counting from
                // when it left is exact enough and never late, however slow the response was to arrive
                long handedOut = wait == 0 ? requestStart
                        : Math.max(requestStart, System.nanoTime() - HANDOUT_ALLOWANCE_NANOS);
                List<Message<T>> out = new ArrayList<>(response.messages().size());
                response.messages().forEach(m -> out.add(incoming(m, handedOut + visibilityNanos, epoch)));
                return out;
            }
            // nothing received, so nothing to undo; a holder that lost the mailbox learns it now
            fence.check(epoch);
            if (closed || deadline - System.nanoTime() <= 0) {
                return List.of();
            }
        }
    }

    /**
     * Runs a long poll on a thread of its own and waits for it interruptibly: the SDK's blocking HTTP read does
     * not see an interrupt, and an interrupt it sees afterwards makes it drop a response that may hold messages.
     * An interrupted receive returns at once; the poll goes on without it, and whatever it hands out is made
     * visible again as soon as it answers, so no message waits out a visibility timeout for a caller that left.
     */
    private ReceiveMessageResponse longPoll(Supplier<ReceiveMessageResponse> request) {
        CompletableFuture<ReceiveMessageResponse> poll = CompletableFuture.supplyAsync(() -> {
            Thread self = Thread.currentThread();
            self.setName(LONG_POLL_THREAD + name); // whose poll it is, for a thread dump
            try {
                return request.get();
            } finally {
                self.setName(IDLE_POLL_THREAD);
            }
        }, LONG_POLLS);
        try {
            return poll.get();
        } catch (InterruptedException e) {
            poll.thenAccept(late -> {
                if (late.hasMessages() && !late.messages().isEmpty()) {
                    handBack(late.messages());
                }
            });
            Thread.currentThread().interrupt();
            throw new MailboxUnavailableException("receive on mailbox '" + name + "' was interrupted", false, e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new MailboxUnavailableException("receive on mailbox '" + name + "' failed: " + e.getCause(),
                    true, e.getCause());
        }
    }

    /**
     * Makes messages that a fenced-out receive, or one whose mailbox closed while it waited, got visible
     * again at once. Best effort: if SQS cannot be reached they stay invisible until their visibility
     * timeout ends, like the messages of a consumer that died; either way the delivery was counted
     * (ApproximateReceiveCount, which a redrive policy reads).
     */
    private void handBack(List<software.amazon.awssdk.services.sqs.model.Message> messages) {
        List<ChangeMessageVisibilityBatchRequestEntry> entries = new ArrayList<>(messages.size());
        for (int i = 0; i < messages.size(); i++) {
            entries.add(ChangeMessageVisibilityBatchRequestEntry.builder().id(Integer.toString(i))
                    .receiptHandle(messages.get(i).receiptHandle()).visibilityTimeout(0).build());
        }
        try {
            ChangeMessageVisibilityBatchResponse response = sqs.changeMessageVisibilityBatch(r -> r
                    .queueUrl(queueUrl).entries(entries));
            for (BatchResultErrorEntry e : response.failed()) {
                LOG.warn("mailbox '{}': could not make a message handed back visible again ({} {}); it stays"
                        + " invisible until its visibility timeout ends", name, e.code(), e.message());
            }
        } catch (SdkException e) {
            LOG.warn("mailbox '{}': could not make {} messages handed back visible again; they stay invisible"
                    + " until their visibility timeout ends", name, messages.size(), e);
        }
    }

    @Override
    public List<Message<T>> acknowledgeBatch(List<? extends Message<T>> messages) {
        return acknowledgeBatch(messages, 0);
    }

    /**
     * A batch acknowledge under {@code epoch}, the epoch of the fenced view it is called through, which then
     * applies to every message (as on the other backends: the new holder may settle what an old one
     * received); called on the mailbox itself ({@code epoch} 0), under the epochs the messages were received
     * under, and refused whole if any of them is below the fence. Deliveries this object knows to be stale are
     * not sent: they are returned as stale at once.
     */
    List<Message<T>> acknowledgeBatch(List<? extends Message<T>> messages, long epoch) {
        Objects.requireNonNull(messages, "messages");
        Limits.requireBatchSize(messages.size(), "batch size");
        List<SqsMessage<T>> own = new ArrayList<>(messages.size());
        long lowest = epoch;
        long highest = epoch;
        for (Message<T> m : messages) {
            SqsMessage<T> sm = own(m);
            own.add(sm);
            if (epoch == 0 && sm.epoch() > 0) {
                lowest = lowest == 0 ? sm.epoch() : Math.min(lowest, sm.epoch());
                highest = Math.max(highest, sm.epoch());
            }
        }
        ensureOpen();
        return fence.call(lowest, highest, () -> {
            List<Message<T>> stale = new ArrayList<>();
            List<DeleteMessageBatchRequestEntry> entries = new ArrayList<>(own.size());
            for (int i = 0; i < own.size(); i++) {
                SqsMessage<T> m = own.get(i);
                boolean current;
                synchronized (m.state()) {
                    current = capabilities.lateAcknowledge() ? m.state().unfinished() : m.state().current();
                }
                if (current) {
                    entries.add(DeleteMessageBatchRequestEntry.builder().id(Integer.toString(i))
                            .receiptHandle(m.receiptHandle()).build());
                }
            }
            if (entries.isEmpty()) {
                return new ArrayList<>(own);
            }
            DeleteMessageBatchResponse response = call("acknowledgeBatch",
                    () -> sqs.deleteMessageBatch(r -> r.queueUrl(queueUrl).entries(entries)));
            boolean[] refused = new boolean[own.size()];
            BatchResultErrorEntry failure = null; // a failure that is not a stale handle
            for (BatchResultErrorEntry e : response.failed()) {
                refused[Integer.parseInt(e.id())] = true;
                if (!staleHandle(e.code(), e.message()) && failure == null) {
                    failure = e;
                }
            }
            boolean[] sent = new boolean[own.size()];
            entries.forEach(e -> sent[Integer.parseInt(e.id())] = true);
            for (int i = 0; i < own.size(); i++) {
                SqsMessage<T> m = own.get(i);
                if (sent[i] && !refused[i]) {
                    synchronized (m.state()) {
                        m.state().finish("acknowledged"); // even if another entry failed: these deletes were made
                    }
                } else {
                    stale.add(m);
                }
            }
            if (failure != null) {
                throw new MailboxUnavailableException("SQS failed to delete a message of '" + name + "': "
                        + failure.code() + " " + failure.message(), !Boolean.TRUE.equals(failure.senderFault()), null);
            }
            return stale;
        });
    }

    // ---- by receipt handle

    /**
     * {@inheritDoc}
     *
     * <p>SQS answers a handle it does not know and a stale one alike (ReceiptHandleIsInvalid), so both throw
     * {@link ReceiptHandleExpiredException}; only a string that cannot be an SQS handle at all (empty, or
     * other than printable ASCII) throws {@link IllegalArgumentException}. See the class comment for which
     * stale handles are detected.
     */
    @Override
    public void acknowledge(String receiptHandle) {
        acknowledge(receiptHandle, 0);
    }

    /** {@inheritDoc} See {@link #acknowledge(String)} for which handles are refused. */
    @Override
    public void nack(String receiptHandle, Duration visibilityTimeout) {
        nack(receiptHandle, visibilityTimeout, 0);
    }

    /** {@inheritDoc} See {@link #acknowledge(String)} for which handles are refused. */
    @Override
    public void extendVisibility(String receiptHandle, Duration timeout) {
        extendVisibility(receiptHandle, timeout, 0);
    }

    void acknowledge(String receiptHandle, long epoch) {
        // not refused here for a lapsed deadline: this object cannot see an extend made through another
        // one, and a false refusal would have the message processed twice, while a real lapse is harmless to
        // acknowledge unless the message was delivered again, which SQS itself refuses
        acknowledge(requireHandle(receiptHandle), deliveries.get(receiptHandle), false, epoch);
    }

    void nack(String receiptHandle, Duration visibilityTimeout, long epoch) {
        nack(requireHandle(receiptHandle), visibilityTimeout, deliveries.get(receiptHandle), epoch);
    }

    void extendVisibility(String receiptHandle, Duration timeout, long epoch) {
        extendVisibility(requireHandle(receiptHandle), timeout, deliveries.get(receiptHandle), epoch);
    }

    // ---- one delivery: by handle, or on the message (then with its state, which this object always knows)

    void acknowledge(String handle, SqsMessage.@Nullable State state, boolean deadline, long epoch) {
        ensureOpen();
        fence.run(epoch, () -> {
            if (state == null) {
                deleteMessage(handle);
                return;
            }
            synchronized (state) {
                state.requireCurrent(handle, name, deadline);
                deleteMessage(handle);
                state.finish("acknowledged");
            }
        });
    }

    void nack(String handle, Duration visibilityTimeout, SqsMessage.@Nullable State state, long epoch) {
        Limits.requireVisibilityTimeout(visibilityTimeout, "visibilityTimeout");
        ensureOpen();
        fence.run(epoch, () -> {
            if (state == null) {
                changeVisibility(handle, visibilityTimeout, "nack");
                return;
            }
            synchronized (state) {
                state.requireCurrent(handle, name, true);
                changeVisibility(handle, visibilityTimeout, "nack");
                state.finish("nacked");
            }
        });
    }

    void extendVisibility(String handle, Duration timeout, SqsMessage.@Nullable State state, long epoch) {
        Limits.requireVisibilityTimeout(timeout, "timeout");
        ensureOpen();
        fence.run(epoch, () -> {
            if (state == null) {
                changeVisibility(handle, timeout, "extendVisibility");
                return;
            }
            synchronized (state) {
                state.requireCurrent(handle, name, true);
                long start = System.nanoTime();
                changeVisibility(handle, timeout, "extendVisibility");
                state.extendedAt(start, timeout);
            }
        });
    }

    private void deleteMessage(String handle) {
        call("acknowledge", handle, () -> sqs.deleteMessage(r -> r.queueUrl(queueUrl).receiptHandle(handle)));
    }

    private void changeVisibility(String handle, Duration timeout, String operation) {
        call(operation, handle, () -> sqs.changeMessageVisibility(r -> r
                .queueUrl(queueUrl).receiptHandle(handle).visibilityTimeout(seconds(timeout))));
    }

    private String requireHandle(String receiptHandle) {
        Objects.requireNonNull(receiptHandle, "receiptHandle");
        boolean printableAscii = !receiptHandle.isEmpty()
                && receiptHandle.chars().allMatch(c -> c > 0x20 && c < 0x7f);
        if (!printableAscii) {
            String shown = receiptHandle.length() > 200 ? receiptHandle.substring(0, 200) + "..." : receiptHandle;
            throw new IllegalArgumentException("'" + shown + "' is not an SQS receipt handle (one or more printable"
                    + " ASCII characters) of mailbox '" + name + "'");
        }
        return receiptHandle;
    }

    // ---- fencing

    /**
     * {@inheritDoc}
     *
     * <p><b>On SQS the fence is this object's</b> ({@code capabilities().atomicFencing() == false}): SQS has no
     * conditional writes to store it with the messages. It is checked and raised atomically with respect to
     * every other call through this object, and a raise waits for the calls already admitted under an older
     * epoch to finish; so once a call under an epoch has started, no acknowledge, nack or extend under an
     * older epoch made through this object reaches SQS. Calls through another {@code SqsMailbox} (another
     * process, or this one after a restart, which starts with no fence) are not fenced by it: the guarantee
     * holds for everyone only when all of a queue's holders call through one object, as they do when a
     * mailbox node owns the queue and every client goes through the node.
     *
     * <p>A receive is the one fenced call that does not hold the fence through its SQS call, since a long
     * poll would stall the new holder for up to 20 s: it is checked before it starts and again when its
     * messages arrive. If the fence rose above the view's epoch in between, the messages are not handed to
     * the stale caller: they are made visible again at once (ChangeMessageVisibility to 0) and the receive
     * throws {@link FencedException}. That undo is best effort: if it fails the messages stay invisible until
     * their visibility timeout ends, and either way SQS counted the delivery (a redrive policy's
     * maxReceiveCount sees it). A receive whose messages arrived before the rise returns them; the holder
     * then finds its acknowledges refused, and the messages come back when their visibility ends.
     */
    @Override
    public Mailbox<T> fenced(long epoch) {
        return new dev.mailbox.api.spi.FencedView<>(this, fencedCalls, epoch);
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

    // ---- inspection (the web console): SQS's approximate counts; no peek

    private static final java.util.regex.Pattern DEAD_LETTER_ARN =
            java.util.regex.Pattern.compile("\"deadLetterTargetArn\"\\s*:\\s*\"[^\"]*:([^\":]+)\"");
    private static final java.util.regex.Pattern MAX_RECEIVES =
            java.util.regex.Pattern.compile("\"maxReceiveCount\"\\s*:\\s*\"?(\\d{1,4})");

    /**
     * {@inheritDoc}
     *
     * <p>One GetQueueAttributes: SQS's approximate counts of visible, not visible (in flight) and delayed
     * messages, and its RedrivePolicy. Never exact, and without the oldest message's age, which SQS keeps only as a
     * CloudWatch metric.
     */
    @Override
    public dev.mailbox.api.spi.Inspection.Stats inspect() {
        ensureOpen();
        Map<QueueAttributeName, String> a = call("inspect", () -> sqs.getQueueAttributes(r -> r.queueUrl(queueUrl)
                .attributeNames(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES,
                        QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE,
                        QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_DELAYED,
                        QueueAttributeName.REDRIVE_POLICY))).attributes();
        String redrive = a.getOrDefault(QueueAttributeName.REDRIVE_POLICY, "");
        java.util.regex.Matcher dlq = DEAD_LETTER_ARN.matcher(redrive);
        java.util.regex.Matcher receives = MAX_RECEIVES.matcher(redrive);
        return new dev.mailbox.api.spi.Inspection.Stats(
                Long.parseLong(a.getOrDefault(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES, "0")),
                Long.parseLong(a.getOrDefault(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_NOT_VISIBLE, "0")),
                Long.parseLong(a.getOrDefault(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES_DELAYED, "0")),
                null, false, dlq.find() ? dlq.group(1) : null, receives.find() ? Integer.parseInt(receives.group(1)) : 0);
    }

    /** @return false: SQS reads a message only by receiving it, which hides it and counts a delivery */
    @Override
    public boolean canPeek() {
        return false;
    }

    /** @throws UnsupportedOperationException always: see {@link #canPeek()} */
    @Override
    public List<dev.mailbox.api.spi.Inspection.Peeked> peek(int max) {
        throw new UnsupportedOperationException("SQS cannot show a message without receiving it (which hides it and "
                + "counts a delivery): mailbox '" + name + "' cannot be peeked");
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

    // ---- sending

    /** SQS's FIFO rules, checked before anything is encoded or sent. */
    private void requireFifoSend(SendOptions options) {
        if (fifoQueue) {
            Limits.requireFifoSend(name, options);
        }
    }

    /** @param deduplicationId the caller's id, for a FIFO queue; null to send without */
    private String sendOne(Outgoing out, SendOptions options, @Nullable String deduplicationId) {
        SendMessageRequest.Builder request = SendMessageRequest.builder().queueUrl(queueUrl).messageBody(out.body)
                .messageAttributes(out.attributes);
        String group = options.groupId();
        if (fifoQueue) {
            request.messageGroupId(group).messageDeduplicationId(fifoDeduplicationId(deduplicationId, out, group));
        } else {
            request.delaySeconds(seconds(options.delay()));
        }
        if (out.traceHeader != null) {
            request.messageSystemAttributes(traceHeader(out.traceHeader));
        }
        SendMessageRequest plain = request.build();
        if (fifoQueue || group == null) {
            return call("send", () -> sqs.sendMessage(plain)).messageId();
        }
        return call("send", () -> {
            if (!groupIdsRefused.get()) {
                try {
                    return sqs.sendMessage(plain.toBuilder().messageGroupId(group).build()).messageId();
                } catch (SqsException e) {
                    if (!refusesGroupId(e.awsErrorDetails() == null ? null : e.awsErrorDetails().errorMessage())) {
                        throw e;
                    }
                    groupIdsRefused(e.awsErrorDetails().errorMessage());
                }
            }
            return sqs.sendMessage(plain).messageId();
        });
    }

    /**
     * Sends the entries {@code indices} of {@code outs} in one batch and puts their message ids in
     * {@code ids}, leaving a failed entry's null.
     *
     * @param deduplicationId the caller's id, for a FIFO queue (entry {@code i} is sent under
     *                        {@code id + "/" + i}); null to send without
     * @throws MailboxUnavailableException if SQS stored only some entries (the others' ids are filled in)
     */
    private void sendEntries(List<Outgoing> outs, List<Integer> indices, SendOptions options,
                             @Nullable String deduplicationId, String[] ids) {
        String group = options.groupId();
        boolean withGroup = group != null && (fifoQueue || !groupIdsRefused.get());
        List<SendMessageBatchRequestEntry> entries = new ArrayList<>(indices.size());
        for (int i : indices) {
            Outgoing out = outs.get(i);
            SendMessageBatchRequestEntry.Builder entry = SendMessageBatchRequestEntry.builder().id(Integer.toString(i))
                    .messageBody(out.body).messageAttributes(out.attributes);
            if (fifoQueue) {
                entry.messageDeduplicationId(fifoDeduplicationId(deduplicationId != null ? deduplicationId + "/" + i
                        : null, out, group));
            } else {
                entry.delaySeconds(seconds(options.delay()));
            }
            if (withGroup) {
                entry.messageGroupId(group);
            }
            if (out.traceHeader != null) {
                entry.messageSystemAttributes(traceHeader(out.traceHeader));
            }
            entries.add(entry.build());
        }
        SendMessageBatchResponse response = call("sendBatch", () -> {
            try {
                return sqs.sendMessageBatch(r -> r.queueUrl(queueUrl).entries(entries));
            } catch (SqsException e) {
                String message = e.awsErrorDetails() == null ? null : e.awsErrorDetails().errorMessage();
                if (fifoQueue || !withGroup || !refusesGroupId(message)) {
                    throw e;
                }
                groupIdsRefused(message);
                return null; // the whole request was refused, so nothing was stored: sent again without group ids
            }
        });
        if (response == null) {
            sendEntries(outs, indices, options, deduplicationId, ids);
            return;
        }
        for (SendMessageBatchResultEntry e : response.successful()) {
            ids[Integer.parseInt(e.id())] = e.messageId();
        }
        List<BatchResultErrorEntry> failed = response.failed();
        if (!fifoQueue && withGroup && !failed.isEmpty()
                && failed.stream().allMatch(e -> refusesGroupId(e.message()))) {
            // refused for the group id alone, so not stored: those go again without it
            groupIdsRefused(failed.get(0).message());
            sendEntries(outs, failed.stream().map(e -> Integer.parseInt(e.id())).toList(), options, deduplicationId,
                    ids);
            return;
        }
        if (!failed.isEmpty()) {
            // SQS stores a batch entry by entry; say exactly which ones were not stored
            BatchResultErrorEntry first = failed.get(0);
            throw new MailboxUnavailableException("SQS stored " + response.successful().size() + " of "
                    + entries.size() + " messages of a batch to '" + name + "'; entry " + first.id() + " failed: "
                    + first.code() + " " + first.message(), !Boolean.TRUE.equals(first.senderFault()), null);
        }
    }

    /**
     * Whether an SQS error refuses a MessageGroupId because the queue is a standard one, as servers that predate
     * fair queues do (ElasticMQ before 1.6.13: "The request includes parameter MessageGroupId that is not valid
     * for this queue type"). The id itself was checked here ({@link Limits#requireGroupId}), so an error that
     * names the parameter is about the queue type.
     */
    private static boolean refusesGroupId(@Nullable String message) {
        return message != null && message.contains("MessageGroupId");
    }

    private void groupIdsRefused(String why) {
        if (!groupIdsRefused.getAndSet(true)) {
            LOG.info("mailbox '{}': the server refuses a MessageGroupId on a standard queue ({}); this object sends"
                    + " group ids no more (AWS's standard queues take them, for fairness)", name, why);
        }
    }

    /**
     * The MessageDeduplicationId of a FIFO send: the caller's id; without one, with content-based deduplication,
     * the content's id ({@link FifoOptions#contentDeduplicationId}) or none where SQS computes it; otherwise a
     * random one, so that SQS (even on a queue with ContentBasedDeduplication) never drops the send. Where the
     * options ask for the group scope and the queue does not scope ids by group itself, the group goes into the
     * id, so ids repeat only within a group. Too long an id is hashed ({@link #fifoToken}).
     *
     * @return the id, or null to let SQS hash the body
     */
    private @Nullable String fifoDeduplicationId(@Nullable String deduplicationId, Outgoing out, String group) {
        String id = deduplicationId;
        if (id == null) {
            if (!Objects.requireNonNull(fifo).contentBasedDeduplication()) {
                return UUID.randomUUID().toString();
            }
            if (contentBySqs) {
                return null;
            }
            id = FifoOptions.contentDeduplicationId(Objects.requireNonNull(out.encoded, "encoded body"));
        }
        // the group's length first, so that no pair of group and id can read as another
        return fifoToken(scopeByGroup ? group.length() + ":" + group + ":" + id : id);
    }

    /**
     * The MessageDeduplicationId for a deduplication id. It allows 128 characters, and a batch's
     * {@code id + "/" + i} can be two more (or the group a few hundred), so a longer one is replaced by its SHA-256:
     * the same id always maps to the same token, whichever process sends it.
     */
    private static String fifoToken(String id) {
        if (id.length() <= Limits.MAX_DEDUPLICATION_ID_LENGTH) {
            return id;
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(id.getBytes(StandardCharsets.UTF_8));
            return "sha256:" + HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }

    // ---- encoding

    /**
     * A message as it goes to SQS; {@code encoded}, the codec's bytes, only where this object computes the content's
     * deduplication id.
     */
    private record Outgoing(String body, Map<String, MessageAttributeValue> attributes, @Nullable String traceHeader,
                            byte @Nullable [] encoded) {
    }

    private static Map<MessageSystemAttributeNameForSends, MessageSystemAttributeValue> traceHeader(String value) {
        return Map.of(MessageSystemAttributeNameForSends.AWS_TRACE_HEADER,
                MessageSystemAttributeValue.builder().dataType("String").stringValue(value).build());
    }

    private Outgoing outgoing(T body, SendOptions options) {
        if (options.typedAttributes().containsKey(ENCODING_ATTRIBUTE)) {
            throw new IllegalArgumentException("attribute name '" + ENCODING_ATTRIBUTE + "' is reserved by SqsMailbox");
        }
        byte[] bytes = Bodies.encode(codec, body, options, maxMessageBytes, name);
        Map<String, dev.mailbox.api.AttributeValue> attributes = options.typedAttributes();
        String text = sqsText(bytes);
        if (text == null) {
            text = Base64.getEncoder().encodeToString(bytes);
            Map<String, dev.mailbox.api.AttributeValue> withMarker = new LinkedHashMap<>(attributes);
            withMarker.put(ENCODING_ATTRIBUTE, dev.mailbox.api.AttributeValue.string("base64"));
            if (withMarker.size() > Limits.MAX_ATTRIBUTES) {
                throw new IllegalArgumentException("a binary body is sent as base64 with the attribute '"
                        + ENCODING_ATTRIBUTE + "', which leaves room for " + (Limits.MAX_ATTRIBUTES - 1)
                        + " attributes, not " + attributes.size());
            }
            attributes = withMarker;
            int size = Limits.messageSize(text.length(), SendOptions.defaults().withTypedAttributes(attributes));
            if (size > maxMessageBytes) {
                throw new MessageTooLargeException(name, size, maxMessageBytes);
            }
        }
        Map<String, MessageAttributeValue> sqsAttributes = new LinkedHashMap<>();
        attributes.forEach((k, v) -> {
            if (!(k.equals(TRACE_HEADER_ATTRIBUTE) && v.isPlainString())) {
                sqsAttributes.put(k, TypedAttributes.toSqs(v));
            }
        });
        String traceHeader = options.attributes().get(TRACE_HEADER_ATTRIBUTE);
        if (traceHeader == null) {
            traceHeader = options.systemAttributes().get(TRACE_HEADER_ATTRIBUTE);
        }
        boolean hashHere = fifo != null && fifo.contentBasedDeduplication() && !contentBySqs
                && options.deduplicationId() == null;
        return new Outgoing(text, sqsAttributes, traceHeader, hashHere ? bytes : null);
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

    private SqsMessage<T> incoming(software.amazon.awssdk.services.sqs.model.Message m, long deadlineNanos, long epoch) {
        Map<String, String> attributes = new LinkedHashMap<>();
        boolean base64 = false;
        for (Map.Entry<String, MessageAttributeValue> e : m.messageAttributes().entrySet()) {
            if (e.getKey().equals(ENCODING_ATTRIBUTE)) {
                base64 = "base64".equals(e.getValue().stringValue());
            } else {
                attributes.put(e.getKey(), dev.mailbox.api.spi.StoredAttributes.encode(TypedAttributes.fromSqs(e.getValue())));
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
        String traceHeader = system.get(MessageSystemAttributeName.AWS_TRACE_HEADER);
        if (traceHeader != null && !traceHeader.isEmpty()) {
            attributes.put(TRACE_HEADER_ATTRIBUTE, traceHeader); // the system attribute stands for a message one of its name
        }
        int count = Integer.parseInt(system.getOrDefault(MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT, "1"));
        Instant sent = Instant.ofEpochMilli(Long.parseLong(system.getOrDefault(MessageSystemAttributeName.SENT_TIMESTAMP,
                Long.toString(System.currentTimeMillis()))));
        SqsMessage.State state = new SqsMessage.State(m.messageId(), deadlineNanos);
        deliveries.put(m.receiptHandle(), state);
        // on a standard queue the group is not the mailbox's to give (fairness() is false), as on every backend
        String group = fifoQueue ? system.get(MessageSystemAttributeName.MESSAGE_GROUP_ID) : null;
        String sequenceNumber = fifoQueue ? system.get(MessageSystemAttributeName.SEQUENCE_NUMBER) : null;
        return new SqsMessage<>(this, m.messageId(), m.receiptHandle(), count, sent,
                Collections.unmodifiableMap(attributes), body, group, sequenceNumber, state, epoch);
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

    /**
     * Whether an SQS error says the receipt handle is no longer good: {@code ReceiptHandleIsInvalid}, or
     * {@code InvalidParameterValue} about the receipt handle, which is how AWS refuses an expired one ("Value
     * ... for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.").
     */
    private static boolean staleHandle(@Nullable String code, @Nullable String message) {
        return "ReceiptHandleIsInvalid".equals(code) || ("InvalidParameterValue".equals(code) && message != null
                && message.toLowerCase(java.util.Locale.ROOT).replace(" ", "").contains("receipthandle"));
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
            String detail = e.awsErrorDetails() == null ? "" : String.valueOf(e.awsErrorDetails().errorMessage());
            if (!receiptHandle.isEmpty() && staleHandle(code, detail)) {
                throw new ReceiptHandleExpiredException(receiptHandle, "receipt handle " + receiptHandle + " given to "
                        + operation + " on mailbox '" + name + "' is stale: " + detail);
            }
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
        private boolean maxMessageBytesGiven;
        private ReceiveOptions defaults = ReceiveOptions.defaults();
        private @Nullable RedrivePolicy redrivePolicy;
        private @Nullable FifoOptions fifo;

        private Builder(String name, Codec<T> codec) {
            this.name = Limits.requireMailboxName(name, false);
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
         * Makes the mailbox a FIFO mailbox on an SQS FIFO queue (see "FIFO queues" in {@link SqsMailbox}). The
         * queue's name is the mailbox's plus {@code .fifo}, as SQS requires, so the mailbox's name can have at most
         * 75 characters. A queue made by {@link #createIfMissing(boolean)} gets {@code FifoQueue} true,
         * {@code ContentBasedDeduplication} as the options say, and, for the group scope,
         * {@code DeduplicationScope} {@code messageGroup} with {@code FifoThroughputLimit} {@code perMessageGroupId}
         * (SQS's high-throughput mode), otherwise {@code queue} and {@code perQueue}. An existing queue is used as it
         * is: where its attributes do not do what the options ask, the mailbox does it (see the class comment).
         *
         * @param options the FIFO options
         * @return this builder
         */
        public Builder<T> fifo(FifoOptions options) {
            this.fifo = Objects.requireNonNull(options, "options");
            return this;
        }

        /**
         * @param attribute a queue attribute to create the queue with, such as VisibilityTimeout,
         *                  MessageRetentionPeriod or MaximumMessageSize; FifoQueue {@code "true"} makes the mailbox a
         *                  FIFO mailbox with the FIFO options the queue has, as {@link #fifo(FifoOptions)} with the
         *                  queue's own settings would (a queue attribute that contradicts {@link #fifo} is refused
         *                  when the mailbox is built)
         * @param value     its value
         * @return this builder
         */
        public Builder<T> queueAttribute(QueueAttributeName attribute, String value) {
            queueAttributes.put(Objects.requireNonNull(attribute, "attribute"), Objects.requireNonNull(value, "value"));
            return this;
        }

        /**
         * @param bytes the largest message (encoded body plus attributes), 1 byte to 1 MiB, and no more
         *              than the queue's MaximumMessageSize; default the queue's MaximumMessageSize (1 MiB on SQS
         *              unless the queue was made with less; 256 KiB on a server that does not report it, such as
         *              ElasticMQ)
         * @return this builder
         */
        public Builder<T> maxMessageBytes(int bytes) {
            this.maxMessageBytes = Limits.requireMaxMessageBytes(bytes);
            this.maxMessageBytesGiven = true;
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
         *               on the same account and region, a FIFO one for a FIFO mailbox and a standard one for a
         *               standard mailbox (as SQS requires); set on the queue when the mailbox is built
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

        /**
         * @return the mailbox, with its queue resolved (or created) and configured
         * @throws IllegalArgumentException if the queue's kind is not the one asked for, the dead-letter mailbox is of
         *                                  the other kind, the options contradict each other or the queue, or the
         *                                  size limit is more than the queue allows; nothing is changed then
         */
        public SqsMailbox<T> build() {
            if ((client == null) == (region == null)) {
                throw new IllegalArgumentException("give exactly one of client(...) and region(...) for mailbox '"
                        + name + "'");
            }
            Boolean kind = intendedKind();
            if (kind != null) {
                requireDeadLetterKind(kind); // before anything is created
            }
            boolean owns = client == null;
            SqsClient sqs = owns ? ownClient() : client;
            try {
                String url = queueUrl != null ? queueUrl : resolve(sqs);
                Map<QueueAttributeName, String> attributes = sqs.getQueueAttributes(r -> r.queueUrl(url)
                        .attributeNames(QueueAttributeName.MAXIMUM_MESSAGE_SIZE, QueueAttributeName.FIFO_QUEUE,
                                QueueAttributeName.CONTENT_BASED_DEDUPLICATION,
                                QueueAttributeName.DEDUPLICATION_SCOPE)).attributes();
                boolean isFifo = "true".equals(attributes.get(QueueAttributeName.FIFO_QUEUE));
                if (kind != null && kind != isFifo) {
                    throw new IllegalArgumentException("queue " + url + " of mailbox '" + name + "' is "
                            + (isFifo ? "a FIFO queue, but the mailbox was built as a standard one (FifoQueue false)"
                            : "a standard queue, but the mailbox was built as a FIFO one"));
                }
                requireDeadLetterKind(isFifo);
                String max = attributes.get(QueueAttributeName.MAXIMUM_MESSAGE_SIZE);
                if (!maxMessageBytesGiven) {
                    // the queue's own limit, at most the library's: a queue made smaller is not a reason to refuse
                    // the mailbox. A server that does not say (ElasticMQ 1.6) is taken to have SQS's limit before
                    // 2025, 256 KiB, which ElasticMQ enforces
                    maxMessageBytes = max == null ? LEGACY_MAX_MESSAGE_BYTES
                            : Math.min(Limits.MAX_MESSAGE_BYTES, Integer.parseInt(max));
                }
                if (max != null && maxMessageBytes > Integer.parseInt(max)) {
                    throw new IllegalArgumentException("maxMessageBytes " + maxMessageBytes + " is more than queue '"
                            + name + "' allows (MaximumMessageSize " + max + ")");
                }
                Queue queue = isFifo ? fifoQueue(url, attributes) : new Queue(url, null, false, false);
                if (redrivePolicy != null) {
                    SqsMailbox<?> dlq = (SqsMailbox<?>) redrivePolicy.deadLetterMailbox();
                    String arn = sqs.getQueueAttributes(r -> r.queueUrl(dlq.queueUrl)
                            .attributeNames(QueueAttributeName.QUEUE_ARN)).attributes().get(QueueAttributeName.QUEUE_ARN);
                    String json = "{\"deadLetterTargetArn\":\"" + arn + "\",\"maxReceiveCount\":\""
                            + redrivePolicy.maxReceiveCount() + "\"}";
                    sqs.setQueueAttributes(r -> r.queueUrl(url).attributes(Map.of(QueueAttributeName.REDRIVE_POLICY, json)));
                }
                return new SqsMailbox<>(this, sqs, owns, queue);
            } catch (RuntimeException e) {
                if (owns) {
                    sqs.close();
                }
                throw e;
            }
        }

        /**
         * @return whether the builder asks for a FIFO queue, a standard one, or either (a queue given by URL)
         * @throws IllegalArgumentException if {@link #fifo} and the queue attributes contradict each other
         */
        private @Nullable Boolean intendedKind() {
            String fifoQueue = queueAttributes.get(QueueAttributeName.FIFO_QUEUE);
            if (fifo != null) {
                if (fifoQueue != null && !"true".equals(fifoQueue)) {
                    throw new IllegalArgumentException("mailbox '" + name + "' was given fifo(...) and the queue"
                            + " attribute FifoQueue " + fifoQueue + ": give one of them");
                }
                for (Map.Entry<QueueAttributeName, String> e : fifoAttributes(fifo).entrySet()) {
                    String given = queueAttributes.get(e.getKey());
                    if (given != null && e.getKey() != QueueAttributeName.FIFO_THROUGHPUT_LIMIT
                            && !given.equals(e.getValue())) {
                        throw new IllegalArgumentException("mailbox '" + name + "' was given " + fifo + ", which"
                                + " means the queue attribute " + e.getKey() + " " + e.getValue() + ", and the queue"
                                + " attribute " + e.getKey() + " " + given);
                    }
                }
                return true;
            }
            if (fifoQueue != null) {
                return "true".equals(fifoQueue);
            }
            // SQS requires a FIFO queue's name to end in .fifo, which a mailbox's name cannot
            return queueUrl == null ? Boolean.FALSE : null;
        }

        /** The queue attributes that make a FIFO queue do what {@code options} ask. */
        private static Map<QueueAttributeName, String> fifoAttributes(FifoOptions options) {
            boolean group = options.deduplicationScope() == FifoOptions.DeduplicationScope.GROUP;
            Map<QueueAttributeName, String> a = new EnumMap<>(QueueAttributeName.class);
            a.put(QueueAttributeName.FIFO_QUEUE, "true");
            a.put(QueueAttributeName.CONTENT_BASED_DEDUPLICATION, Boolean.toString(options.contentBasedDeduplication()));
            a.put(QueueAttributeName.DEDUPLICATION_SCOPE, group ? "messageGroup" : "queue");
            a.put(QueueAttributeName.FIFO_THROUGHPUT_LIMIT, group ? "perMessageGroupId" : "perQueue");
            return a;
        }

        /** @throws IllegalArgumentException if the dead-letter mailbox is not of the kind a redrive policy needs */
        private void requireDeadLetterKind(boolean fifoQueue) {
            if (redrivePolicy == null) {
                return;
            }
            SqsMailbox<?> dlq = (SqsMailbox<?>) redrivePolicy.deadLetterMailbox();
            if (dlq.fifoQueue != fifoQueue) {
                throw new IllegalArgumentException("dead-letter mailbox '" + dlq.name + "' must be " + (fifoQueue
                        ? "a FIFO mailbox (an SQS FIFO queue), because mailbox '" + name + "' is one"
                        : "a standard mailbox (an SQS standard queue), because mailbox '" + name + "' is one")
                        + ", as SQS requires");
            }
        }

        /**
         * How the mailbox keeps its FIFO options on a FIFO queue with these attributes: what SQS does itself, and
         * what the mailbox does because the queue does not (an existing queue made otherwise, or a server without
         * DeduplicationScope, such as ElasticMQ).
         *
         * @throws IllegalArgumentException if the queue deduplicates per group and the options ask for the mailbox
         *                                  scope, which no client can make of it
         */
        private Queue fifoQueue(String url, Map<QueueAttributeName, String> attributes) {
            boolean sqsContent = "true".equals(attributes.get(QueueAttributeName.CONTENT_BASED_DEDUPLICATION));
            boolean sqsGroupScope = "messageGroup".equals(attributes.get(QueueAttributeName.DEDUPLICATION_SCOPE));
            FifoOptions options = fifo != null ? fifo : FifoOptions.defaults().withContentBasedDeduplication(sqsContent)
                    .withDeduplicationScope(sqsGroupScope ? FifoOptions.DeduplicationScope.GROUP
                            : FifoOptions.DeduplicationScope.MAILBOX);
            boolean groupScope = options.deduplicationScope() == FifoOptions.DeduplicationScope.GROUP;
            if (!groupScope && sqsGroupScope) {
                throw new IllegalArgumentException("FIFO queue " + url + " deduplicates within each message group"
                        + " (DeduplicationScope messageGroup), so mailbox '" + name + "' cannot deduplicate across"
                        + " the whole mailbox as " + options + " ask: ask for DeduplicationScope.GROUP, or set the"
                        + " queue's DeduplicationScope to queue");
            }
            boolean scopeByGroup = groupScope && !sqsGroupScope;
            if (scopeByGroup || options.contentBasedDeduplication() != sqsContent) {
                LOG.debug("mailbox '{}': FIFO queue {} has ContentBasedDeduplication {} and DeduplicationScope {};"
                        + " the mailbox does the rest of {} itself", name, url, sqsContent,
                        attributes.get(QueueAttributeName.DEDUPLICATION_SCOPE), options);
            }
            return new Queue(url, options, options.contentBasedDeduplication() && sqsContent && !scopeByGroup,
                    scopeByGroup);
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
            // SQS requires a FIFO queue's name to end in .fifo, which a portable mailbox name cannot hold
            boolean fifoQueue = fifo != null || "true".equals(queueAttributes.get(QueueAttributeName.FIFO_QUEUE));
            String queueName = fifoQueue ? name + FIFO_SUFFIX : name;
            if (queueName.length() > Limits.MAX_NAME_LENGTH) {
                throw new IllegalArgumentException("mailbox '" + name + "' on an SQS FIFO queue can have at most "
                        + (Limits.MAX_NAME_LENGTH - FIFO_SUFFIX.length()) + " characters: the queue's name is the"
                        + " mailbox's plus '" + FIFO_SUFFIX + "', and SQS allows " + Limits.MAX_NAME_LENGTH);
            }
            try {
                return sqs.getQueueUrl(r -> r.queueName(queueName)).queueUrl();
            } catch (QueueDoesNotExistException e) {
                if (!create) {
                    throw new MailboxException("SQS queue '" + queueName + "' does not exist; create it, or build the"
                            + " mailbox with createIfMissing(true)", e);
                }
                Map<QueueAttributeName, String> attributes = new EnumMap<>(QueueAttributeName.class);
                attributes.putAll(queueAttributes);
                if (fifo != null) {
                    fifoAttributes(fifo).forEach(attributes::putIfAbsent);
                }
                return sqs.createQueue(r -> r.queueName(queueName).attributes(attributes)).queueUrl();
            }
        }
    }

    /**
     * The queue a builder resolved, and how a FIFO queue's deduplication is shared between SQS and the mailbox.
     *
     * @param fifo         the FIFO options the mailbox keeps, or null for a standard queue
     * @param contentBySqs whether SQS computes the content's deduplication id (the mailbox sends none)
     * @param scopeByGroup whether the mailbox puts the group into each deduplication id
     */
    private record Queue(String url, @Nullable FifoOptions fifo, boolean contentBySqs, boolean scopeByGroup) {
    }
}
