package dev.mailbox.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.mainloop.DeadLetter;
import dev.mailbox.mainloop.MainLoopClient;
import dev.mailbox.mainloop.MainLoopRequest;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.spring.boot.MailboxListener;
import dev.mailbox.spring.boot.MainLoopHandler;
import dev.mailbox.sqs.SqsMailbox;
import dev.mailbox.testkit.redis.RedisServerProcess;
import dev.mailbox.testkit.sqs.ElasticMqServer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.ResolvableType;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsAsyncClient;

/** Properties become beans of the right generic type, on the backend each names, with the application's clients. */
class PropertiesToBeansTest {

    static RedisServerProcess redis;

    @BeforeAll
    static void startRedis() {
        redis = RedisServerProcess.start();
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }

    static class Listeners {
        @MailboxListener("orders")
        void on(Order order) {
        }

        @MailboxListener("audit")
        void on(Message<List<Order>> batch) {
        }

        @MainLoopHandler("quotes")
        Integer quote(Order order) {
            return order.quantity() * 10;
        }
    }

    /** Where the beans are injected by generic type, as an application would. */
    static class Consumers {
        @Autowired
        Mailbox<Order> orders;
        @Autowired
        Mailbox<List<Order>> audit;
        @Autowired
        Mailbox<String> notes;
        @Autowired
        MainLoopClient<Order, Integer> quotesClient;
        @Autowired
        @Qualifier("orders-dlq")
        Mailbox<Order> deadOrders;
    }

    @Configuration(proxyBeanMethods = false)
    static class App {
        @Bean
        Listeners listeners() {
            return new Listeners();
        }

