package dev.mailbox.spring.boot.autoconfigure;

import dev.mailbox.spring.boot.MailboxListener;
import dev.mailbox.spring.boot.MainLoopHandler;
import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;

/**
 * Stops the context when a bean turns out to have a {@code @MailboxListener} or {@code @MainLoopHandler} method
 * that {@link MailboxBeanRegistrar} did not see: it reads the methods from each bean definition's type before any
 * bean is made (the mailboxes' types come from them), so a bean declared as an interface or a superclass
 * ({@code @Bean OrderSink sink()}) hides its class's methods, which would then never run.
 */
final class EndpointCheck implements BeanPostProcessor, BeanFactoryAware {

    private @Nullable BeanFactory beanFactory;
    private @Nullable Set<String> seen; // "bean name#method", made on first use
    private final Set<Class<?>> plain = ConcurrentHashMap.newKeySet();

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        this.beanFactory = beanFactory;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
        Class<?> type = AopProxyUtils.ultimateTargetClass(bean);
        if (plain.contains(type)) {
            return bean;
        }
        if (!AnnotationUtils.isCandidateClass(type, List.of(MailboxListener.class, MainLoopHandler.class))) {
            plain.add(type);
            return bean;
        }
        Map<Method, Annotation> annotated = MethodIntrospector.selectMethods(type,
                (MethodIntrospector.MetadataLookup<Annotation>) m -> {
                    Annotation a = AnnotatedElementUtils.findMergedAnnotation(m, MailboxListener.class);
                    return a != null ? a : AnnotatedElementUtils.findMergedAnnotation(m, MainLoopHandler.class);
                });
        if (annotated.isEmpty()) {
            plain.add(type);
            return bean;
        }
        Set<String> known = seen();
        for (Method m : annotated.keySet()) {
            if (!known.contains(beanName + "#" + m)) {
                throw new IllegalStateException("bean '" + beanName + "' has the @"
                        + annotated.get(m).annotationType().getSimpleName() + " method "
                        + type.getName() + "." + m.getName() + ", which its bean definition does not show (its type is "
                        + declaredType(beanName) + "), so the method was not found when the mailboxes were declared:"
                        + " declare the bean with its class (for a @Bean method, as its return type)");
            }
        }
        return bean;
    }

    private synchronized Set<String> seen() {
        if (seen == null) {
            Set<String> s = new HashSet<>();
            BeanFactory f = java.util.Objects.requireNonNull(beanFactory, "beanFactory");
            if (f.containsBean(MailboxDeclarations.BEAN_NAME)) {
                for (Endpoint e : f.getBean(MailboxDeclarations.BEAN_NAME, MailboxDeclarations.class).endpoints()) {
                    s.add(e.beanName() + "#" + e.method());
                }
            }
            seen = s;
        }
        return seen;
    }

    private String declaredType(String beanName) {
        BeanFactory f = java.util.Objects.requireNonNull(beanFactory, "beanFactory");
        if (f instanceof org.springframework.beans.factory.config.ConfigurableListableBeanFactory c
                && c.containsBeanDefinition(beanName)) {
            var t = c.getMergedBeanDefinition(beanName).getResolvableType();
            if (t.resolve() != null) {
                return t.toString();
            }
        }
        return "unknown";
    }
}
