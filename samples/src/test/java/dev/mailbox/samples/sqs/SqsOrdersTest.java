package dev.mailbox.samples.sqs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.api.Limits;
import dev.mailbox.api.Message;
import dev.mailbox.api.MessageTooLargeException;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.samples.Order;
import dev.mailbox.sqs.SqsMailbox;
import dev.mailbox.testkit.sqs.ElasticMqServer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/** The SQS how-to's mailbox against an embedded ElasticMQ. */
class SqsOrdersTest {

    private static ElasticMqServer elasticMq;
    private static SqsClient sqs;

    @BeforeAll
    static void start() {
        elasticMq = ElasticMqServer.start();
        sqs = SqsOrders.localClient(elasticMq.endpoint());
    }

    @AfterAll
    static void stop() {
        sqs.close();
        elasticMq.close();
    }

    @Test
    void anOrderTravelsThroughTheQueueAndIsDeleted() {
        try (SqsMailbox<Order> orders = SqsOrders.orders(sqs)) {
            orders.send(new Order("o-1", "beans", 2));

            List<Message<Order>> got = orders.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(5)));

            assertThat(got).extracting(Message::body).containsExactly(new Order("o-1", "beans", 2));
            assertThat(got.get(0).deliveryCount()).isEqualTo(1);
            got.get(0).acknowledge();
            assertThat(orders.receive()).isEmpty();
        }
    }

    @Test
    void theQueuesAreCreatedWithTheirRedrivePolicy() {
        try (SqsMailbox<Order> orders = SqsOrders.orders(sqs)) {
            String policy = sqs.getQueueAttributes(r -> r.queueUrl(orders.queueUrl())
                    .attributeNames(QueueAttributeName.REDRIVE_POLICY)).attributes().get(QueueAttributeName.REDRIVE_POLICY);
            assertThat(policy).contains("orders-dlq").contains("5");
            assertThat(orders.capabilities().timeGranularity()).isEqualTo(Duration.ofSeconds(1));
        }
    }

    @Test
    void anOversizedOrderIsRefusedWithNothingSent() {
        try (SqsMailbox<Order> orders = SqsOrders.orders(sqs)) {
            Order huge = new Order("o-2", "x".repeat(Limits.DEFAULT_MAX_MESSAGE_BYTES), 1);
            assertThatThrownBy(() -> orders.send(huge)).isInstanceOf(MessageTooLargeException.class);
            assertThat(orders.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(1)))).isEmpty();
        }
    }
}