        @Bean
        Consumers consumers() {
            return new Consumers();
        }
    }

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(RedisAutoConfiguration.class, MailboxAutoConfiguration.class))
                .withUserConfiguration(App.class)
                .withPropertyValues(
                        // Spring Data Redis's own settings: the mailboxes reuse them
                        "spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + redis.port(),
                        "mailbox.default-backend=redis",
                        "mailbox.mailboxes.orders.redrive.max-receive-count=3",
                        "mailbox.mailboxes.orders.redrive.dead-letter=orders-dlq",
                        "mailbox.mailboxes.audit.backend=memory",
                        "mailbox.mailboxes.notes.type=java.lang.String",
                        "mailbox.mailboxes.notes.codec=utf8",
                        "mailbox.mailboxes.quotes.redrive.dead-letter=quotes-dlq",
                        "mailbox.listener.auto-startup=false");
    }

    @Test
    void everyMailboxIsABeanOfItsGenericTypeOnItsBackend() {
        runner().run(context -> {
            assertThat(context).hasNotFailed();
            Consumers c = context.getBean(Consumers.class);
            assertThat(c.orders).isInstanceOf(RedisMailbox.class).extracting(Mailbox::name).isEqualTo("orders");
            assertThat(c.deadOrders).isInstanceOf(RedisMailbox.class).extracting(Mailbox::name).isEqualTo("orders-dlq");
            assertThat(c.audit).isInstanceOf(InMemoryMailbox.class);
            assertThat(c.notes).isInstanceOf(RedisMailbox.class);
            assertThat(c.quotesClient).isNotNull();
            assertThat(context.getBeanNamesForType(ResolvableType.forClassWithGenerics(Mailbox.class,
                    ResolvableType.forClassWithGenerics(MainLoopRequest.class, Order.class)))).containsExactly("quotes");
            assertThat(context.getBeanNamesForType(ResolvableType.forClassWithGenerics(Mailbox.class,
                    ResolvableType.forClassWithGenerics(DeadLetter.class, Order.class)))).containsExactly("quotes-dlq");

            // the bean really is on that Redis server, with the JSON codec of its type
            c.orders.send(new Order("o-1", 2));
            assertThat(redis.call("LLEN", "mailbox:{orders}:ready")).isEqualTo(1L);
            assertThat(c.orders.receive().get(0).body()).isEqualTo(new Order("o-1", 2));
            c.notes.send("plain text");
            assertThat(redis.call("HVALS", "mailbox:{notes}:body")).isEqualTo(List.of("plain text"));
        });
    }

    @Test
    void aMailboxOnlyAListenerNamesNeedsADefaultBackend() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(MailboxAutoConfiguration.class))
                .withUserConfiguration(App.class)
                .withPropertyValues("mailbox.mailboxes.audit.backend=memory")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasMessageContaining("names mailbox 'orders', which is not declared")
                        .hasMessageContaining("mailbox.mailboxes.orders.backend"));
    }

    @Test
    void typesThatDisagreeStopTheContext() {
        runner().withPropertyValues("mailbox.mailboxes.orders.type=java.lang.String")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasMessageContaining("mailbox.mailboxes.orders.type is java.lang.String")
                        .hasMessageContaining("takes " + Order.class.getName()));
    }

    @Test
    void aTypeCanOnlyComeFromAPropertyOrAMethod() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(MailboxAutoConfiguration.class))
                .withPropertyValues("mailbox.mailboxes.lonely.backend=memory")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasMessageContaining("mailbox 'lonely' has no body type"));
    }

    /** What the application declares its bean as: the listener method is on the class behind it. */
    interface OrderSink {
        void on(Order order);
    }

    static class HiddenListener implements OrderSink {
        @Override
        @MailboxListener("orders")
        public void on(Order order) {
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class HiddenApp {
        @Bean
        OrderSink sink() {
            return new HiddenListener();
        }
    }

    @Test
    void aListenerTheBeanDefinitionHidesStopsTheContextInsteadOfNeverRunning() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(MailboxAutoConfiguration.class))
                .withUserConfiguration(HiddenApp.class)
                .withPropertyValues("mailbox.mailboxes.orders.backend=memory",
                        "mailbox.mailboxes.orders.type=" + Order.class.getName())
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("bean 'sink'")
                        .hasMessageContaining(HiddenListener.class.getName() + ".on")
                        .hasMessageContaining(OrderSink.class.getName()));
    }

    /** A listener whose body type is its bean's type argument. */
    static class Forwarder<T> {
        final Recorder<T> got = new Recorder<>();

        @MailboxListener("forwarded")
        void on(T body) {
            got.add(body);
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class GenericApp {
        @Bean
        Forwarder<Order> forwarder() {
            return new Forwarder<>();
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void aListenersTypeVariableIsResolvedFromItsBeanDefinition() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(MailboxAutoConfiguration.class))
                .withUserConfiguration(GenericApp.class)
                .withPropertyValues("mailbox.mailboxes.forwarded.backend=memory")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBeanNamesForType(ResolvableType.forClassWithGenerics(Mailbox.class,
                            Order.class))).containsExactly("forwarded");
                    ((Mailbox<Order>) context.getBean("forwarded")).send(new Order("f-1", 1));
                    assertThat(((Forwarder<Order>) context.getBean("forwarder")).got
                            .awaitCount(1, Duration.ofSeconds(10))).containsExactly(new Order("f-1", 1));
                });
    }

    @Test
    void fifoMakesFifoMailboxesWithFifoDeadLettersOnEachBackend() {
        runner().withPropertyValues("mailbox.mailboxes.orders.fifo=true",
                        "mailbox.mailboxes.orders.content-based-deduplication=true")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    Mailbox<?> orders = (Mailbox<?>) context.getBean("orders");
                    assertThat(orders.capabilities().fifo()).isTrue();
                    assertThat(orders.capabilities().contentBasedDeduplication()).isTrue();
                    assertThat(((Mailbox<?>) context.getBean("orders-dlq")).capabilities().fifo())
                            .as("the implicit dead-letter mailbox of a FIFO mailbox").isTrue();
                    assertThat(((Mailbox<?>) context.getBean("audit")).capabilities().fifo()).isFalse();
                });
        runner().withPropertyValues("mailbox.mailboxes.audit.fifo=true")
                .run(context -> assertThat(((Mailbox<?>) context.getBean("audit")).capabilities().fifo())
                        .as("in memory").isTrue());
        ElasticMqServer sqs = ElasticMqServer.shared();
        withApplicationsSqsClient(sqs)
                .withPropertyValues("mailbox.mailboxes.shipments.backend=sqs",
                        "mailbox.mailboxes.shipments.type=" + Order.class.getName(),
                        "mailbox.mailboxes.shipments.fifo=true")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    SqsMailbox<?> shipments = (SqsMailbox<?>) context.getBean("shipments");
                    assertThat(shipments.capabilities().fifo()).isTrue();
                    assertThat(shipments.queueUrl()).endsWith("shipments.fifo");
                });
    }

    /** A context whose application has its own SqsAsyncClient bean, for ElasticMQ. */
    private static ApplicationContextRunner withApplicationsSqsClient(ElasticMqServer sqs) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(MailboxAutoConfiguration.class))
                .withBean(SqsAsyncClient.class, () -> SqsAsyncClient.builder().region(Region.EU_WEST_1)
                        .endpointOverride(sqs.endpoint())
                        .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("x", "y")))
                        .build());
    }

    @Test
    void fifoSettingsThatCannotHoldAreRefusedNamingTheMailbox() {
        runner().withPropertyValues("mailbox.mailboxes.orders.content-based-deduplication=true")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("mailbox 'orders': content-based-deduplication is for FIFO"));
        runner().withPropertyValues("mailbox.mailboxes.orders.fifo=true",
                        "mailbox.mailboxes.orders-dlq.type=" + Order.class.getName())
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("dead-letter mailbox 'orders-dlq' of 'orders' must be a FIFO mailbox"));
    }

    @Test
    void sqsMailboxesUseAClientMadeLikeTheApplicationsSqsAsyncClient() {
        ElasticMqServer sqs = ElasticMqServer.shared();
        withApplicationsSqsClient(sqs)
                .withPropertyValues("mailbox.mailboxes.invoices.backend=sqs",
                        "mailbox.mailboxes.invoices.type=" + Order.class.getName(),
                        "mailbox.mailboxes.invoices.visibility-timeout=5s")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    @SuppressWarnings("unchecked")
                    Mailbox<Order> invoices = (Mailbox<Order>) context.getBean("invoices");
                    assertThat(invoices).isInstanceOf(SqsMailbox.class);
                    assertThat(((SqsMailbox<Order>) invoices).queueUrl()).startsWith(sqs.endpoint().toString());
                    invoices.purge();
                    invoices.send(new Order("i-1", 1));
                    assertThat(invoices.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(5))))
                            .extracting(Message::body).containsExactly(new Order("i-1", 1));
                });
    }
}
