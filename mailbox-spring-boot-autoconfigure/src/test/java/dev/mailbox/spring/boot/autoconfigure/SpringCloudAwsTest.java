package dev.mailbox.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.spring.boot.MailboxListener;
import dev.mailbox.sqs.SqsMailbox;
import dev.mailbox.testkit.sqs.ElasticMqServer;
import io.awspring.cloud.autoconfigure.core.AwsAutoConfiguration;
import io.awspring.cloud.autoconfigure.core.CredentialsProviderAutoConfiguration;
import io.awspring.cloud.autoconfigure.core.RegionProviderAutoConfiguration;
import io.awspring.cloud.autoconfigure.sqs.SqsAutoConfiguration;
import io.awspring.cloud.sqs.operations.SqsTemplate;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.jackson.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import software.amazon.awssdk.services.sqs.SqsAsyncClient;

/**
 * An application on Spring Cloud AWS: the mailboxes use a client made like the SqsAsyncClient bean its
 * auto-configuration makes (region, endpoint, credentials from {@code spring.cloud.aws.*}), and messages pass
 * both ways between its SqsTemplate and the mailboxes. (Spring Cloud AWS 3.4 on the project's AWS SDK 2.29.)
 */
class SpringCloudAwsTest {

    static class Billing {
        final Recorder<Message<Order>> got = new Recorder<>();

        @MailboxListener("${test.invoices}")
        void on(Message<Order> invoice) {
            got.add(invoice);
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void theMailboxesUseSpringCloudAwsSettingsAndTalkToItsTemplate() {
        ElasticMqServer sqs = ElasticMqServer.shared();
        String invoices = ListenerOnSqsTest.unique("invoices");
        String receipts = ListenerOnSqsTest.unique("receipts");
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(AwsAutoConfiguration.class,
                        CredentialsProviderAutoConfiguration.class, RegionProviderAutoConfiguration.class,
                        JacksonAutoConfiguration.class, SqsAutoConfiguration.class, MailboxAutoConfiguration.class))
                .withBean(Billing.class)
                .withPropertyValues("spring.cloud.aws.sqs.endpoint=" + sqs.endpoint(),
                        "spring.cloud.aws.region.static=eu-west-1",
                        "spring.cloud.aws.credentials.access-key=x", "spring.cloud.aws.credentials.secret-key=y",
                        "test.invoices=" + invoices,
                        "mailbox.default-backend=sqs",
                        "mailbox.mailboxes." + invoices + ".wait-time=1s",
                        "mailbox.mailboxes." + receipts + ".type=" + Order.class.getName())
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context).hasSingleBean(SqsAsyncClient.class);
                    Mailbox<Order> receiptsMailbox = (Mailbox<Order>) context.getBean(receipts);
                    assertThat(receiptsMailbox).isInstanceOf(SqsMailbox.class);
                    assertThat(((SqsMailbox<Order>) receiptsMailbox).queueUrl()).startsWith(sqs.endpoint().toString());
                    SqsTemplate template = context.getBean(SqsTemplate.class);

                    // Spring Cloud AWS sends, a @MailboxListener receives
                    template.send(invoices, new Order("i-1", 2));
                    assertThat(context.getBean(Billing.class).got.awaitCount(1, Duration.ofSeconds(20)))
                            .extracting(Message::body).containsExactly(new Order("i-1", 2));
                    ListenerOnSqsTest.awaitCount((Mailbox<Order>) context.getBean(invoices), 0);

                    // a mailbox sends, Spring Cloud AWS receives
                    receiptsMailbox.send(new Order("r-1", 3));
                    Optional<org.springframework.messaging.Message<Order>> received = template.receive(from -> from
                            .queue(receipts).pollTimeout(Duration.ofSeconds(5)), Order.class);
                    assertThat(received).map(org.springframework.messaging.Message::getPayload)
                            .contains(new Order("r-1", 3));
                });
    }
}
