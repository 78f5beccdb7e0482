package dev.mailbox.spring.boot.test;

import dev.mailbox.api.Mailbox;
import dev.mailbox.testkit.CollectingMailbox;
import java.util.function.Supplier;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.core.ResolvableType;

/**
 * Wraps every mailbox bean the Mailbox auto-configuration defined in a {@link CollectingMailbox} and gives
 * the bean that type, so a test can inject {@code CollectingMailbox<T>}. Imported by
 * {@link AutoConfigureInMemoryMailboxes}.
 */
@AutoConfiguration
public class InMemoryMailboxesAutoConfiguration {

    /** Made by Spring. */
    public InMemoryMailboxesAutoConfiguration() {
    }

    /**
     * @return the post-processor that rewrites the mailbox bean definitions, after the auto-configuration
     *         has made them
     */
    @Bean
    static BeanFactoryPostProcessor collectingMailboxes() {
        return new Wrapper();
    }

    /** Runs after every registry post-processor, so after the mailbox beans are defined. */
    static final class Wrapper implements BeanFactoryPostProcessor, Ordered {

        @Override
        public int getOrder() {
            return Ordered.LOWEST_PRECEDENCE;
        }

        @Override
        public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) throws BeansException {
            for (String name : beanFactory.getBeanDefinitionNames()) {
                BeanDefinition bd = beanFactory.getBeanDefinition(name);
                if (!(bd instanceof RootBeanDefinition definition) || definition.getInstanceSupplier() == null) {
                    continue;
                }
                ResolvableType type = definition.getResolvableType();
                if (type.resolve() != Mailbox.class || type.hasUnresolvableGenerics()) {
                    continue;
                }
                Supplier<?> made = definition.getInstanceSupplier();
                definition.setTargetType(ResolvableType.forClassWithGenerics(CollectingMailbox.class, type.getGeneric(0)));
                definition.setInstanceSupplier(() -> CollectingMailbox.wrapping((Mailbox<?>) made.get()));
            }
        }
    }
}
