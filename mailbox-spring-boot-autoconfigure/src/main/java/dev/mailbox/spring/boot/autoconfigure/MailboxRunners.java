package dev.mailbox.spring.boot.autoconfigure;

import dev.mailbox.api.Mailbox;
import dev.mailbox.mainloop.DeadLetter;
import dev.mailbox.mainloop.MainLoop;
import dev.mailbox.mainloop.MainLoopRequest;
import dev.mailbox.mainloop.RequestHandler;
import dev.mailbox.mainloop.RetryPolicy;
import io.micrometer.core.instrument.MeterRegistry;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.util.ReflectionUtils;

/**
 * Every listener and handler of the context, started with it (after every singleton is made, in a late
 * phase, so after the web server too) and stopped with it (first, so before the web server drains), through
 * the gate: at once, or while the coordinator lease is held.
 */
final class MailboxRunners implements SmartLifecycle, DisposableBean {

    /** Late to start, early to stop. */
    static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 100;
    private static final Logger LOG = LoggerFactory.getLogger(MailboxRunners.class);

    private final MailboxDeclarations declarations;
    private final ListableBeanFactory beans;
    private final MailboxFactory factory;
    private final Supplier<MeterRegistry> registry;
    private final Gate gate;
    private final Duration grace;
    private final boolean autoStartup;
    private final ScheduledExecutorService timer;
    private @Nullable List<Runner> runners; // guarded by this
    private volatile boolean running;

