package dev.mailbox.sqs;

import dev.mailbox.api.Mailbox;
import dev.mailbox.testkit.MailboxContract;
import dev.mailbox.testkit.MailboxSpec;
import software.amazon.awssdk.services.sqs.SqsClient;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The Mailbox contract through {@link SqsMailbox} on any server that speaks SQS: ElasticMQ and LocalStack here, the
 * project's own SQS endpoint in {@code sqs-endpoint} and a mailbox node's in {@code cli} (this module's test-jar).
 * Subclasses give the client of the server under test; each queue is made by {@code createIfMissing} and deleted
 * after its test.
 */
public abstract class SqsMailboxContract extends MailboxContract {

    /** @return a client for the endpoint under test */
    protected abstract SqsClient client();

    /**
     * Whether the server under test has FIFO queues. Where it has, a spec with {@link MailboxSpec#fifo() FIFO options}
     * is made a FIFO queue ({@link SqsMailbox.Builder#fifo}) and the kit runs its FIFO group on it; where it has not,
     * the options are ignored, the mailbox is a standard one and the kit skips the group, saying so.
     *
     * @return the default, false: subclasses for servers with FIFO queues (ElasticMQ, LocalStack, AWS) say true
     */
    protected boolean fifoQueues() {
        return false;
    }

    @Override
    protected final <T> Mailbox<T> createMailbox(MailboxSpec<T> spec) {
        SqsMailbox.Builder<T> b = SqsMailbox.builder(spec.name(), spec.codec())
                .client(client())
                .createIfMissing(true);
        sizeLimit(b, spec);
        if (fifoQueues() && spec.fifo() != null) {
            b.fifo(spec.fifo());
        }
        if (spec.capacity() > 0) {
            b.capacity(spec.capacity()); // SQS refuses, as the contract expects of a backend without capacity
        }
        if (spec.redrivePolicy() != null) {
            b.redrivePolicy(spec.redrivePolicy());
        }
        return b.build();
    }

    /** A second SqsMailbox on the same queue, as another process would build it: its own fence and send ids. */
    @Override
    protected <T> Optional<Mailbox<T>> reopen(MailboxSpec<T> spec) {
        SqsMailbox.Builder<T> b = SqsMailbox.builder(spec.name(), spec.codec())
                .client(client());
        sizeLimit(b, spec);
        if (fifoQueues() && spec.fifo() != null) {
            b.fifo(spec.fifo());
        }
        return Optional.of(b.build());
    }

    /**
     * A spec's own limit is set on the builder; the default one is left to SqsMailbox, which takes the queue's
     * MaximumMessageSize (256 KiB where the server does not report it, as ElasticMQ, which enforces that), so the
     * kit's size tests run against the limit the server really has.
     */
    private static <T> void sizeLimit(SqsMailbox.Builder<T> b, MailboxSpec<T> spec) {
        if (spec.maxMessageBytes() != dev.mailbox.api.Limits.DEFAULT_MAX_MESSAGE_BYTES) {
            b.maxMessageBytes(spec.maxMessageBytes());
        }
    }

    /** Deletes the queue, so the server does not fill up with test queues. */
    @Override
    protected void destroy(Mailbox<?> mailbox) {
        mailbox.close();
        try {
            client().deleteQueue(r -> r.queueUrl(((SqsMailbox<?>) mailbox).queueUrl()));
        } catch (RuntimeException ignored) {
            // deleted already
        }
    }

    /** SQS keeps whole seconds. */
    @Override
    protected Duration tick() {
        return Duration.ofSeconds(1);
    }

    /** The receive is blocked once its thread is inside the SDK's ReceiveMessage call (a socket read). */
    @Override
    protected void awaitBlockedInReceive(Thread thread) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        // a receive that waits polls on a thread of its own, named after the mailbox; the TCK names its receiving
        // threads "tck-receiver-" + the mailbox's name
        String poller = thread.getName().startsWith("tck-receiver-")
                ? SqsMailbox.LONG_POLL_THREAD + thread.getName().substring("tck-receiver-".length()) : null;
        while (System.nanoTime() - deadline < 0 && thread.isAlive()) {
            if (inReceiveMessage(thread)) {
                return;
            }
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (t.getName().equals(poller) && inReceiveMessage(t)) {
                    return;
                }
            }
            try {
                Thread.sleep(2); // a thread dump a turn stops every thread: not in a tight loop
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static boolean inReceiveMessage(Thread thread) {
        for (StackTraceElement frame : thread.getStackTrace()) {
            if (frame.getMethodName().equals("receiveMessage") && frame.getClassName().contains("SqsClient")) {
                return true;
            }
        }
        return false;
    }
}
