package dev.mailbox.sqsendpoint;

import dev.mailbox.http.BodyBudget;
import dev.mailbox.http.HttpLimits;
import dev.mailbox.sqsendpoint.internal.EndpointServer;
import dev.mailbox.sqsendpoint.internal.Settings;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.Objects;
import javax.net.ssl.SSLContext;
import org.jspecify.annotations.Nullable;

/**
 * Amazon SQS's HTTP API over mailboxes: any SQS client (the AWS SDKs and CLI, boto3, Spring Cloud AWS) uses the
 * queues of a {@link QueueDirectory} with no change but the endpoint URL.
 *
 * <pre>{@code
 * SqsEndpoint sqs = SqsEndpoint.builder()
 *         .queues(QueueDirectory.inMemory(name -> InMemoryMailbox.builder(name, Codec.bytes())
 *                 .maxMessageBytes(Limits.MAX_MESSAGE_BYTES).build()))
 *         .credentials(AccessKeyStore.of(new AccessKey("AKIDEXAMPLE", secret, "orders-service")))
 *         .listen(new InetSocketAddress("127.0.0.1", 9324))
 *         .start();
 * }</pre>
 *
 * <h2>What it serves</h2>
 * Both wire protocols the SDKs use, on the same port: the AWS JSON 1.0 protocol ({@code X-Amz-Target:
 * AmazonSQS.<Action>}, current SDKs) and the query protocol (form-encoded {@code Action=...} with XML
 * responses, older SDKs and tools), with SQS's error codes, HTTP statuses and error formats in each. Every action of
 * SQS's API: CreateQueue, GetQueueUrl, ListQueues, DeleteQueue, GetQueueAttributes, SetQueueAttributes,
 * SendMessage(Batch), ReceiveMessage, DeleteMessage(Batch), ChangeMessageVisibility(Batch), PurgeQueue, TagQueue,
 * UntagQueue, ListQueueTags, ListDeadLetterSourceQueues, AddPermission, RemovePermission, StartMessageMoveTask,
 * ListMessageMoveTasks and CancelMessageMoveTask. Standard queues (fair where the mailbox is:
 * {@link dev.mailbox.api.MailboxCapabilities#fairness()}) and FIFO queues, where the directory gives FIFO
 * mailboxes ({@link QueueDirectory#inMemory(QueueDirectory.QueueOpener)}); docs/sqs-endpoint.md lists what is
 * supported and the few differences from SQS.
 *
 * <h2>How SQS maps onto a mailbox</h2>
 * <ul>
 *   <li>A message body is stored as its UTF-8 bytes; message attributes as the mailbox's typed attributes
 *       ({@link dev.mailbox.api.AttributeValue}: String, Number, Binary and custom types kept), and what SQS keeps of
 *       a message besides as its system attributes ({@link dev.mailbox.api.SendOptions#withSystemAttribute}): the
 *       sender's principal (SenderId), the X-Ray trace header (AWSTraceHeader), a FIFO message's
 *       MessageDeduplicationId and SequenceNumber, a fair queue's MessageGroupId, a dead letter's
 *       DeadLetterQueueSourceArn. System attributes never collide with message attributes of the same name. A stored
 *       body that is not text SQS can carry (a Java producer's raw bytes) is delivered as base64 with the message
 *       attribute {@code mailbox-encoding=base64}, the convention of {@code SqsMailbox}; a message sent with that
 *       attribute is stored as the bytes it stands for.</li>
 *   <li>FIFO queues are FIFO mailboxes; the endpoint applies ContentBasedDeduplication and DeduplicationScope
 *       itself (so they may be changed later) and gives each message its SequenceNumber. A MessageGroupId on a
 *       standard queue is the mailbox's group: a tenant, where the mailbox is fair.</li>
 *   <li>Receipt handles are the mailbox's own. On a standard queue DeleteMessage with the most recent handle deletes
 *       the message also after its visibility timeout ended, until it is received again, and an older handle
 *       succeeds without deleting, as on SQS; on a FIFO queue a handle is refused once its visibility timeout ended.
 *       ChangeMessageVisibility with a stale handle is refused.</li>
 *   <li>Queue attributes are kept in the directory. VisibilityTimeout, DelaySeconds and
 *       ReceiveMessageWaitTimeSeconds are the defaults of calls that give none; MaximumMessageSize (default and
 *       largest 1 MiB) is checked on every send; MessageRetentionPeriod is applied when a receive meets a message
 *       older than it (the message is deleted instead of delivered); RedrivePolicy moves a message whose receive
 *       count exceeds maxReceiveCount to the dead-letter queue when a receive meets it (sent there, then deleted
 *       here: never lost, and in both queues only if the endpoint dies between the two steps), and
 *       RedriveAllowPolicy is checked when a RedrivePolicy is set. The move is a send for the receiving principal:
 *       unless it may send to the dead-letter queue, the message is delivered instead. A queue's Policy
 *       (AddPermission's statements, whose account ids are principals) lets principals do what the
 *       {@link Builder#authorizer(SqsAuthorizer) authorizer} alone refuses them.</li>
 *   <li>The Mailbox API counts all undeleted messages together; ApproximateNumberOfMessagesNotVisible and
 *       ...Delayed are this endpoint's own estimate of the deliveries and delayed sends made through it, and
 *       ApproximateNumberOfMessages is the rest. ApproximateFirstReceiveTimestamp and FIFO receive attempts are
 *       remembered by the endpoint that saw them, message move tasks run on the endpoint that started them.</li>
 * </ul>
 *
 * <h2>Security</h2>
 * Every request must carry a valid AWS Signature Version 4 (an {@code Authorization} header) by a key of the
 * {@link Builder#credentials(AccessKeyStore) key store}, made within 15 minutes of the endpoint's clock, over the
 * request exactly as received; otherwise it is refused as SQS refuses it ({@code InvalidClientTokenId},
 * {@code SignatureDoesNotMatch}, {@code IncompleteSignature}, {@code MissingAuthenticationToken}). Then the
 * {@link Builder#authorizer(SqsAuthorizer) authorizer} decides, before the action touches anything; a refusal is
 * SQS's {@code AccessDenied} (HTTP 403). Message calls then use the mailbox the directory gives for the caller's
 * principal ({@link QueueDirectory#mailbox(String, String)}), so a directory whose mailboxes check rights
 * themselves (a mailbox node's data plane) checks them again as that principal; what such a mailbox refuses with
 * {@link dev.mailbox.api.MailboxAccessDeniedException} is answered with {@code AccessDenied} as well. Secrets,
 * signatures and bodies are never logged.
 * {@link Builder#authenticationOff()} accepts every request as {@value #ANONYMOUS}, for loopback and demos; on
 * another address it logs a warning. {@link Builder#tls(SSLContext)} serves HTTPS.
 *
 * <h2>What a client can cost it</h2>
 * A request is authenticated from its headers before its body is read (the signature's shape, a known access key,
 * the credential scope and the time), so an unsigned or unknown-key request costs no more than its headers. The
 * HTTP listener bounds the rest ({@link Builder#limits(HttpLimits)}, default {@link #defaultLimits()}):
 * connections overall and per client address, deadlines for headers and for bodies (slow clients are cut off,
 * with TLS as without), a body of at most {@value dev.mailbox.sqsendpoint.internal.EndpointServer#MAX_REQUEST_BYTES}
 * bytes, and the bytes of bodies held at once ({@link Builder#bodyBudget(BodyBudget)}). Receives run apart from
 * every other call, so that no number of them holds up sends and deletes: at most
 * {@link Builder#maxWaitingReceives(int)} ReceiveMessage calls wait (long-poll) at once, each on a thread of its
 * own; one more is answered at once with what the queue has now (often nothing), as a short poll, rather than
 * queued. Other calls run on {@link Builder#maxConcurrentRequests(int)} threads, with up to 1,024 waiting for one
 * (more: ServiceUnavailable, which the SDKs retry).
 */
