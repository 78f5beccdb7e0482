package dev.mailbox.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.json.JsonCodec;
import dev.mailbox.mainloop.MainLoopClient;
import dev.mailbox.spring.boot.MailboxListener;
import dev.mailbox.spring.boot.MainLoopHandler;
import dev.mailbox.sqs.SqsMailbox;
import dev.mailbox.testkit.sqs.ElasticMqServer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * A listener on SQS (embedded ElasticMQ): acknowledge on return, nack with backoff, dead letter through the
 * queue's redrive policy, and a shutdown past the grace period that still settles every message.
 */
class ListenerOnSqsTest {

    static ElasticMqServer sqs;

    @BeforeAll
    static void startSqs() {
        sqs = ElasticMqServer.shared();
    }

    /** Fails "bad" orders' first {@code quantity} deliveries. */
    static class Shop {
        final Recorder<Message<Order>> handled = new Recorder<>();
        final Recorder<String> dead = new Recorder<>();
        final AtomicInteger failures = new AtomicInteger();

        @MailboxListener("${test.orders}")
        void on(Message<Order> message) {
            Order order = message.body();
            if (order.id().startsWith("bad") && message.deliveryCount() <= order.quantity()) {
                failures.incrementAndGet();
                throw new IllegalStateException("refused " + order.id() + " on delivery " + message.deliveryCount());
            }
            handled.add(message);
        }

        @MailboxListener("${test.orders}-dlq")
        void dead(Order order) {
            dead.add(order.id());
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class App {
        @Bean
        Shop shop() {
            return new Shop();
        }

        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }

    static String unique(String name) {
        return name + "-" + Long.toHexString(System.nanoTime());
    }

    static String[] sqsProperties() {
        return new String[] {"mailbox.sqs.region=eu-west-1", "mailbox.sqs.endpoint=" + sqs.endpoint(),
                "mailbox.sqs.access-key=x", "mailbox.sqs.secret-key=y", "mailbox.default-backend=sqs"};
    }

    static SqsClient client() {
        return SqsClient.builder().region(Region.EU_WEST_1).endpointOverride(sqs.endpoint())
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("x", "y")))
                .httpClientBuilder(UrlConnectionHttpClient.builder()).build();
    }

