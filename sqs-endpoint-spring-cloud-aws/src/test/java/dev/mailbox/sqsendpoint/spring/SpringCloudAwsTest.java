package dev.mailbox.sqsendpoint.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Limits;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.sqsendpoint.QueueDirectory;
import dev.mailbox.sqsendpoint.SqsEndpoint;
import io.awspring.cloud.sqs.annotation.SqsListener;
import io.awspring.cloud.sqs.listener.SqsHeaders;
import io.awspring.cloud.sqs.operations.SqsTemplate;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.messaging.Message;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/**
 * Spring Cloud AWS (3.4, on AWS SDK 2.31) against the SQS endpoint over in-memory mailboxes: SqsTemplate sends to
 * and receives from a standard queue, and an {@code @SqsListener} receives a FIFO queue's messages in order within
 * each message group, as Spring Cloud AWS's FIFO containers promise on SQS.
 */
@SpringBootTest(classes = SpringCloudAwsTest.App.class)
@DirtiesContext
@DisplayName("Spring Cloud AWS against the SQS endpoint")
class SpringCloudAwsTest {

    static final String STANDARD = "spring-orders";
    static final String PULLED = "spring-pulled";
    static final String FIFO = "spring-events.fifo";
    static final int PER_GROUP = 10;

    private static SqsEndpoint endpoint;

    @DynamicPropertySource
    static void endpoint(DynamicPropertyRegistry registry) {
        endpoint = SqsEndpoint.builder().queues(QueueDirectory.inMemory((name, fifo) -> {
            InMemoryMailbox.Builder<byte[]> b = InMemoryMailbox.builder(name, Codec.bytes())
                    .maxMessageBytes(Limits.MAX_MESSAGE_BYTES);
            if (fifo != null) {
                b.fifo(fifo);
            }
            return b.build();
        })).authenticationOff().start();
        try (SqsClient sqs = SqsClient.builder().endpointOverride(endpoint.url()).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("spring", "x")))
                .httpClientBuilder(UrlConnectionHttpClient.builder()).build()) {
            sqs.createQueue(r -> r.queueName(STANDARD));
            sqs.createQueue(r -> r.queueName(PULLED));
            sqs.createQueue(r -> r.queueName(FIFO).attributes(Map.of(QueueAttributeName.FIFO_QUEUE, "true")));
        }
        registry.add("spring.cloud.aws.sqs.endpoint", () -> endpoint.url().toString());
        registry.add("spring.cloud.aws.region.static", () -> "us-east-1");
        registry.add("spring.cloud.aws.credentials.access-key", () -> "spring");
        registry.add("spring.cloud.aws.credentials.secret-key", () -> "x");
        // short polls, so that the containers stop in a second when the context closes
        registry.add("spring.cloud.aws.sqs.listener.poll-timeout", () -> "1s");
    }

    @Configuration
    @EnableAutoConfiguration
    static class App {
        @Bean
        Listeners listeners() {
            return new Listeners();
        }

        /** The endpoint, closed with the context: after the listener containers have stopped polling it. */
        @Bean(destroyMethod = "close")
        SqsEndpoint sqsEndpoint() {
            return endpoint;
        }
    }

    /** What the listeners received. */
    static class Listeners {
        final List<String> standard = new CopyOnWriteArrayList<>();
        final CountDownLatch standardLatch = new CountDownLatch(3);
        final Map<String, List<String>> byGroup = new ConcurrentHashMap<>();
        final CountDownLatch fifoLatch = new CountDownLatch(2 * PER_GROUP);

        @SqsListener(STANDARD)
        void onStandard(String body) {
            standard.add(body);
            standardLatch.countDown();
        }

        @SqsListener(FIFO)
        void onFifo(String body, @Header(SqsHeaders.MessageSystemAttributes.SQS_MESSAGE_GROUP_ID_HEADER) String group) {
            byGroup.computeIfAbsent(group, g -> new CopyOnWriteArrayList<>()).add(body);
            fifoLatch.countDown();
        }
    }

    @Autowired
    SqsTemplate template;

    @Autowired
    Listeners listeners;

    @Test
    @DisplayName("SqsTemplate sends to a standard queue that an @SqsListener consumes, and receives from another")
    void standardQueue() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            template.send(STANDARD, "order-" + i);
        }
        assertThat(listeners.standardLatch.await(30, TimeUnit.SECONDS)).as("received: %s", listeners.standard).isTrue();
        assertThat(listeners.standard).containsExactlyInAnyOrder("order-0", "order-1", "order-2");

        template.send(to -> to.queue(PULLED).payload("pulled").header("tenant", "acme"));
        Optional<Message<String>> got = template.receive(from -> from.queue(PULLED).pollTimeout(Duration.ofSeconds(5)),
                String.class);
        assertThat(got).isPresent();
        assertThat(got.get().getPayload()).isEqualTo("pulled");
        assertThat(got.get().getHeaders().get("tenant")).isEqualTo("acme");
    }

    @Test
    @DisplayName("an @SqsListener receives a FIFO queue's messages in send order within each group")
    void fifoInOrder() throws InterruptedException {
        List<String> sent = new ArrayList<>();
        for (int i = 0; i < PER_GROUP; i++) {
            for (String group : List.of("g1", "g2")) {
                String body = group + "-" + i;
                template.send(to -> to.queue(FIFO).payload(body).messageGroupId(group).messageDeduplicationId(body));
                sent.add(body);
            }
        }
        assertThat(listeners.fifoLatch.await(60, TimeUnit.SECONDS)).as("received: %s", listeners.byGroup).isTrue();
        for (String group : List.of("g1", "g2")) {
            assertThat(listeners.byGroup.get(group)).as(group)
                    .containsExactlyElementsOf(sent.stream().filter(b -> b.startsWith(group)).toList());
        }
    }
}
