package dev.mailbox.spring.boot.autoconfigure;

import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.type.TypeFactory;
import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.json.JsonCodec;
import dev.mailbox.mainloop.DeadLetter;
import dev.mailbox.mainloop.MainLoopClient;
import dev.mailbox.mainloop.MainLoopRequest;
import dev.mailbox.mainloop.MainLoopResult;
import dev.mailbox.spring.boot.autoconfigure.MailboxDeclaration.Kind;
import dev.mailbox.spring.boot.autoconfigure.MailboxProperties.Backend;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.core.ResolvableType;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Makes and owns every mailbox of the context: the declared ones (the beans hand them out), the ones opened
 * by name at run time (reply mailboxes), and each backend's connection. Closes them all when the context
 * closes, after the listeners have stopped.
 */
final class MailboxFactory implements DisposableBean {

    static final String BEAN_NAME = "dev.mailbox.spring.boot.mailboxFactory";
    private static final Logger LOG = LoggerFactory.getLogger(MailboxFactory.class);

    private final MailboxDeclarations declarations;
    private final ListableBeanFactory beans;
    private final Environment environment;
    private final Map<Backend, Backends> backends = new EnumMap<>(Backend.class);
    private final Map<String, Mailbox<?>> declared = new LinkedHashMap<>();
    private final java.util.Set<AutoCloseable> opened = new java.util.LinkedHashSet<>();
    private boolean closed;

    MailboxFactory(MailboxDeclarations declarations, ListableBeanFactory beans, Environment environment) {
        this.declarations = declarations;
        this.beans = beans;
        this.environment = environment;
    }

    /**
     * @param name a declared mailbox
     * @return the mailbox itself (not the bean, which a test may have wrapped)
     */
    synchronized Mailbox<?> declared(String name) {
        Mailbox<?> m = declared.get(name);
        if (m != null) {
            return m;
        }
        requireOpen();
        MailboxDeclaration d = declarations.get(name);
        RedrivePolicy redrive = null;
        if (d.kind() == Kind.PLAIN && d.deadLetter() != null) {
            redrive = RedrivePolicy.of(d.maxReceiveCount(), declared(d.deadLetter()));
        }
        m = backends(d.backend()).declared(d, codec(d), redrive);
        declared.put(name, m);
        return m;
    }

    /**
     * @param backend where
     * @param name    the mailbox's name
     * @param codec   its codec
     * @param <T>     the body type
     * @return a mailbox opened by name, closed with the context (closing it earlier is harmless)
     */
    synchronized <T> Mailbox<T> dynamic(Backend backend, String name, Codec<T> codec) {
        requireOpen();
        Mailbox<T> m = backends(backend).dynamic(name, codec);
        // a MainLoop closes the reply mailboxes it stops using: then they are forgotten here too
        MailboxView<T> view = new MailboxView<>(m, v -> {
            forget(v);
            m.close();
        });
        opened.add(view);
        return view;
    }

    private synchronized void forget(Mailbox<?> m) {
        opened.remove(m);
    }

    private synchronized void discard(Backend backend, Mailbox<?> m) {
        backends(backend).discard(m);
    }

    /** @return how many mailboxes opened by name are open, for tests */
    synchronized int openedCount() {
        return opened.size();
    }

    /**
     * @param name a request mailbox
     * @return a new client of it, whose response mailbox is on the same backend
     */
    MainLoopClient<?, ?> client(String name) {
        MailboxDeclaration d = declarations.get(name);
        @SuppressWarnings("unchecked")
        Mailbox<MainLoopRequest<Object>> requests = (Mailbox<MainLoopRequest<Object>>) beans.getBean(d.beanName());
        Codec<MainLoopResult<Object>> results = results(d);
        return MainLoopClient.<Object, Object>builder(requests, n -> dynamic(d.backend(), n, results))
                .cleanup(m -> discard(d.backend(), m))
                .defaultTimeout(d.spec().getClient().getTimeout() != null ? d.spec().getClient().getTimeout()
                        : d.spec().getVisibilityTimeout().multipliedBy(2)).build();
    }

    /** @return where each backend in use lives, for health details */
    synchronized Map<Backend, String> describeBackends() {
        Map<Backend, String> out = new EnumMap<>(Backend.class);
        backends.forEach((b, c) -> out.put(b, c.describe()));
        return out;
    }