public interface SqsEndpoint extends AutoCloseable {

    /** The principal of every request when authentication is off. */
    String ANONYMOUS = "anonymous";

    /** How many receives may wait (long-poll) at once unless {@link Builder#maxWaitingReceives(int)} says. */
    int DEFAULT_MAX_WAITING_RECEIVES = 512;

    /**
     * @return the listener limits an endpoint has unless {@link Builder#limits(HttpLimits)} says: 4,096 connections
     *         (2,048 from one address: one client host may long-poll with thousands), request headers within
     *         10 s, a body within 30 s, 60 s idle, bodies up to 4 MiB; 4 worker threads, which only sort
     *         requests to the endpoint's own threads, with 4,096 requests waiting for them
     */
    static HttpLimits defaultLimits() {
        return HttpLimits.defaults().withMaxConnections(4096).withMaxConnectionsPerAddress(2048)
                .withIdleTimeout(java.time.Duration.ofSeconds(60))
                .withMaxBodyBytes(dev.mailbox.sqsendpoint.internal.EndpointServer.MAX_REQUEST_BYTES)
                .withWorkers(4, 4096);
    }

    /** @return the address the endpoint listens on (the actual port when 0 was asked for) */
    InetSocketAddress address();

    /** @return the endpoint's URL for clients, {@code http://host:port} (https with TLS) */
    URI url();

