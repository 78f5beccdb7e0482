package dev.mailbox.spring.boot.autoconfigure;

import dev.mailbox.api.Limits;
import dev.mailbox.api.Mailbox;
import dev.mailbox.mainloop.MainLoopClient;
import dev.mailbox.spring.boot.MailboxListener;
import dev.mailbox.spring.boot.MainLoopHandler;
import dev.mailbox.spring.boot.autoconfigure.MailboxDeclaration.Kind;
import dev.mailbox.spring.boot.autoconfigure.MailboxProperties.Backend;
import dev.mailbox.spring.boot.autoconfigure.MailboxProperties.MailboxSpec;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.BeanDefinitionRegistryPostProcessor;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.EnvironmentAware;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.Ordered;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Turns the {@code mailbox.*} properties and the context's {@code @MailboxListener} and
 * {@code @MainLoopHandler} methods into bean definitions: one {@code Mailbox<T>} per mailbox, with its
 * generic type, so that {@code @Autowired Mailbox<Order>} finds it, and one {@code MainLoopClient<Req, Res>}
 * per request mailbox.
 *
 * <p>It runs after the configuration classes have been read (in {@code postProcessBeanFactory}), so it sees
 * every bean definition, and looks at their types without making any bean. Every inconsistency (a mailbox
 * without a backend or a type, two methods that disagree on a type, a dead-letter mailbox on another
 * backend) stops the context with a message naming the property or the method.
 */
final class MailboxBeanRegistrar implements BeanDefinitionRegistryPostProcessor, EnvironmentAware, Ordered {

    /** Before other post-processors that look at bean types, such as the test support's. */
    static final int ORDER = Ordered.LOWEST_PRECEDENCE - 100;

    private @Nullable Environment environment;

    @Override
    public void setEnvironment(Environment environment) {
        this.environment = environment;
    }

    @Override
    public int getOrder() {
        return ORDER;
    }

    @Override
    public void postProcessBeanDefinitionRegistry(BeanDefinitionRegistry registry) {
        // everything happens in postProcessBeanFactory, once every configuration class has been read
    }

