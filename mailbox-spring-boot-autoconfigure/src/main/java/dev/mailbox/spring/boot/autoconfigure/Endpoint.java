package dev.mailbox.spring.boot.autoconfigure;

import dev.mailbox.api.Message;
import dev.mailbox.mainloop.MainLoopRequest;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import org.jspecify.annotations.Nullable;
import org.springframework.core.MethodParameter;
import org.springframework.core.ResolvableType;
import org.springframework.util.ClassUtils;

/**
 * One {@code @MailboxListener} or {@code @MainLoopHandler} method, as found on a bean's class before any
 * bean is made.
 *
 * @param handler      true for a {@code @MainLoopHandler}
 * @param beanName     the bean it is on
 * @param method       the method, as declared on the bean's user class
 * @param mailbox      the mailbox's name, placeholders resolved
 * @param concurrency  the annotation's concurrency, placeholders resolved, or "" for the properties'
 * @param payload      the body type (the request body type for a handler)
 * @param envelope     whether the method takes {@code Message<T>} (or {@code MainLoopRequest<Req>}) rather
 *                     than the body
 * @param response     a handler's response type, else null
 */
record Endpoint(boolean handler, String beanName, Method method, String mailbox, String concurrency,
                ResolvableType payload, boolean envelope, @Nullable ResolvableType response) {

    String describe() {
        return "@" + (handler ? "MainLoopHandler" : "MailboxListener") + " method "
                + method.getDeclaringClass().getName() + "." + method.getName() + " (bean '" + beanName + "')";
    }

    /**
     * @return the annotation's concurrency, or 0 for the properties'
     * @throws IllegalStateException naming the method, if it is not a number from 1 to 1024
     */
    int requireConcurrency() {
        if (concurrency.isEmpty()) {
            return 0;
        }
        try {
            int n = Integer.parseInt(concurrency.trim());
            if (n >= 1 && n <= 1024) {
                return n;
            }
        } catch (NumberFormatException ignored) {
            // refused below
        }
        throw new IllegalStateException(describe() + ": concurrency must be 1 to 1024, was '" + concurrency + "'");
    }

    /**
     * @param beanType the bean definition's type: a generic bean ({@code @Bean Forwarder<Order>}) resolves the
     *                 type variables of its methods' signatures
     */
    static Endpoint of(boolean handler, String beanName, Class<?> userClass, ResolvableType beanType, Method method,
                       String mailbox, String concurrency) {
        String where = "@" + (handler ? "MainLoopHandler" : "MailboxListener") + " method "
                + userClass.getName() + "." + method.getName();
        if (method.getParameterCount() != 1) {
            throw new IllegalStateException(where + " must take exactly one parameter, "
                    + (handler ? "the request body or MainLoopRequest<Req>" : "the body or Message<T>")
                    + "; it takes " + method.getParameterCount());
        }
        if (Modifier.isStatic(method.getModifiers())) {
            throw new IllegalStateException(where + " must not be static");
        }
        ResolvableType owner = beanType.resolve() == userClass && beanType.hasGenerics()
                && !beanType.hasUnresolvableGenerics() ? beanType : ResolvableType.forClass(userClass);
        ResolvableType parameter = ResolvableType.forMethodParameter(new MethodParameter(method, 0), owner);
        Class<?> envelopeClass = handler ? MainLoopRequest.class : Message.class;
        boolean envelope = parameter.resolve() != null && envelopeClass.isAssignableFrom(parameter.resolve());
        ResolvableType payload = envelope ? parameter.as(envelopeClass).getGeneric(0) : parameter;
        requireConcrete(payload, where + (envelope ? ": the type argument of its " + envelopeClass.getSimpleName()
                + " parameter" : ": its parameter"));
        if (payload.resolve().isPrimitive()) {
            payload = ResolvableType.forClass(ClassUtils.resolvePrimitiveIfNecessary(payload.resolve()));
        }
        ResolvableType response = null;
        if (handler) {
            response = ResolvableType.forMethodParameter(new MethodParameter(method, -1), owner);
            Class<?> raw = response.resolve();
            if (raw == null || raw == void.class || raw == Void.class) {
                throw new IllegalStateException(where + " must return its response (it returns nothing)");
            }
            requireConcrete(response, where + ": its return type");
            if (raw.isPrimitive()) {
                response = ResolvableType.forClass(ClassUtils.resolvePrimitiveIfNecessary(raw));
            }
        }
        return new Endpoint(handler, beanName, method, mailbox, concurrency, payload, envelope, response);
    }

    private static void requireConcrete(ResolvableType type, String what) {
        if (type.resolve() == null || type.hasUnresolvableGenerics() || type.resolve() == Object.class) {
            throw new IllegalStateException(what + " must be a concrete type (such as Order or List<Order>), was "
                    + type);
        }
    }
}
