package dev.mailbox.sqs;

import org.junit.jupiter.api.DisplayName;
import software.amazon.awssdk.services.sqs.SqsClient;

@DisplayName("SqsMailbox on embedded ElasticMQ meets the Mailbox contract")
class ElasticMqContractTest extends SqsMailboxContract {

    @Override
    protected SqsClient client() {
        return SharedElasticMq.client();
    }

    /** FIFO queues are SQS's; the server has them. */
    @Override
    protected boolean fifoQueues() {
        return true;
    }
}