    private Backends backends(Backend backend) {
        return backends.computeIfAbsent(backend, b -> switch (b) {
            case MEMORY -> new MemoryBackends();
            case REDIS -> {
                require("dev.mailbox.redis.RedisMailbox", "dev.mailbox:mailbox-redis", b);
                yield new RedisBackends(declarations.properties().getRedis(), beans, environment);
            }
            case SQS -> {
                require("dev.mailbox.sqs.SqsMailbox", "dev.mailbox:mailbox-sqs", b);
                yield new SqsBackends(declarations.properties().getSqs(), beans);
            }
            case NODE -> {
                require("dev.mailbox.coordination.RemoteMailbox", "dev.mailbox:coordination-client", b);
                yield new NodeBackends(declarations.properties().getNode());
            }
        });
    }

    private static void require(String className, String artifact, Backend backend) {
        if (!ClassUtils.isPresent(className, MailboxFactory.class.getClassLoader())) {
            throw new IllegalStateException("backend " + backend.name().toLowerCase(java.util.Locale.ROOT)
                    + " needs " + artifact + " on the classpath");
        }
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("the mailboxes of this context are closed");
        }
    }

    // --- codecs ----------------------------------------------------------------------------------

    private Codec<?> codec(MailboxDeclaration d) {
        return switch (d.kind()) {
            case PLAIN -> plainCodec(d);
            case REQUESTS -> JsonCodec.of(TypeFactory.defaultInstance()
                    .constructParametricType(MainLoopRequest.class, javaType(d.body())));
            case LOOP_DEAD_LETTERS -> JsonCodec.of(TypeFactory.defaultInstance()
                    .constructParametricType(DeadLetter.class, javaType(d.body())));
        };
    }

    static Codec<MainLoopResult<Object>> results(MailboxDeclaration d) {
        return JsonCodec.of(TypeFactory.defaultInstance().constructParametricType(MainLoopResult.class,
                javaType(java.util.Objects.requireNonNull(d.response()))));
    }

    private Codec<?> plainCodec(MailboxDeclaration d) {
        String codec = d.spec().getCodec();
        Class<?> raw = d.body().resolve();
        switch (codec) {
            case "json":
                return JsonCodec.of(javaType(d.body()));
            case "utf8":
                requireBody(d, String.class, codec);
                return Codec.utf8();
            case "bytes":
                requireBody(d, byte[].class, codec);
                return Codec.bytes();
            default:
                if (!beans.containsBean(codec)) {
                    throw new IllegalStateException("mailbox.mailboxes." + d.name() + ".codec is '" + codec
                            + "': not json, utf8 or bytes, and no bean has that name");
                }
                Object bean = beans.getBean(codec);
                if (!(bean instanceof Codec<?> c)) {
                    throw new IllegalStateException("mailbox.mailboxes." + d.name() + ".codec names bean '" + codec
                            + "', which is a " + bean.getClass().getName() + ", not a dev.mailbox.api.Codec");
                }
                LOG.debug("mailbox '{}' stores {} with codec bean '{}'", d.name(), raw, codec);
                return c;
        }
    }

    private static void requireBody(MailboxDeclaration d, Class<?> type, String codec) {
        if (d.body().resolve() != type) {
            throw new IllegalStateException("mailbox '" + d.name() + "' has codec " + codec + ", which stores "
                    + type.getSimpleName() + " bodies, but its type is " + d.body());
        }
    }

    /**
     * Jackson's type for a resolved type, built from its resolved parts: {@code type.getType()} may be a type
     * variable resolved only through its owner (a generic bean's {@code T}), which Jackson would read as Object.
     */
    static JavaType javaType(ResolvableType type) {
        TypeFactory types = TypeFactory.defaultInstance();
        Class<?> raw = type.toClass();
        if (raw.isArray()) {
            return types.constructArrayType(javaType(type.getComponentType()));
        }
        ResolvableType[] generics = type.getGenerics();
        if (generics.length == 0) {
            return types.constructType(raw);
        }
        JavaType[] arguments = new JavaType[generics.length];
        for (int i = 0; i < generics.length; i++) {
            arguments[i] = javaType(generics[i]);
        }
        return types.constructParametricType(raw, arguments);
    }

    // --- closing ---------------------------------------------------------------------------------

    @Override
    public synchronized void destroy() {
        closed = true;
        List<AutoCloseable> all = new ArrayList<>(opened);
        List<Mailbox<?>> mailboxes = new ArrayList<>(declared.values());
        java.util.Collections.reverse(mailboxes); // users of a dead-letter mailbox first
        all.addAll(mailboxes);
        all.addAll(backends.values());
        for (AutoCloseable c : all) {
            try {
                c.close();
            } catch (Exception e) {
                LOG.warn("closing {} failed", c, e);
            }
        }
        opened.clear();
        declared.clear();
        backends.clear();
    }

    @Nullable Mailbox<?> existing(String name) {
        synchronized (this) {
            return declared.get(name);
        }
    }
}
