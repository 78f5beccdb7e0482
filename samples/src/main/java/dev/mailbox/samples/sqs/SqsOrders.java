package dev.mailbox.samples.sqs;

import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.json.JsonCodec;
import dev.mailbox.samples.Order;
import dev.mailbox.sqs.SqsMailbox;
import java.net.URI;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/** The orders mailbox on Amazon SQS, or on anything that speaks its API (ElasticMQ, LocalStack, a mailbox node). */
public final class SqsOrders {

    private SqsOrders() {
    }

    /** @return a client of an SQS-compatible server on this machine, such as ElasticMQ (any key is accepted) */
    public static SqsClient localClient(URI endpoint) {
        return SqsClient.builder()
                .endpointOverride(endpoint)
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local")))
                .build();
    }

    /**
     * @param sqs one client for every mailbox of the application (the mailboxes never close it)
     * @return the {@code orders} mailbox, with {@code orders-dlq} as its dead-letter queue; both queues are
     *         created if missing
     */
    public static SqsMailbox<Order> orders(SqsClient sqs) {
        SqsMailbox<Order> deadLetters = SqsMailbox.builder("orders-dlq", JsonCodec.of(Order.class))
                .client(sqs)
                .createIfMissing(true)
                .queueAttribute(QueueAttributeName.MESSAGE_RETENTION_PERIOD, "1209600") // 14 days, SQS's longest
                .build();
        return SqsMailbox.builder("orders", JsonCodec.of(Order.class))
                .client(sqs)
                .createIfMissing(true)
                .redrivePolicy(RedrivePolicy.of(5, deadLetters)) // set as the queue's own RedrivePolicy
                .build();
    }
}