    /**
     * Stops listening; waiting receives are interrupted and answered (a message is never lost: one a receive had
     * taken becomes visible again after its visibility timeout), other requests under way get up to a second to
     * finish, then every connection is closed. Closes no mailbox: the directory owns them. Idempotent.
     */
    @Override
    void close();

    /** @return a builder */
    static Builder builder() {
        return new Builder();
    }

    /** Builds and starts an {@link SqsEndpoint}. Not thread-safe. */
    final class Builder {
        private @Nullable QueueDirectory queues;
        private @Nullable AccessKeyStore credentials;
        private boolean authenticationOff;
        private SqsAuthorizer authorizer = SqsAuthorizer.ALLOW_ALL;
        private InetSocketAddress listen = new InetSocketAddress("127.0.0.1", 0);
        private String region = "us-east-1";
        private String accountId = "000000000000";
        private @Nullable URI advertisedUrl;
        private HttpLimits limits = defaultLimits();
        private int maxConcurrentRequests = 256;
        private int maxWaitingReceives = DEFAULT_MAX_WAITING_RECEIVES;
        private BodyBudget budget = BodyBudget.shared();
        private @Nullable SSLContext tls;

        private Builder() {
        }

        /**
         * @param queues where the queues are (required)
         * @return this builder
         */
        public Builder queues(QueueDirectory queues) {
            this.queues = Objects.requireNonNull(queues, "queues");
            return this;
        }

        /**
         * @param credentials the access keys whose SigV4 signatures are accepted; give this or
         *                    {@link #authenticationOff()}
         * @return this builder
         */
        public Builder credentials(AccessKeyStore credentials) {
            this.credentials = Objects.requireNonNull(credentials, "credentials");
            return this;
        }

        /**
         * Accepts requests without checking their signature, as {@value SqsEndpoint#ANONYMOUS}: for loopback and
         * the embedded demo. The authorizer still decides.
         *
         * @return this builder
         */
        public Builder authenticationOff() {
            this.authenticationOff = true;
            return this;
        }

        /**
         * @param authorizer decides per principal, action and queue; default {@link SqsAuthorizer#ALLOW_ALL}
         * @return this builder
         */
        public Builder authorizer(SqsAuthorizer authorizer) {
            this.authorizer = Objects.requireNonNull(authorizer, "authorizer");
            return this;
        }

        /**
         * @param address where to listen; default 127.0.0.1 on a free port
         * @return this builder
         */
        public Builder listen(InetSocketAddress address) {
            this.listen = Objects.requireNonNull(address, "address");
            return this;
        }

        /**
         * @param region the region in queue ARNs ({@code arn:aws:sqs:REGION:ACCOUNT:NAME}); default
         *               {@code us-east-1}. Clients may sign for any region.
         * @return this builder
         */
        public Builder region(String region) {
            Objects.requireNonNull(region, "region");
            if (!region.matches("[a-z0-9-]{1,64}")) {
                throw new IllegalArgumentException("region must be 1 to 64 of a-z, 0-9 and '-', was '" + region + "'");
            }
            this.region = region;
            return this;
        }

