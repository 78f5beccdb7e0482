package dev.mailbox.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Mailbox;
import dev.mailbox.mainloop.MainLoopClient;
import dev.mailbox.spring.boot.MailboxListener;
import dev.mailbox.spring.boot.MainLoopHandler;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * A listener that calls a handler of the same application (the example's fulfilment asking pricing) can finish
 * the message it holds when the context closes: the handlers answer until the listeners have stopped.
 */
class ShutdownOrderTest {

    static class Shop {
        final CountDownLatch holding = new CountDownLatch(1);
        final CountDownLatch go = new CountDownLatch(1);
        final Recorder<String> priced = new Recorder<>();
        private final MainLoopClient<Order, Integer> pricing;

        Shop(MainLoopClient<Order, Integer> pricing) {
            this.pricing = pricing;
        }

        @MailboxListener("orders")
        void fulfil(Order order) throws InterruptedException {
            holding.countDown();
            go.await(20, TimeUnit.SECONDS);
            priced.add(order.id() + "=" + pricing.callAndWait(order, Duration.ofSeconds(10)));
        }

        @MainLoopHandler("pricing")
        Integer price(Order order) {
            return order.quantity() * 100;
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration(MailboxAutoConfiguration.class)
    static class App {
        @Bean
        Shop shop(MainLoopClient<Order, Integer> pricingClient) {
            return new Shop(pricingClient);
        }
    }

    @Test
    void handlersAnswerUntilTheListenersHaveStopped() throws Exception {
        ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
                .properties("mailbox.default-backend=memory", "mailbox.mailboxes.orders.wait-time=1s",
                        "mailbox.mailboxes.pricing.wait-time=1s", "mailbox.listener.shutdown-grace=5s")
                .run();
        Shop shop = context.getBean(Shop.class);
        @SuppressWarnings("unchecked")
        Mailbox<Order> orders = (Mailbox<Order>) context.getBean("orders");
        orders.send(new Order("o-1", 3));
        assertThat(shop.holding.await(10, TimeUnit.SECONDS)).isTrue();
        HandlerContainer pricing = (HandlerContainer) context.getBean(MailboxRunners.class).runners().stream()
                .filter(r -> r instanceof HandlerContainer).findFirst().orElseThrow();

        Thread closing = new Thread(() -> SpringApplication.exit(context), "closing");
        long start = System.nanoTime();
        closing.start();
        // the listener asks only once closing is under way: by then a handler stopped with it no longer receives
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        while (pricing.isRunning() && System.nanoTime() < until) {
            Thread.sleep(10);
        }
        shop.go.countDown();
        closing.join(30_000);

        assertThat(shop.priced.all()).as("the order held at shutdown was finished").containsExactly("o-1=300");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    }
}
