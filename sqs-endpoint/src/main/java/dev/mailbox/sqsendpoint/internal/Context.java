package dev.mailbox.sqsendpoint.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mailbox.api.Mailbox;
import dev.mailbox.sqsendpoint.QueueDirectory;
import dev.mailbox.sqsendpoint.QueueRecord;
import dev.mailbox.sqsendpoint.SqsAuthorizer;
import java.time.Clock;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/** What every action needs: the directory, ARNs and URLs, the clock and the endpoint's own delivery records. */
final class Context {

    private static final Pattern QUEUE_NAME = Pattern.compile("[A-Za-z0-9_-]{1,80}|[A-Za-z0-9_-]{1,75}\\.fifo");

    final QueueDirectory directory;
    final Arns arns;
    final String accountId;
    final Clock clock;
    final ObjectMapper json;
    final Deliveries deliveries = new Deliveries();
    final ReceiveAttempts attempts = new ReceiveAttempts();
    final Sequences sequences;
    final SqsAuthorizer authorizer;

    Context(QueueDirectory directory, SqsAuthorizer authorizer, String region, String accountId, Clock clock,
            ObjectMapper json) {
        this.directory = directory;
        this.authorizer = authorizer;
        this.arns = new Arns(region, accountId);
        this.accountId = accountId;
        this.clock = clock;
        this.json = json;
        this.sequences = new Sequences(clock);
    }

    /**
     * One request: its parameters, the base of the URLs it is answered with, the queue its path names, the
     * principal it is made by (whose rights the directory's mailboxes act with), and whether a receive may wait
     * (long-poll) or must answer with what is there now.
     */
    record Request(Params params, String baseUrl, @Nullable String pathQueue, String principal, boolean mayWait) {
    }

    String url(Request request, String queue) {
        return request.baseUrl() + "/" + accountId + "/" + queue;
    }

    /**
     * @return the name of the queue a request is for: the last segment of its {@code QueueUrl}, or of the path it
     *         was sent to (the query protocol allows posting to the queue's URL)
     * @throws SqsError MissingParameter without either; NonExistentQueue for a URL of another account
     */
    String queueName(Request request) {
        String url = request.params().text("QueueUrl");
        if (url == null) {
            if (request.pathQueue() != null) {
                return request.pathQueue();
            }
            throw SqsError.missing("QueueUrl");
        }
        String[] segments = url.split("/", -1);
        String name = segments[segments.length - 1];
        if (segments.length >= 2) {
            String account = segments[segments.length - 2];
            if (account.matches("[0-9]{12}") && !account.equals(accountId)) {
                throw doesNotExist();
            }
        }
        if (!QUEUE_NAME.matcher(name).matches()) {
            throw doesNotExist();
        }
        return name;
    }

    /** @return the queue's record; NonExistentQueue if there is none */
    QueueRecord record(String queue) {
        return directory.get(queue).orElseThrow(Context::doesNotExist);
    }

    Mailbox<byte[]> mailbox(String queue, String principal) {
        try {
            return directory.mailbox(queue, principal);
        } catch (dev.mailbox.api.MailboxUnavailableException e) {
            throw e;
        } catch (dev.mailbox.api.MailboxException e) {
            if (directory.get(queue).isEmpty()) {
                throw doesNotExist(); // deleted since its record was read
            }
            throw e;
        }
    }

    QueueAttributes.Settings settings(QueueRecord record) {
        return QueueAttributes.settings(record, arns, json);
    }

    /**
     * @param name a queue name CreateQueue was given
     * @param fifo whether the queue is to be FIFO
     * @throws SqsError InvalidParameterValue, as SQS words it, for a name its kind may not have
     */
    static void requireQueueName(String name, boolean fifo) {
        if (fifo ? !name.matches("[A-Za-z0-9_-]{1,75}\\.fifo") : !name.matches("[A-Za-z0-9_-]{1,80}")) {
            throw SqsError.invalidParameter(fifo
                    ? "The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores,"
                    + " must end with .fifo suffix and be 1 to 80 in length."
                    : "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length");
        }
    }

    /** @return whether a queue name is one SQS could have given (either kind) */
    static boolean isQueueName(String name) {
        return QUEUE_NAME.matcher(name).matches();
    }

    private static final Pattern UUID_FORM = Pattern.compile(
            "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");

    /**
     * The MessageId a message has on the wire: SQS's are UUIDs, and clients rely on it (Spring Cloud AWS parses
     * them as {@link java.util.UUID}), so a mailbox id of another form (the in-memory and Redis backends' counters)
     * is shown as the name-based UUID of the queue and the id: the same for every answer about the message, and
     * different in every queue.
     */
    static String messageId(String queue, String mailboxId) {
        if (UUID_FORM.matcher(mailboxId).matches()) {
            return mailboxId;
        }
        return java.util.UUID.nameUUIDFromBytes((queue + '\n' + mailboxId).getBytes(
                java.nio.charset.StandardCharsets.UTF_8)).toString();
    }

    static SqsError doesNotExist() {
        return new SqsError(ErrorCode.QUEUE_DOES_NOT_EXIST, "The specified queue does not exist.");
    }
}
