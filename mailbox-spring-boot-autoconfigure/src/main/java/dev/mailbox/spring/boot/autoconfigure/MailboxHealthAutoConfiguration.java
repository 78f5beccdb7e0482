package dev.mailbox.spring.boot.autoconfigure;

import dev.mailbox.api.Mailbox;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Actuator health for the mailboxes: {@code mailbox} is DOWN when a mailbox's backend cannot be reached (each
 * mailbox is asked for its count), with each mailbox's count or error in the details; in the coordinated mode
 * {@code mailboxLease} is DOWN when no coordinator answers, and otherwise says whether this instance holds the
 * lease or stands by (both UP). Off with {@code management.health.mailbox.enabled=false}; a bean of the
 * application named {@code mailboxHealthIndicator} or {@code mailboxLeaseHealthIndicator} replaces the
 * indicator.
 */
@AutoConfiguration(after = MailboxAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean(MailboxAutoConfiguration.class)
@ConditionalOnEnabledHealthIndicator("mailbox")
public class MailboxHealthAutoConfiguration {

    /** Made by Spring. */
    public MailboxHealthAutoConfiguration() {
    }

    @Bean
    @ConditionalOnMissingBean(name = "mailboxHealthIndicator")
    HealthIndicator mailboxHealthIndicator(@Qualifier(MailboxDeclarations.BEAN_NAME) MailboxDeclarations declarations,
                                           ListableBeanFactory beans) {
        return () -> {
            Map<String, Object> details = new LinkedHashMap<>();
            boolean up = true;
            for (MailboxDeclaration d : declarations.mailboxes().values()) {
                Map<String, Object> one = new LinkedHashMap<>();
                one.put("backend", d.backend().name().toLowerCase(java.util.Locale.ROOT));
                try {
                    one.put("messages", ((Mailbox<?>) beans.getBean(d.beanName())).approximateCount());
                } catch (RuntimeException e) {
                    up = false;
                    one.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
                }
                details.put(d.name(), one);
            }
            return (up ? Health.up() : Health.down()).withDetails(details).build();
        };
    }

    @Bean
    @ConditionalOnBean(LeaseGate.class)
    @ConditionalOnMissingBean(name = "mailboxLeaseHealthIndicator")
    HealthIndicator mailboxLeaseHealthIndicator(LeaseGate gate) {
        return () -> {
            Map<String, Object> details = new LinkedHashMap<>(gate.details());
            try {
                details.put("coordinatorLeader", String.valueOf(gate.client().cluster().status().leaderId()));
            } catch (RuntimeException e) {
                details.put("error", "no coordinator answered: " + e.getMessage());
                return Health.down().withDetails(details).build();
            }
            return Health.up().withDetails(details).build();
        };
    }
}
