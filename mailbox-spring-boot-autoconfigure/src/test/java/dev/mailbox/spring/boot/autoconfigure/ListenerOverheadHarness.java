package dev.mailbox.spring.boot.autoconfigure;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.json.JsonCodec;
import dev.mailbox.mainloop.MainLoop;
import dev.mailbox.mainloop.MainLoopCodecs;
import dev.mailbox.mainloop.MainLoopRequest;
import dev.mailbox.mainloop.MainLoopResult;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.spring.boot.MailboxListener;
import dev.mailbox.testkit.redis.RedisServerProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import redis.clients.jedis.JedisPooled;

/**
 * The overhead of a {@code @MailboxListener} on Redis, next to the same work done by hand in the same run:
 * <ul>
 *   <li><b>loop</b>: a consumer written by hand, N threads each {@code acknowledgeAndReceive}-ing one message at a
 *       time, the physical floor;</li>
 *   <li><b>MainLoop</b>: a hand-built {@code MainLoop} with concurrency N and {@code receiveBatch(1)} (it also sends
 *       each result, to a response mailbox);</li>
 *   <li><b>listener</b>: a {@code @MailboxListener(concurrency = N)} in a Spring Boot context.</li>
 * </ul>
 * Each round fills the mailbox with the same number of messages and times how long each consumer takes to
 * empty it; the three take turns within a round. The work per message is counting it.
 *
 * <pre>
 * mvn -q -pl mailbox-spring-boot-autoconfigure -am install -DskipTests
 * mvn -q -pl mailbox-spring-boot-autoconfigure test-compile dependency:build-classpath -Dmdep.outputFile=target/cp.txt -Dmdep.includeScope=test
 * java -cp mailbox-spring-boot-autoconfigure/target/test-classes:mailbox-spring-boot-autoconfigure/target/classes:$(cat mailbox-spring-boot-autoconfigure/target/cp.txt) \
 *     dev.mailbox.spring.boot.autoconfigure.ListenerOverheadHarness [--quick]
 * </pre>
 */
public final class ListenerOverheadHarness {

    static final AtomicReference<CountDownLatch> REMAINING = new AtomicReference<>(new CountDownLatch(0));

    /** The listener under test. */
    static class Counting {
        @MailboxListener(value = "bench", concurrency = "${bench.concurrency}")
        void on(Order order) {
            REMAINING.get().countDown();
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ImportAutoConfiguration(MailboxAutoConfiguration.class)
    static class App {
        @Bean
        Counting counting() {
            return new Counting();
        }
    }

    public static void main(String[] args) throws Exception {
        boolean quick = List.of(args).contains("--quick");
        int messages = quick ? 2_000 : 20_000;
        int rounds = quick ? 2 : 5;
        try (RedisServerProcess redis = RedisServerProcess.start()) {
            for (int concurrency : new int[] {1, 4}) {
                run(redis, concurrency, messages, rounds);
            }
        }
    }

    private static void run(RedisServerProcess redis, int concurrency, int messages, int rounds) throws Exception {
        String prefix = "bench" + concurrency + ":";
        ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class).web(WebApplicationType.NONE)
                .logStartupInfo(false)
                .properties("bench.concurrency=" + concurrency, "mailbox.redis.uri=" + redis.uri(),
                        "mailbox.redis.key-prefix=" + prefix, "mailbox.mailboxes.bench.backend=redis",
                        "mailbox.mailboxes.bench.wait-time=1s", "mailbox.listener.auto-startup=false")
                .run();
        MailboxRunners listener = context.getBean(MailboxRunners.class);
        JedisPooled jedis = new JedisPooled(redis.host(), redis.port());
        RedisMailbox<Order> plain = RedisMailbox.builder("bench", JsonCodec.of(Order.class)).client(jedis)
                .keyPrefix(prefix).build();
        RedisMailbox<MainLoopRequest<Order>> requests = RedisMailbox.builder("bench-requests",
                MainLoopCodecs.requests(Order.class)).client(jedis).keyPrefix(prefix).build();
        RedisMailbox<MainLoopResult<Integer>> results = RedisMailbox.builder("bench-results",
                MainLoopCodecs.results(Integer.class)).client(jedis).keyPrefix(prefix).build();
        List<double[]> rows = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
            double loop = loop(plain, concurrency, messages);
            double mainLoop = mainLoop(requests, results, concurrency, messages);
            double spring = listener(plain, listener, messages);
            rows.add(new double[] {loop, mainLoop, spring});
            System.out.printf("concurrency %d round %d: loop %,.0f msg/s, MainLoop %,.0f msg/s, listener %,.0f msg/s"
                    + " (listener/MainLoop %.2f, listener/loop %.2f)%n", concurrency, round + 1, loop, mainLoop, spring,
                    spring / mainLoop, spring / loop);
        }
        rows.sort((a, b) -> Double.compare(a[2] / a[1], b[2] / b[1]));
        double[] median = rows.get(rows.size() / 2);
        System.out.printf("concurrency %d median round: loop %,.0f msg/s, MainLoop %,.0f msg/s, listener %,.0f msg/s;"
                        + " listener/MainLoop %.2f, listener/loop %.2f%n", concurrency, median[0], median[1], median[2],
                median[2] / median[1], median[2] / median[0]);
        context.close();
        plain.close();
        requests.close();
        results.close();
        jedis.close();
    }

