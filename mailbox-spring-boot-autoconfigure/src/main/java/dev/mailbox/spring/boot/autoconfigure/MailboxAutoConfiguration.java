package dev.mailbox.spring.boot.autoconfigure;

import dev.mailbox.api.Mailbox;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.CoordinationLimits;
import dev.mailbox.coordination.LeaseHolder;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Mailboxes from {@code mailbox.mailboxes.*} as {@code Mailbox<T>} beans, a {@code MainLoopClient<Req, Res>}
 * bean per request mailbox, and the application's {@code @MailboxListener} and {@code @MainLoopHandler}
 * methods run from when the context has started until it stops; with {@code mailbox.coordination.enabled},
 * only while this instance holds its coordinator lease. See {@link MailboxProperties} for the properties.
 * Off with {@code mailbox.enabled=false}.
 */
@AutoConfiguration
@ConditionalOnProperty(prefix = "mailbox", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(MailboxProperties.class)
public class MailboxAutoConfiguration {

    /** Made by Spring. */
    public MailboxAutoConfiguration() {
    }

    @Bean
    static MailboxBeanRegistrar mailboxBeanRegistrar() {
        return new MailboxBeanRegistrar();
    }

    @Bean
    static EndpointCheck mailboxEndpointCheck() {
        return new EndpointCheck();
    }

    @Bean(name = MailboxFactory.BEAN_NAME)
    MailboxFactory mailboxFactory(@Qualifier(MailboxDeclarations.BEAN_NAME) MailboxDeclarations declarations,
                                  ListableBeanFactory beans, Environment environment) {
        return new MailboxFactory(declarations, beans, environment);
    }

    /** Bound to the application's MeterRegistry by Spring Boot's metrics auto-configuration (Actuator). */
    @Bean
    @ConditionalOnMissingBean(name = "mailboxCountMetrics")
    MailboxCountMetrics mailboxCountMetrics(@Qualifier(MailboxDeclarations.BEAN_NAME) MailboxDeclarations declarations,
                                            ListableBeanFactory beans) {
        List<MailboxCountMetrics.Counted> counted = new ArrayList<>();
        for (MailboxDeclaration d : declarations.mailboxes().values()) {
            counted.add(new MailboxCountMetrics.Counted(d.name(), d.backend().name().toLowerCase(Locale.ROOT),
                    () -> (Mailbox<?>) beans.getBean(d.beanName())));
        }
        return new MailboxCountMetrics(counted, declarations.properties().getMetrics().getCountInterval());
    }

    @Bean
    MailboxRunners mailboxRunners(@Qualifier(MailboxDeclarations.BEAN_NAME) MailboxDeclarations declarations,
                                  ListableBeanFactory beans, MailboxFactory factory,
                                  ObjectProvider<MeterRegistry> registry, ObjectProvider<Gate> leaseGate) {
        MailboxProperties p = declarations.properties();
        Gate gate;
        if (p.getCoordination().isEnabled() && !p.isInMemory()) {
            gate = leaseGate.getIfAvailable();
            if (gate == null) {
                throw new IllegalStateException("mailbox.coordination.enabled needs dev.mailbox:coordination-client"
                        + " on the classpath");
            }
        } else {
            gate = new Gate.Open();
        }
        return new MailboxRunners(declarations, beans, factory,
                () -> registry.getIfUnique(() -> Metrics.globalRegistry), gate);
    }

    /** The coordinated mode, when its client is on the classpath and it is asked for. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "dev.mailbox.coordination.CoordinationClient")
    @ConditionalOnProperty(prefix = "mailbox.coordination", name = "enabled", havingValue = "true")
    static class CoordinationConfiguration {

        @Configuration(proxyBeanMethods = false)
        @ConditionalOnProperty(prefix = "mailbox", name = "in-memory", havingValue = "false", matchIfMissing = true)
        static class Coordinated {

            @Bean(destroyMethod = "close")
            @ConditionalOnMissingBean
            CoordinationClient mailboxCoordinationClient(MailboxProperties properties) {
                if (properties.getCoordination().getEndpoints().isEmpty()) {
                    throw new IllegalStateException("mailbox.coordination.enabled needs mailbox.coordination.endpoints"
                            + " (coordinators' host:port) or a CoordinationClient bean");
                }
                return CoordinationClient.builder().endpoints(properties.getCoordination().getEndpoints()).build();
            }

            @Bean
            LeaseGate mailboxLeaseGate(CoordinationClient client, MailboxProperties properties, Environment env) {
                MailboxProperties.Coordination c = properties.getCoordination();
                String app = env.getProperty("spring.application.name");
                String lease;
                String leaseFrom;
                if (c.getLease() != null) {
                    lease = c.getLease();
                    leaseFrom = "mailbox.coordination.lease";
                } else if (app != null) {
                    // an application name is free text; a lease id is a namespace name
                    lease = asName(app);
                    leaseFrom = "the lease id made from spring.application.name (set mailbox.coordination.lease)";
                } else {
                    throw new IllegalStateException("the coordinated mode needs a lease id: set"
                            + " mailbox.coordination.lease or spring.application.name");
                }
                String bad = CoordinationLimits.mailboxIdProblem(lease);
                if (bad == null) {
                    bad = CoordinationLimits.acquirableProblem(lease);
                }
                if (bad != null) {
                    throw new IllegalStateException(leaseFrom + " cannot be a lease id: " + bad);
                }
                bad = CoordinationLimits.requestedTtlProblem(c.getTtl());
                if (bad != null) {
                    throw new IllegalStateException("mailbox.coordination.ttl: " + bad + " (or 0 for the namespace's)");
                }
                String runner = c.getRunnerId() != null ? c.getRunnerId()
                        : (app != null ? asName(app) : "mailbox") + "-" + UUID.randomUUID().toString().substring(0, 8);
                String node = c.getNodeId() != null ? c.getNodeId() : asName(hostName());
                require(CoordinationLimits.runnerIdProblem(runner), "mailbox.coordination.runner-id");
                require(CoordinationLimits.nodeIdProblem(node), "mailbox.coordination.node-id");
                require(CoordinationLimits.addressProblem(c.getAddress()), "mailbox.coordination.address");
                return new LeaseGate(client, lease, new LeaseHolder(runner, node, c.getAddress()), c.getTtl());
            }

            private static void require(@Nullable String problem, String property) {
                if (problem != null) {
                    throw new IllegalStateException(property + ": " + problem);
                }
            }

            /** Free text as a coordinator name: letters, digits, '.', '_' and '-', starting with a letter or digit. */
            static String asName(String text) {
                String name = text.replaceAll("[^A-Za-z0-9._-]", "-").replaceFirst("^[^A-Za-z0-9]+", "");
                name = name.length() > CoordinationLimits.MAX_NAME_LENGTH
                        ? name.substring(0, CoordinationLimits.MAX_NAME_LENGTH) : name;
                return name.isEmpty() ? "mailbox" : name;
            }

            private static String hostName() {
                try {
                    return InetAddress.getLocalHost().getHostName();
                } catch (UnknownHostException e) {
                    return "localhost";
                }
            }
        }
    }
}
