package dev.mailbox.sqsendpoint;

import dev.mailbox.api.Mailbox;
import dev.mailbox.sqs.SqsMailbox;
import dev.mailbox.testkit.MailboxContract;
import dev.mailbox.testkit.MailboxSpec;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * The whole Mailbox TCK through {@link SqsMailbox} (AWS SDK v2, signed requests) pointed at an {@link SqsEndpoint}
 * whose queues are the mailboxes of the directory a subclass gives: every contract rule holds end to end over the
 * SQS wire. The tests run concurrently (they mostly wait on whole-second timeouts), each on its own queue.
 */
@Execution(ExecutionMode.CONCURRENT)
abstract class EndpointContractTest extends MailboxContract {

    /** @return the client of the endpoint under test (each subclass starts its own in {@code @BeforeAll}) */
    abstract SqsClient client();

    /**
     * @param queues the endpoint's queues
     * @return an endpoint that checks signatures by {@link TestEndpoints#KEY_ID}
     */
    static SqsEndpoint startEndpoint(QueueDirectory queues) {
        return SqsEndpoint.builder().queues(queues)
                .credentials(AccessKeyStore.of(new AccessKey(TestEndpoints.KEY_ID, TestEndpoints.SECRET,
                        TestEndpoints.PRINCIPAL)))
                .start();
    }

    @Override
    protected <T> Mailbox<T> createMailbox(MailboxSpec<T> spec) {
        SqsMailbox.Builder<T> b = SqsMailbox.builder(spec.name(), spec.codec()).client(client()).createIfMissing(true)
                .maxMessageBytes(spec.maxMessageBytes());
        if (spec.capacity() > 0) {
            b.capacity(spec.capacity());
        }
        if (spec.redrivePolicy() != null) {
            b.redrivePolicy(spec.redrivePolicy());
        }
        return b.build();
    }

    @Override
    protected <T> Optional<Mailbox<T>> reopen(MailboxSpec<T> spec) {
        return Optional.of(SqsMailbox.builder(spec.name(), spec.codec()).client(client())
                .maxMessageBytes(spec.maxMessageBytes()).build());
    }

    @Override
    protected void destroy(Mailbox<?> mailbox) {
        mailbox.close();
        try {
            client().deleteQueue(r -> r.queueUrl(((SqsMailbox<?>) mailbox).queueUrl()));
        } catch (RuntimeException ignored) {
            // deleted already
        }
    }

    @Override
    protected Duration tick() {
        return Duration.ofSeconds(1);
    }

    /** Blocked once the thread is inside the SDK's ReceiveMessage call (a socket read). */
    @Override
    protected void awaitBlockedInReceive(Thread thread) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() - deadline < 0 && thread.isAlive()) {
            for (StackTraceElement frame : thread.getStackTrace()) {
                if (frame.getMethodName().equals("receiveMessage") && frame.getClassName().contains("SqsClient")) {
                    return;
                }
            }
            Thread.onSpinWait();
        }
    }
}