    private ApplicationContextRunner runner(String orders) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(MailboxAutoConfiguration.class))
                .withUserConfiguration(App.class)
                .withPropertyValues(sqsProperties())
                .withPropertyValues(
                        "test.orders=" + orders,
                        "mailbox.mailboxes." + orders + ".visibility-timeout=5s",
                        "mailbox.mailboxes." + orders + ".wait-time=1s",
                        "mailbox.mailboxes." + orders + ".listener.concurrency=2",
                        "mailbox.mailboxes." + orders + ".listener.backoff.initial=1s",
                        "mailbox.mailboxes." + orders + ".listener.backoff.max=1s",
                        "mailbox.mailboxes." + orders + ".redrive.max-receive-count=2",
                        "mailbox.mailboxes." + orders + ".redrive.dead-letter=" + orders + "-dlq",
                        "mailbox.mailboxes." + orders + "-dlq.wait-time=1s",
                        "mailbox.listener.shutdown-grace=2s");
    }

    @SuppressWarnings("unchecked")
    private static Mailbox<Order> bean(org.springframework.context.ApplicationContext context, String name) {
        return (Mailbox<Order>) context.getBean(name);
    }

    @Test
    void aMessageIsAcknowledgedWhenTheMethodReturns() {
        String orders = unique("orders");
        runner(orders).run(context -> {
            Shop shop = context.getBean(Shop.class);
            Mailbox<Order> mailbox = bean(context, orders);
            assertThat(mailbox).isInstanceOf(SqsMailbox.class);
            mailbox.send(new Order("o-1", 1));
            mailbox.send(new Order("o-2", 2));
            assertThat(shop.handled.awaitCount(2, Duration.ofSeconds(20))).extracting(Message::body)
                    .containsExactlyInAnyOrder(new Order("o-1", 1), new Order("o-2", 2));
            awaitCount(mailbox, 0);
            assertThat(context.getBean(MeterRegistry.class).counter("mailbox.listener.messages", "mailbox", orders,
                    "outcome", "acknowledged").count()).isEqualTo(2.0);
        });
    }

    @Test
    void aMethodThatThrowsHasItsMessageBackAfterTheBackoffAndThenDeadLettered() {
        String orders = unique("orders");
        runner(orders).run(context -> {
            Shop shop = context.getBean(Shop.class);
            Mailbox<Order> mailbox = bean(context, orders);
            mailbox.send(new Order("bad-once", 1));   // fails delivery 1, succeeds on 2
            mailbox.send(new Order("bad-always", 99)); // fails 2 deliveries, then SQS moves it to the dead letters
            long sent = System.nanoTime();
            assertThat(shop.handled.awaitCount(1, Duration.ofSeconds(20))).singleElement().satisfies(m -> {
                assertThat(m.body().id()).isEqualTo("bad-once");
                assertThat(m.deliveryCount()).isEqualTo(2);
            });
            // back after the 1 s backoff, not after the 5 s visibility timeout
            assertThat(Duration.ofNanos(System.nanoTime() - sent)).isLessThan(Duration.ofSeconds(5));
            assertThat(shop.dead.awaitCount(1, Duration.ofSeconds(20))).containsExactly("bad-always");
            assertThat(shop.failures.get()).isEqualTo(1 + 2);
            assertThat(shop.handled.all()).hasSize(1);
            awaitCount(mailbox, 0);
        });
    }

    /** A method that outlives the grace period, keeps the interrupt it was given, and then ends. */
    static class Stubborn {
        static final Recorder<String> STARTED = new Recorder<>();
        static final Recorder<String> FINISHED = new Recorder<>();

        @MailboxListener(value = "${test.orders}", concurrency = "2")
        void on(Order order) {
            STARTED.add(order.id());
            try {
                new CountDownLatch(1).await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // as a well-behaved method does
            }
            if (order.id().startsWith("give-up")) {
                throw new IllegalStateException("interrupted before " + order.id() + " was done");
            }
            FINISHED.add(order.id()); // done, interrupted or not
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration(MailboxAutoConfiguration.class)
    static class StubbornApp {
        @Bean
        Stubborn stubborn() {
            return new Stubborn();
        }
    }

    @Test
    void aMethodInterruptedAfterTheGracePeriodHasItsMessageSettledAtOnce() throws Exception {
        String orders = unique("stubborn");
        ConfigurableApplicationContext context = new SpringApplicationBuilder(StubbornApp.class)
                .web(WebApplicationType.NONE)
                .properties(sqsProperties())
                .properties("test.orders=" + orders,
                        "mailbox.mailboxes." + orders + ".visibility-timeout=60s",
                        "mailbox.mailboxes." + orders + ".wait-time=1s",
                        "mailbox.listener.shutdown-grace=500ms")
                .run();
        Mailbox<Order> mailbox = bean(context, orders);
        mailbox.send(new Order("finish-1", 1));
        mailbox.send(new Order("give-up-1", 1));
        Stubborn.STARTED.awaitCount(2, Duration.ofSeconds(20));
        SpringApplication.exit(context);

        assertThat(Stubborn.FINISHED.all()).containsExactly("finish-1");
        try (SqsClient client = client();
             SqsMailbox<Order> after = SqsMailbox.builder(orders, JsonCodec.of(Order.class)).client(client).build()) {
            // the finished one was acknowledged and the other returned at once, not left to its 60 s timeout
            List<Message<Order>> left = after.receive(ReceiveOptions.defaults().withMaxMessages(10)
                    .withWaitTime(Duration.ofSeconds(2)));
            assertThat(left).extracting(m -> m.body().id()).containsExactly("give-up-1");
            left.forEach(Message::acknowledge);
            assertThat(after.approximateCount()).isZero();
        }
    }

    /** Answers quotes on SQS. */
    static class Quoting {
        @MainLoopHandler("${test.quotes}")
        Integer quote(Order order) {
            return order.quantity() * 10;
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void aClientsResponseQueueIsDeletedWhenTheContextCloses() {
        String quotes = unique("quotes");
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(MailboxAutoConfiguration.class))
                .withBean(Quoting.class)
                .withPropertyValues(sqsProperties())
                .withPropertyValues("test.quotes=" + quotes, "mailbox.mailboxes." + quotes + ".wait-time=1s")
                .run(context -> {
                    MainLoopClient<Order, Integer> client = (MainLoopClient<Order, Integer>) context.getBean(
                            quotes + "Client");
                    assertThat(client.callAndWait(new Order("q-1", 4), Duration.ofSeconds(20))).isEqualTo(40);
                    try (SqsClient sqs = client()) {
                        assertThat(sqs.listQueues(r -> r.queueNamePrefix(quotes + "-reply")).queueUrls()).hasSize(1);
                    }
                });
        try (SqsClient sqs = client()) {
            // one queue per client and application start: left behind, they would pile up
            assertThat(sqs.listQueues(r -> r.queueNamePrefix(quotes + "-reply")).queueUrls()).isEmpty();
        }
    }

    static void awaitCount(Mailbox<?> mailbox, long count) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (mailbox.approximateCount() != count && System.nanoTime() < until) {
            Thread.sleep(50); // a count in another process: nothing to wait on
        }
        assertThat(mailbox.approximateCount()).isEqualTo(count);
    }
}