    @Override
    public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) throws BeansException {
        Environment env = Objects.requireNonNull(environment, "environment");
        MailboxProperties properties = Binder.get(env).bind("mailbox", MailboxProperties.class)
                .orElseGet(MailboxProperties::new);
        MailboxDeclarations declarations = properties.isEnabled()
                ? declare(properties, endpoints(beanFactory, env), beanFactory::containsBeanDefinition)
                : new MailboxDeclarations(Map.of(), List.of(), properties);
        beanFactory.registerSingleton(MailboxDeclarations.BEAN_NAME, declarations);
        BeanDefinitionRegistry registry = (BeanDefinitionRegistry) beanFactory;
        Set<String> deadLetters = new java.util.HashSet<>();
        declarations.mailboxes().values().forEach(d -> {
            if (d.deadLetter() != null) {
                deadLetters.add(d.deadLetter());
            }
        });
        for (MailboxDeclaration d : declarations.mailboxes().values()) {
            RootBeanDefinition definition = register(registry, d.beanName(), d.beanType(), Mailbox.class,
                    () -> beanFactory.getBean(MailboxFactory.BEAN_NAME, MailboxFactory.class).declared(d.name()),
                    false, "mailbox '" + d.name() + "'");
            // a dead-letter mailbox has its source's type: only a qualifier (its name) injects it, so that
            // Mailbox<Order> alone finds the source
            definition.setDefaultCandidate(!deadLetters.contains(d.name()));
            if (d.kind() == Kind.REQUESTS) {
                register(registry, d.clientBeanName(), d.clientType(), MainLoopClient.class,
                        () -> beanFactory.getBean(MailboxFactory.BEAN_NAME, MailboxFactory.class).client(d.name()),
                        true, "the MainLoopClient of mailbox '" + d.name() + "'");
            }
        }
    }

    private static RootBeanDefinition register(BeanDefinitionRegistry registry, String beanName, ResolvableType type,
                                               Class<?> raw,
                                 java.util.function.Supplier<?> supplier, boolean lazy, String what) {
        if (registry.isBeanNameInUse(beanName)) {
            throw new IllegalStateException("cannot define " + what + " as bean '" + beanName
                    + "': the context has a bean of that name already; set mailbox.mailboxes.<name>.bean-name");
        }
        RootBeanDefinition definition = new RootBeanDefinition(raw);
        definition.setTargetType(type);
        definition.setInstanceSupplier(supplier);
        definition.setLazyInit(lazy);
        // the factory owns (and closes) what it makes; the beans only hand it out
        definition.setDependsOn(MailboxFactory.BEAN_NAME);
        if (lazy) {
            definition.setDestroyMethodName("close");
        }
        registry.registerBeanDefinition(beanName, definition);
        return definition;
    }

    // --- the methods -----------------------------------------------------------------------------

    static List<Endpoint> endpoints(ConfigurableListableBeanFactory beanFactory, Environment env) {
        List<Endpoint> found = new ArrayList<>();
        for (String name : beanFactory.getBeanDefinitionNames()) {
            BeanDefinition definition = beanFactory.getMergedBeanDefinition(name);
            if (definition.isAbstract()) {
                continue;
            }
            Class<?> type;
            try {
                type = beanFactory.getType(name, false);
            } catch (RuntimeException | LinkageError e) {
                continue; // a bean whose type cannot be told without making it cannot carry our annotations
            }
            if (type == null) {
                continue;
            }
            Class<?> userClass = ClassUtils.getUserClass(type);
            if (!AnnotationUtils.isCandidateClass(userClass, List.of(MailboxListener.class, MainLoopHandler.class))) {
                continue;
            }
            Map<Method, MailboxListener> listeners = MethodIntrospector.selectMethods(userClass,
                    (MethodIntrospector.MetadataLookup<MailboxListener>) m ->
                            AnnotatedElementUtils.findMergedAnnotation(m, MailboxListener.class));
            Map<Method, MainLoopHandler> handlers = MethodIntrospector.selectMethods(userClass,
                    (MethodIntrospector.MetadataLookup<MainLoopHandler>) m ->
                            AnnotatedElementUtils.findMergedAnnotation(m, MainLoopHandler.class));
            if ((!listeners.isEmpty() || !handlers.isEmpty()) && !definition.isSingleton()) {
                throw new IllegalStateException("bean '" + name + "' has @MailboxListener or @MainLoopHandler methods"
                        + " and must be a singleton; it is " + definition.getScope());
            }
            ResolvableType beanType = definition.getResolvableType();
            listeners.forEach((m, a) -> found.add(Endpoint.of(false, name, userClass, beanType, m,
                    env.resolveRequiredPlaceholders(a.value()), env.resolveRequiredPlaceholders(a.concurrency()))));
            handlers.forEach((m, a) -> found.add(Endpoint.of(true, name, userClass, beanType, m,
                    env.resolveRequiredPlaceholders(a.value()), env.resolveRequiredPlaceholders(a.concurrency()))));
        }
        return found;
    }

    // --- the mailboxes ---------------------------------------------------------------------------

    /** A mailbox while its declaration is worked out. */
    private static final class Draft {
        final String name;
        final MailboxSpec spec;
        final boolean declared;
        @Nullable ResolvableType body;
        @Nullable String bodyFrom;
        @Nullable ResolvableType response;
        @Nullable String responseFrom;
        Kind kind = Kind.PLAIN;
        @Nullable String kindFrom;
        @Nullable Backend backend;

        Draft(String name, MailboxSpec spec, boolean declared) {
            this.name = name;
            this.spec = spec;
            this.declared = declared;
        }
    }

    static MailboxDeclarations declare(MailboxProperties properties, List<Endpoint> endpoints,
                                       java.util.function.Predicate<String> taken) {
        checkGlobal(properties);
        Map<String, Draft> drafts = new LinkedHashMap<>();
        properties.getMailboxes().forEach((name, spec) -> drafts.put(name, new Draft(name, spec, true)));
        for (Endpoint e : endpoints) {
            e.requireConcurrency();
            Draft d = drafts.get(e.mailbox());
            if (d == null) {
                if (properties.getDefaultBackend() == null && !properties.isInMemory()) {
                    throw new IllegalStateException(e.describe() + " names mailbox '" + e.mailbox()
                            + "', which is not declared: set mailbox.mailboxes." + e.mailbox()
                            + ".backend (or mailbox.default-backend)");
                }
                d = new Draft(e.mailbox(), new MailboxSpec(), false);
                drafts.put(e.mailbox(), d);
            }
            Kind kind = e.handler() ? Kind.REQUESTS : Kind.PLAIN;
            if (d.kindFrom != null && d.kind != kind) {
                throw new IllegalStateException("mailbox '" + d.name + "' has both " + d.kindFrom + " and "
                        + e.describe() + ": a mailbox holds plain messages or MainLoop requests, not both");
            }
            d.kind = kind;
            d.kindFrom = e.describe();
            inferBody(d, e.payload(), e.describe());
            if (e.response() != null) {
                if (d.response != null && !same(d.response, e.response())) {
                    throw new IllegalStateException("mailbox '" + d.name + "': " + e.describe() + " returns "
                            + e.response() + " but " + d.responseFrom + " returns " + d.response);
                }
                d.response = e.response();
                d.responseFrom = e.describe();
            }
        }
        for (Draft d : drafts.values()) {
            explicitTypes(d);
            d.backend = properties.isInMemory() ? Backend.MEMORY
                    : d.spec.getBackend() != null ? d.spec.getBackend() : properties.getDefaultBackend();
            if (d.backend == null) {
                throw new IllegalStateException("mailbox '" + d.name + "' has no backend: set mailbox.mailboxes."
                        + d.name + ".backend (memory, redis, sqs or node) or mailbox.default-backend");
            }
            if (d.spec.isContentBasedDeduplication() && !d.spec.isFifo()) {
                throw new IllegalStateException("mailbox '" + d.name + "': content-based-deduplication is for FIFO"
                        + " mailboxes only: set mailbox.mailboxes." + d.name + ".fifo too, or remove it");
            }
        }
        deadLetters(drafts);
        Map<String, MailboxDeclaration> out = new LinkedHashMap<>();
        Set<String> beanNames = new LinkedHashSet<>();
        for (Draft d : order(drafts)) {
            if (d.body == null) {
                throw new IllegalStateException("mailbox '" + d.name + "' has no body type: set mailbox.mailboxes."
                        + d.name + ".type, or give it a @MailboxListener or @MainLoopHandler method");
            }
            if (d.kind == Kind.REQUESTS && d.response == null) {
                throw new IllegalStateException("request mailbox '" + d.name + "' has no response type: set"
                        + " mailbox.mailboxes." + d.name + ".response-type");
            }
            if (d.kind != Kind.PLAIN && !"json".equals(d.spec.getCodec())) {
                throw new IllegalStateException("mailbox '" + d.name + "' holds MainLoop envelopes, which are JSON;"
                        + " its codec must be json, was " + d.spec.getCodec());
            }
            checkSpec(d);
            String beanName = d.spec.getBeanName() != null ? d.spec.getBeanName()
                    : taken.test(d.name) ? d.name + "Mailbox" : d.name;
            if (!beanNames.add(beanName)) {
                throw new IllegalStateException("two mailboxes have the bean name '" + beanName + "'");
            }
            String deadLetter = d.spec.getRedrive().getDeadLetter();
            out.put(d.name, new MailboxDeclaration(d.name, beanName, d.backend, d.kind, d.body, d.response,
                    d.spec, deadLetter));
        }
        return new MailboxDeclarations(out, List.copyOf(endpoints), properties);
    }

    private static void inferBody(Draft d, ResolvableType body, String from) {
        if (d.body != null && !same(d.body, body)) {
            throw new IllegalStateException("mailbox '" + d.name + "': " + from + " takes " + body + " but "
                    + d.bodyFrom + " takes " + d.body);
        }
        d.body = body;
        d.bodyFrom = from;
    }

    /** Whether two types are the same, wherever each was read from (a parameter, a type argument, a property). */
    private static boolean same(ResolvableType a, ResolvableType b) {
        return a.toString().equals(b.toString());
    }

    private static void explicitTypes(Draft d) {
        Class<?> type = d.spec.getType();
        if (type != null) {
            if (d.body != null && d.body.resolve() != type) {
                throw new IllegalStateException("mailbox '" + d.name + "': mailbox.mailboxes." + d.name + ".type is "
                        + type.getName() + " but " + d.bodyFrom + " takes " + d.body);
            }
            if (d.body == null) {
                d.body = ResolvableType.forClass(type);
                d.bodyFrom = "mailbox.mailboxes." + d.name + ".type";
            }
        }
        Class<?> response = d.spec.getResponseType();
        if (response != null) {
            if (d.kind == Kind.PLAIN && d.kindFrom != null) {
                throw new IllegalStateException("mailbox '" + d.name + "' has a response-type, so it holds MainLoop"
                        + " requests, but " + d.kindFrom + " reads plain messages from it");
            }
            if (d.response != null && d.response.resolve() != response) {
                throw new IllegalStateException("mailbox '" + d.name + "': mailbox.mailboxes." + d.name
                        + ".response-type is " + response.getName() + " but " + d.responseFrom + " returns "
                        + d.response);
            }
            d.kind = Kind.REQUESTS;
            if (d.response == null) {
                d.response = ResolvableType.forClass(response);
                d.responseFrom = "mailbox.mailboxes." + d.name + ".response-type";
            }
        }
    }

    private static void deadLetters(Map<String, Draft> drafts) {
        for (Draft source : List.copyOf(drafts.values())) {
            MailboxProperties.Redrive redrive = source.spec.getRedrive();
            String dlqName = redrive.getDeadLetter();
            Integer count = redrive.getMaxReceiveCount();
            if (count != null && (count < 1 || count > Limits.MAX_RECEIVE_COUNT)) {
                throw new IllegalStateException("mailbox.mailboxes." + source.name + ".redrive.max-receive-count must"
                        + " be 1 to " + Limits.MAX_RECEIVE_COUNT + ", was " + count);
            }
            if (source.kind == Kind.PLAIN && (dlqName == null) != (count == null)) {
                throw new IllegalStateException("mailbox '" + source.name + "': give both redrive.max-receive-count"
                        + " and redrive.dead-letter, or neither");
            }
            if (dlqName == null) {
                continue;
            }
            if (dlqName.equals(source.name)) {
                throw new IllegalStateException("mailbox '" + source.name + "' cannot be its own dead-letter mailbox");
            }
            Draft dlq = drafts.get(dlqName);
            if (dlq == null) {
                MailboxSpec spec = new MailboxSpec();
                spec.setCodec(source.spec.getCodec());
                // a Redis dead letter is moved inside the receive script: on a cluster both must share a slot
                spec.getRedis().setHashTag(source.spec.getRedis().getHashTag() != null
                        ? source.spec.getRedis().getHashTag() : source.name);
                // a FIFO mailbox's dead letters keep their groups' order in a FIFO mailbox, as on SQS
                spec.setFifo(source.spec.isFifo());
                dlq = new Draft(dlqName, spec, false);
                dlq.backend = source.backend;
                drafts.put(dlqName, dlq);
            } else if (dlq.backend != source.backend) {
                throw new IllegalStateException("dead-letter mailbox '" + dlqName + "' of '" + source.name
                        + "' must be on the same backend (" + source.backend + "), is on " + dlq.backend);
            } else if (dlq.spec.isFifo() != source.spec.isFifo()) {
                throw new IllegalStateException("dead-letter mailbox '" + dlqName + "' of '" + source.name + "' must be"
                        + (source.spec.isFifo() ? " a FIFO mailbox, as its source is: set mailbox.mailboxes." + dlqName
                        + ".fifo" : " a standard mailbox, as its source is: remove mailbox.mailboxes." + dlqName
                        + ".fifo"));
            }
            Kind kind = source.kind == Kind.REQUESTS ? Kind.LOOP_DEAD_LETTERS : Kind.PLAIN;
            String from = "the dead letters of mailbox '" + source.name + "'";
            if (dlq.kindFrom != null && dlq.kind != kind) {
                throw new IllegalStateException("mailbox '" + dlqName + "' holds " + from + ", but " + dlq.kindFrom
                        + " reads it as " + dlq.kind);
            }
            if (dlq.kind == Kind.REQUESTS) {
                throw new IllegalStateException("mailbox '" + dlqName + "' holds " + from
                        + " and cannot be a request mailbox too");
            }
            dlq.kind = kind;
            dlq.kindFrom = from;
            if (source.body != null) {
                inferBody(dlq, source.body, from);
            }
        }
    }

    /** Dead-letter mailboxes before the mailboxes that use them; refuses a cycle. */
    private static List<Draft> order(Map<String, Draft> drafts) {
        List<Draft> ordered = new ArrayList<>();
        Set<String> done = new LinkedHashSet<>();
        for (Draft d : drafts.values()) {
            visit(d, drafts, done, new LinkedHashSet<>(), ordered);
        }
        return ordered;
    }

    private static void visit(Draft d, Map<String, Draft> drafts, Set<String> done, Set<String> path, List<Draft> out) {
        if (done.contains(d.name)) {
            return;
        }
        if (!path.add(d.name)) {
            throw new IllegalStateException("dead-letter mailboxes form a cycle: " + String.join(" -> ", path)
                    + " -> " + d.name);
        }
        String dlq = d.spec.getRedrive().getDeadLetter();
        if (dlq != null) {
            visit(drafts.get(dlq), drafts, done, path, out);
        }
        done.add(d.name);
        out.add(d);
    }

    private static void checkSpec(Draft d) {
        String p = "mailbox.mailboxes." + d.name + ".";
        MailboxSpec spec = d.spec;
        Limits.requireVisibilityTimeout(spec.getVisibilityTimeout(), p + "visibility-timeout");
        positive(spec.getVisibilityTimeout(), p + "visibility-timeout");
        named(() -> Limits.requireWaitTime(spec.getWaitTime()), p + "wait-time", spec.getWaitTime());
        Limits.requireBatchSize(spec.getListener().getMaxMessages(), p + "listener.max-messages");
        if (spec.getListener().getConcurrency() < 1 || spec.getListener().getConcurrency() > 1024) {
            throw new IllegalArgumentException(p + "listener.concurrency must be 1 to 1024, was "
                    + spec.getListener().getConcurrency());
        }
        if (spec.getCapacity() < 0) {
            throw new IllegalArgumentException(p + "capacity must be 0 (no limit) or more, was " + spec.getCapacity());
        }
        if (spec.getMaxMessageBytes() != null) {
            named(() -> Limits.requireMaxMessageBytes(spec.getMaxMessageBytes()), p + "max-message-bytes",
                    spec.getMaxMessageBytes());
        }
        MailboxProperties.Backoff b = spec.getListener().getBackoff();
        Limits.requireVisibilityTimeout(b.getInitial(), p + "listener.backoff.initial");
        Limits.requireVisibilityTimeout(b.getMax(), p + "listener.backoff.max");
        if (b.getInitial().compareTo(b.getMax()) > 0) {
            throw new IllegalArgumentException(p + "listener.backoff.initial (" + b.getInitial() + ") must be at most "
                    + p + "listener.backoff.max (" + b.getMax() + ")");
        }
        if (!(b.getMultiplier() >= 1.0) || Double.isInfinite(b.getMultiplier())) {
            throw new IllegalArgumentException(p + "listener.backoff.multiplier must be a finite number of 1 or more,"
                    + " was " + b.getMultiplier());
        }
        if (spec.getClient().getTimeout() != null) {
            positive(spec.getClient().getTimeout(), p + "client.timeout");
        }
    }

    /** The properties that are not a mailbox's. */
    static void checkGlobal(MailboxProperties properties) {
        notNegative(properties.getListener().getShutdownGrace(), "mailbox.listener.shutdown-grace");
        if (properties.getRedis().getMaxConnections() < 1) {
            throw new IllegalArgumentException("mailbox.redis.max-connections must be 1 or more, was "
                    + properties.getRedis().getMaxConnections());
        }
        notNegative(properties.getCoordination().getTtl(), "mailbox.coordination.ttl");
        positive(properties.getNode().getCallTimeout(), "mailbox.node.call-timeout");
        notNegative(properties.getNode().getRouteWait(), "mailbox.node.route-wait");
        positive(properties.getMetrics().getCountInterval(), "mailbox.metrics.count-interval");
    }

    private static void positive(java.time.Duration d, String property) {
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(property + " must be positive, was " + d);
        }
    }

    private static void notNegative(java.time.Duration d, String property) {
        if (d.isNegative()) {
            throw new IllegalArgumentException(property + " must be 0 or more, was " + d);
        }
    }

    /** Runs a check of the api's Limits, whose message names the argument, with the property's name instead. */
    private static void named(Runnable check, String property, Object value) {
        try {
            check.run();
        } catch (IllegalArgumentException e) {
            String m = e.getMessage() == null ? "" : e.getMessage();
            int must = m.indexOf(" must ");
            // the api's message, with the property for the argument: nothing else to keep of it
            throw new IllegalArgumentException(property + (must >= 0 ? m.substring(must) : " is out of range (" + m
                    + "), was " + value));
        }
    }
}
