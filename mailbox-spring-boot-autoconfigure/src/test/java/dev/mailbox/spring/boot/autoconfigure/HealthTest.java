package dev.mailbox.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.spring.boot.MailboxListener;
import dev.mailbox.testkit.redis.RedisServerProcess;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.health.HealthContributorAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.health.HealthEndpointAutoConfiguration;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthEndpoint;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The mailbox health indicator follows the backend: DOWN while Redis is stopped, UP again when it is back. */
class HealthTest {

    static class Listener {
        @MailboxListener("orders")
        void on(Order order) {
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class App {
        @Bean
        Listener listener() {
            return new Listener();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnHealth {
        @Bean
        HealthIndicator mailboxHealthIndicator() {
            return () -> Health.up().withDetail("own", true).build();
        }
    }

    @Test
    void anApplicationsOwnIndicatorReplacesTheMailboxOne() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(MailboxAutoConfiguration.class,
                        MailboxHealthAutoConfiguration.class, HealthContributorAutoConfiguration.class,
                        HealthEndpointAutoConfiguration.class))
                .withUserConfiguration(App.class, OwnHealth.class)
                .withPropertyValues("mailbox.mailboxes.orders.backend=memory", "management.endpoint.health.show-details=always")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    HealthEndpoint health = context.getBean(HealthEndpoint.class);
                    assertThat(((Health) health.healthForPath("mailbox")).getDetails()).containsEntry("own", true);
                });
    }

    @Test
    void healthIsDownWhileRedisIsStopped() {
        try (RedisServerProcess redis = RedisServerProcess.start()) {
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(MailboxAutoConfiguration.class,
                            MailboxHealthAutoConfiguration.class, HealthContributorAutoConfiguration.class,
                            HealthEndpointAutoConfiguration.class))
                    .withUserConfiguration(App.class)
                    .withPropertyValues("mailbox.redis.uri=" + redis.uri(), "mailbox.mailboxes.orders.backend=redis",
                            "mailbox.mailboxes.orders.wait-time=1s", "management.endpoint.health.show-details=always")
                    .run(context -> {
                        HealthEndpoint health = context.getBean(HealthEndpoint.class);
                        assertThat(health.healthForPath("mailbox").getStatus()).isEqualTo(Status.UP);

                        redis.kill();
                        assertThat(health.healthForPath("mailbox").getStatus()).isEqualTo(Status.DOWN);
                        assertThat(health.health().getStatus()).isEqualTo(Status.DOWN);

                        redis.restart();
                        assertThat(health.healthForPath("mailbox").getStatus()).isEqualTo(Status.UP);
                    });
        }
    }
}
