package dev.mailbox.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Mailbox;
import dev.mailbox.coordination.server.TestingCluster;
import dev.mailbox.spring.boot.MailboxListener;
import dev.mailbox.testkit.redis.RedisServerProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Two instances of one application on one coordinator: only the one holding the lease consumes; when it
 * stops it releases the lease and the other takes over at once, and no message is lost or handled twice.
 */
class CoordinatedTakeoverTest {

    /** Records which instance handled what. */
    static class Worker {
        static final Recorder<String> HANDLED = new Recorder<>();
        String instance = "?";

        @MailboxListener(value = "orders", concurrency = "2")
        void on(Order order) {
            HANDLED.add(instance + ":" + order.id());
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration(MailboxAutoConfiguration.class)
    static class App {
        @Bean
        Worker worker(org.springframework.core.env.Environment env) {
            Worker w = new Worker();
            w.instance = env.getRequiredProperty("instance");
            return w;
        }
    }

    private static ConfigurableApplicationContext start(String instance, RedisServerProcess redis,
                                                        TestingCluster cluster, String prefix) {
        return new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
                .properties("instance=" + instance, "spring.application.name=shop",
                        "mailbox.redis.uri=" + redis.uri(), "mailbox.redis.key-prefix=" + prefix,
                        "mailbox.mailboxes.orders.backend=redis", "mailbox.mailboxes.orders.wait-time=1s",
                        "mailbox.coordination.enabled=true",
                        "mailbox.coordination.endpoints=" + String.join(",", cluster.endpoints()),
                        "mailbox.coordination.runner-id=shop-" + instance,
                        "mailbox.coordination.ttl=3s")
                .run();
    }

    private static String state(ConfigurableApplicationContext context) {
        return String.valueOf(context.getBean(LeaseGate.class).details().get("state"));
    }

    @Test
    void theSecondInstanceTakesOverWhenTheFirstStops() throws Exception {
        String prefix = "c" + System.nanoTime() + ":";
        try (RedisServerProcess redis = RedisServerProcess.start(); TestingCluster cluster = TestingCluster.start(1)) {
            cluster.awaitLeader(Duration.ofSeconds(30));
            ConfigurableApplicationContext a = start("a", redis, cluster, prefix);
            TestingCluster.await(Duration.ofSeconds(30), () -> state(a).equals("HOLDING"), "a holds the lease");
            ConfigurableApplicationContext b = start("b", redis, cluster, prefix);
            try {
                assertThat(state(b)).isEqualTo("WAITING");
                @SuppressWarnings("unchecked")
                Mailbox<Order> orders = (Mailbox<Order>) b.getBean("orders"); // b can send while it stands by
                List<String> first = new ArrayList<>();
                for (int i = 0; i < 20; i++) {
                    orders.send(new Order("first-" + i, 1));
                    first.add("a:first-" + i);
                }
                assertThat(Worker.HANDLED.awaitCount(20, Duration.ofSeconds(20)))
                        .as("only the holder consumes").containsExactlyInAnyOrderElementsOf(first);

                long stopping = System.nanoTime();
                SpringApplication.exit(a);
                // released on close: b acquires well before the 3 s TTL would have run out
                TestingCluster.await(Duration.ofSeconds(10), () -> state(b).equals("HOLDING"), "b takes over");
                assertThat(Duration.ofNanos(System.nanoTime() - stopping)).isLessThan(Duration.ofSeconds(3));

                List<String> second = new ArrayList<>();
                for (int i = 0; i < 20; i++) {
                    orders.send(new Order("second-" + i, 1));
                    second.add("b:second-" + i);
                }
                List<String> all = Worker.HANDLED.awaitCount(40, Duration.ofSeconds(20));
                assertThat(all.subList(20, all.size())).containsExactlyInAnyOrderElementsOf(second);
                assertThat(new HashSet<>(all)).hasSize(40);
                ListenerOnRedisTest.awaitCount(orders, 0); // the last acknowledgements ride on the next receives
                Set<String> leases = new HashSet<>();
                cluster.client().leases().list("").forEach(l -> leases.add(l.mailboxId() + "=" + l.runnerId()));
                assertThat(leases).contains("shop=shop-b");
            } finally {
                SpringApplication.exit(b);
                if (a.isActive()) {
                    SpringApplication.exit(a);
                }
            }
        }
    }
}