    MailboxRunners(MailboxDeclarations declarations, ListableBeanFactory beans, MailboxFactory factory,
                   Supplier<MeterRegistry> registry, Gate gate) {
        this.declarations = declarations;
        this.beans = beans;
        this.factory = factory;
        this.registry = registry;
        this.gate = gate;
        this.grace = declarations.properties().getListener().getShutdownGrace();
        this.autoStartup = declarations.properties().getListener().isAutoStartup();
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
            Thread thread = new Thread(r, "mailbox-listener-visibility");
            thread.setDaemon(true);
            return thread;
        });
        t.setRemoveOnCancelPolicy(true);
        this.timer = t;
    }

    @Override
    public void start() {
        List<Runner> all = runners();
        running = true;
        gate.open(epoch -> all.forEach(r -> r.start(epoch)), g -> stopAll(all, g));
    }

    @Override
    public void stop() {
        gate.close(grace);
        running = false;
    }

    @Override
    public void stop(Runnable callback) {
        Thread t = new Thread(() -> {
            try {
                stop();
            } finally {
                callback.run();
            }
        }, "mailbox-listeners-stop");
        t.setDaemon(true);
        t.start();
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public boolean isAutoStartup() {
        return autoStartup;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }

    /** @return the runners, made once */
    synchronized List<Runner> runners() {
        if (runners == null) {
            List<Runner> made = new ArrayList<>();
            for (Endpoint e : declarations.endpoints()) {
                made.add(e.handler() ? handler(e) : listener(e));
            }
            runners = List.copyOf(made);
        }
        return runners;
    }

    Gate gate() {
        return gate;
    }

    /**
     * Stops the listeners, then the handlers, all within one grace period: a listener may be waiting for a
     * handler of this application to answer (a MainLoopClient call), so the handlers keep answering until the
     * listeners have finished or returned what they hold, and then get what is left of the grace.
     */
    static void stopAll(List<Runner> all, Duration grace) {
        long until = System.nanoTime() + grace.toNanos();
        List<Runner> listeners = all.stream().filter(r -> !(r instanceof HandlerContainer)).toList();
        List<Runner> handlers = all.stream().filter(r -> r instanceof HandlerContainer).toList();
        if (!stopInParallel(listeners, grace)) {
            return;
        }
        stopInParallel(handlers, Duration.ofNanos(Math.max(0, until - System.nanoTime())));
    }

    /** @return false if interrupted while waiting */
    private static boolean stopInParallel(List<Runner> runners, Duration grace) {
        // every runner gets the whole grace period
        List<Thread> stops = new ArrayList<>();
        for (Runner r : runners) {
            Thread t = new Thread(() -> r.stop(grace), "mailbox-stop-" + r.mailbox());
            t.setDaemon(true);
            t.start();
            stops.add(t);
        }
        for (Thread t : stops) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }

    private static int concurrency(Endpoint e, MailboxDeclaration d) {
        int n = e.requireConcurrency();
        return n > 0 ? n : d.spec().getListener().getConcurrency();
    }

    private Object target(Endpoint e) {
        return beans.getBean(e.beanName());
    }

    private static Method invocable(Endpoint e, Object bean) {
        Method m = AopUtils.selectInvocableMethod(e.method(), bean.getClass());
        ReflectionUtils.makeAccessible(m);
        return m;
    }

    @SuppressWarnings("unchecked")
    private Runner listener(Endpoint e) {
        MailboxDeclaration d = declarations.get(e.mailbox());
        Object bean = target(e);
        MailboxProperties.Backoff b = d.spec().getListener().getBackoff();
        RetryPolicy backoff = RetryPolicy.defaults().withBackoff(b.getInitial(), b.getMultiplier(), b.getMax());
        Mailbox<Object> mailbox = (Mailbox<Object>) beans.getBean(d.beanName());
        return new ListenerContainer<>(mailbox, bean, invocable(e, bean), e.envelope(), concurrency(e, d),
                d.spec().getListener().getMaxMessages(), d.spec().getVisibilityTimeout(), d.spec().getWaitTime(),
                backoff, timer, registry.get(), e.describe() + " on mailbox '" + d.name() + "'");
    }

    @SuppressWarnings("unchecked")
    private Runner handler(Endpoint e) {
        MailboxDeclaration d = declarations.get(e.mailbox());
        Object bean = target(e);
        Method method = invocable(e, bean);
        boolean envelope = e.envelope();
        RequestHandler<Object, Object> handler = request -> {
            try {
                return method.invoke(bean, envelope ? request : request.body());
            } catch (InvocationTargetException ite) {
                Throwable cause = ite.getCause();
                if (cause instanceof Exception ex) {
                    throw ex;
                }
                throw ite; // an Error: reported as the invocation's failure
            }
        };
        Mailbox<MainLoopRequest<Object>> requests = (Mailbox<MainLoopRequest<Object>>) beans.getBean(d.beanName());
        var results = MailboxFactory.results(d);
        RetryPolicy retry = RetryPolicy.defaults();
        if (d.maxReceiveCount() != null) {
            retry = retry.withMaxDeliveries(d.maxReceiveCount());
        }
        MainLoop.Builder<Object, Object> b = MainLoop.builder(requests, handler)
                .replyTo(name -> factory.dynamic(d.backend(), name, results))
                .concurrency(concurrency(e, d))
                .receiveBatch(d.spec().getListener().getMaxMessages())
                .visibilityTimeout(d.spec().getVisibilityTimeout())
                .waitTime(d.spec().getWaitTime())
                .retryPolicy(retry)
                .shutdownGrace(grace)
                .meterRegistry(registry.get());
        if (d.deadLetter() != null) {
            MailboxDeclaration dlq = declarations.get(d.deadLetter());
            b.deadLetters((Mailbox<DeadLetter<Object>>) beans.getBean(dlq.beanName()));
        }
        return new HandlerContainer(b.build(), e.describe() + " on mailbox '" + d.name() + "'");
    }

    @Override
    public void destroy() {
        List<Runner> all;
        synchronized (this) {
            all = runners == null ? List.of() : runners;
        }
        for (Runner r : all) {
            try {
                r.close();
            } catch (RuntimeException ex) {
                LOG.warn("closing {} failed", r, ex);
            }
        }
        timer.shutdownNow();
    }
}