    private static void fill(Mailbox<Order> mailbox, int n) {
        List<Order> batch = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            batch.add(new Order("o-" + i, i));
            if (batch.size() == 10) {
                mailbox.sendBatch(batch);
                batch.clear();
            }
        }
    }

    private static double loop(Mailbox<Order> mailbox, int concurrency, int n) throws InterruptedException {
        fill(mailbox, n);
        CountDownLatch remaining = new CountDownLatch(n);
        ReceiveOptions options = ReceiveOptions.defaults().withWaitTime(Duration.ofMillis(200));
        long start = System.nanoTime();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < concurrency; t++) {
            Thread thread = new Thread(() -> {
                List<Message<Order>> done = List.of();
                while (remaining.getCount() > 0) {
                    List<Message<Order>> got = mailbox.acknowledgeAndReceive(done, options, m -> { });
                    got.forEach(m -> remaining.countDown());
                    done = got;
                }
                if (!done.isEmpty()) {
                    mailbox.acknowledgeBatch(done);
                }
            });
            thread.start();
            threads.add(thread);
        }
        remaining.await();
        double rate = n / ((System.nanoTime() - start) / 1e9);
        for (Thread t : threads) {
            t.join();
        }
        return rate;
    }

    private static double mainLoop(Mailbox<MainLoopRequest<Order>> requests, Mailbox<MainLoopResult<Integer>> results,
                                   int concurrency, int n) throws InterruptedException {
        for (int i = 0; i < n; i += 10) {
            List<MainLoopRequest<Order>> batch = new ArrayList<>();
            for (int j = i; j < i + 10 && j < n; j++) {
                batch.add(MainLoopRequest.of(new Order("o-" + j, j)));
            }
            requests.sendBatch(batch);
        }
        CountDownLatch remaining = new CountDownLatch(n);
        MainLoop<Order, Integer> loop = MainLoop.<Order, Integer>builder(requests, r -> {
            remaining.countDown();
            return r.body().quantity();
        }).responses(results).concurrency(concurrency).receiveBatch(1).waitTime(Duration.ofMillis(200))
                .rememberCompleted(0, Duration.ofMinutes(1)).build();
        long start = System.nanoTime();
        Thread runner = new Thread(loop::run);
        runner.start();
        remaining.await();
        double rate = n / ((System.nanoTime() - start) / 1e9);
        loop.close();
        runner.join();
        results.purge();
        return rate;
    }

    private static double listener(Mailbox<Order> mailbox, MailboxRunners runners, int n) throws InterruptedException {
        fill(mailbox, n);
        CountDownLatch remaining = new CountDownLatch(n);
        REMAINING.set(remaining);
        long start = System.nanoTime();
        runners.start();
        if (!remaining.await(10, TimeUnit.MINUTES)) {
            throw new IllegalStateException("the listener did not finish");
        }
        double rate = n / ((System.nanoTime() - start) / 1e9);
        runners.stop();
        return rate;
    }
}
