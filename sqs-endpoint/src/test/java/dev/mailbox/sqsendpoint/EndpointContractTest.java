package dev.mailbox.sqsendpoint;

import dev.mailbox.sqs.SqsMailbox;
import dev.mailbox.sqs.SqsMailboxContract;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The whole Mailbox TCK through {@link SqsMailbox} (AWS SDK v2, signed requests) pointed at an {@link SqsEndpoint}
 * whose queues are the mailboxes of the directory a subclass gives: every contract rule holds end to end over the
 * SQS wire. The tests run concurrently (they mostly wait on whole-second timeouts), each on its own queue.
 */
@Execution(ExecutionMode.CONCURRENT)
abstract class EndpointContractTest extends SqsMailboxContract {

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
}