        /**
         * @param accountId the 12-digit account in queue URLs and ARNs; default {@code 000000000000}
         * @return this builder
         */
        public Builder accountId(String accountId) {
            Objects.requireNonNull(accountId, "accountId");
            if (!accountId.matches("[0-9]{12}")) {
                throw new IllegalArgumentException("accountId must be 12 digits, was '" + accountId + "'");
            }
            this.accountId = accountId;
            return this;
        }

        /**
         * @param url the base of the queue URLs handed out ({@code URL/ACCOUNT/NAME}), for an endpoint behind a
         *            proxy or load balancer; default: the scheme and the {@code Host} the client used, so a URL
         *            leads back to the node that gave it out
         * @return this builder
         */
        public Builder advertisedUrl(URI url) {
            Objects.requireNonNull(url, "url");
            if (url.getScheme() == null || url.getHost() == null || !(url.getPath() == null || url.getPath().isEmpty()
                    || url.getPath().equals("/"))) {
                throw new IllegalArgumentException("advertisedUrl must be scheme://host[:port] with no path, was " + url);
            }
            this.advertisedUrl = url;
            return this;
        }

        /**
         * @param max the most calls other than receives served at once (see {@link #maxWaitingReceives} for
         *            those); up to 1,024 more wait for a thread, and more than that are refused with
         *            ServiceUnavailable; default 256
         * @return this builder
         */
        public Builder maxConcurrentRequests(int max) {
            if (max < 1 || max > 10_000) {
                throw new IllegalArgumentException("maxConcurrentRequests must be between 1 and 10000, was " + max);
            }
            this.maxConcurrentRequests = max;
            return this;
        }

        /**
         * @param max the most ReceiveMessage calls that wait (long-poll) at once, each on a thread of its own; one
         *            more answers at once with what the queue has; default {@value #DEFAULT_MAX_WAITING_RECEIVES}
         * @return this builder
         */
        public Builder maxWaitingReceives(int max) {
            if (max < 1 || max > 10_000) {
                throw new IllegalArgumentException("maxWaitingReceives must be between 1 and 10000, was " + max);
            }
            this.maxWaitingReceives = max;
            return this;
        }

        /**
         * @param limits the HTTP listener's connection caps, deadlines, body cap and worker threads (which only
         *               sort requests); default {@link SqsEndpoint#defaultLimits()}. A body cap below 4 MiB refuses
         *               some valid batches
         * @return this builder
         */
        public Builder limits(HttpLimits limits) {
            this.limits = Objects.requireNonNull(limits, "limits");
            return this;
        }

        /**
         * @param budget the bytes of request bodies held at once; default {@link BodyBudget#shared()}, shared with
         *               the process's other listeners
         * @return this builder
         */
        public Builder bodyBudget(BodyBudget budget) {
            this.budget = Objects.requireNonNull(budget, "budget");
            return this;
        }

        /**
         * @param context serve HTTPS with this TLS context (its key manager holds the server's certificate)
         * @return this builder
         */
        public Builder tls(SSLContext context) {
            this.tls = Objects.requireNonNull(context, "context");
            return this;
        }

        /**
         * @return the endpoint, listening
         * @throws IllegalStateException               if no directory was given, or neither or both of credentials
         *                                             and {@link #authenticationOff()}
         * @throws dev.mailbox.api.MailboxUnavailableException if the address cannot be bound
         */
        public SqsEndpoint start() {
            if (queues == null) {
                throw new IllegalStateException("give the endpoint its queues: queues(QueueDirectory)");
            }
            if ((credentials == null) == !authenticationOff) {
                throw new IllegalStateException("give exactly one of credentials(AccessKeyStore) and"
                        + " authenticationOff()");
            }
            return new EndpointServer(new Settings(queues, credentials, authorizer, listen, region, accountId,
                    advertisedUrl, limits, maxConcurrentRequests, 1024, maxWaitingReceives, budget, tls));
        }
    }
}
