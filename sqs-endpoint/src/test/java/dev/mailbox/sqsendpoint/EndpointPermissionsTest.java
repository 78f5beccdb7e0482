package dev.mailbox.sqsendpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.SqsException;

/**
 * AddPermission and RemovePermission enforced: the authorizer lets the owner (alice) do everything and bob nothing;
 * a permission in the queue's Policy lets bob do exactly what it names on that queue, until it is removed.
 */
@DisplayName("Queue permissions, enforced")
class EndpointPermissionsTest {

    private static SqsEndpoint endpoint;
    private static SqsClient alice;
    private static SqsClient bob;

    @BeforeAll
    static void start() {
        endpoint = SqsEndpoint.builder().queues(TestEndpoints.inMemoryDirectory())
                .credentials(AccessKeyStore.of(new AccessKey("AKIDALICE", "alice-secret", "alice"),
                        new AccessKey("AKIDBOB", "bob-secret", "bob")))
                .authorizer((principal, action, queue) -> principal.equals("alice"))
                .start();
        alice = TestEndpoints.client(endpoint.url(), "AKIDALICE", "alice-secret");
        bob = TestEndpoints.client(endpoint.url(), "AKIDBOB", "bob-secret");
    }

    @AfterAll
    static void stop() {
        alice.close();
        bob.close();
        endpoint.close();
    }

    private static String code(Runnable call) {
        try {
            call.run();
        } catch (SqsException e) {
            return e.awsErrorDetails().errorCode();
        }
        return "none";
    }

    @Test
    @DisplayName("a permission lets its principal make the calls it names (batches with them) on its queue only,"
            + " and nothing once removed; SenderId is the sender's principal")
    void grantedAndRevoked() {
        String url = alice.createQueue(r -> r.queueName("shared-orders")).queueUrl();
        String other = alice.createQueue(r -> r.queueName("private-orders")).queueUrl();
        assertThat(code(() -> bob.sendMessage(r -> r.queueUrl(url).messageBody("x")))).isEqualTo("AccessDenied");

        alice.addPermission(r -> r.queueUrl(url).label("BobSends").awsAccountIds("bob").actions("SendMessage"));
        bob.sendMessage(r -> r.queueUrl(url).messageBody("from bob"));
        bob.sendMessageBatch(r -> r.queueUrl(url).entries(SendMessageBatchRequestEntry.builder().id("a")
                .messageBody("batch from bob").build()));
        assertThat(code(() -> bob.receiveMessage(r -> r.queueUrl(url)))).as("not granted").isEqualTo("AccessDenied");
        assertThat(code(() -> bob.sendMessage(r -> r.queueUrl(other).messageBody("x")))).as("another queue")
                .isEqualTo("AccessDenied");
        assertThat(code(() -> bob.addPermission(r -> r.queueUrl(url).label("BobAll").awsAccountIds("bob")
                .actions("*")))).as("only the owner grants").isEqualTo("AccessDenied");

        var got = alice.receiveMessage(r -> r.queueUrl(url).maxNumberOfMessages(10).waitTimeSeconds(1)
                .messageSystemAttributeNamesWithStrings("SenderId")).messages();
        assertThat(got).hasSize(2).allSatisfy(m -> assertThat(m.attributesAsStrings()).containsEntry("SenderId", "bob"));

        alice.removePermission(r -> r.queueUrl(url).label("BobSends"));
        assertThat(code(() -> bob.sendMessage(r -> r.queueUrl(url).messageBody("x")))).isEqualTo("AccessDenied");
        assertThatThrownBy(() -> alice.removePermission(r -> r.queueUrl(url).label("BobSends")))
                .isInstanceOf(SqsException.class).hasMessageContaining("Label");
    }

    @Test
    @DisplayName("a Policy set as an attribute grants the same way: an Allow to the principal for sqs:* on the queue")
    void policyAttribute() {
        String url = alice.createQueue(r -> r.queueName("policy-orders")).queueUrl();
        String arn = alice.getQueueAttributes(r -> r.queueUrl(url).attributeNamesWithStrings("QueueArn"))
                .attributesAsStrings().get("QueueArn");
        alice.setQueueAttributes(r -> r.queueUrl(url).attributesWithStrings(java.util.Map.of("Policy",
                "{\"Version\":\"2012-10-17\",\"Statement\":[{\"Effect\":\"Allow\",\"Principal\":{\"AWS\":[\"bob\"]},"
                        + "\"Action\":\"sqs:*\",\"Resource\":\"" + arn + "\"}]}")));
        bob.sendMessage(r -> r.queueUrl(url).messageBody("x"));
        assertThat(bob.receiveMessage(r -> r.queueUrl(url).waitTimeSeconds(1)).messages()).hasSize(1);
        assertThat(code(() -> bob.deleteQueue(r -> r.queueUrl(url)))).as("not a grantable action")
                .isEqualTo("AccessDenied");
    }
}
