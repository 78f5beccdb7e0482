package dev.mailbox.samples.mainloop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.mainloop.MainLoop;
import dev.mailbox.mainloop.RequestFailedException;
import dev.mailbox.samples.Order;
import dev.mailbox.samples.Quote;
import dev.mailbox.testkit.redis.RedisServerProcess;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import redis.clients.jedis.JedisPooled;

/** The MainLoop tutorial's worker and caller, in one JVM but talking only through a real Redis. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class PricingTest {

    private RedisServerProcess redis;
    private JedisPooled workerRedis;
    private JedisPooled callerRedis;
    private MainLoop<Order, Quote> worker;
    private Thread workerThread;

    @BeforeEach
    void start() {
        redis = RedisServerProcess.start();
        workerRedis = new JedisPooled(redis.uri());
        callerRedis = new JedisPooled(redis.uri());
        worker = PricingWorker.loop(workerRedis);
        workerThread = new Thread(worker::run, "pricing-worker");
        workerThread.start();
    }

    @AfterEach
    void stop() throws InterruptedException {
        assertThat(worker.shutdown(Duration.ofSeconds(10))).as("the worker stopped within its grace").isTrue();
        workerThread.join(10_000);
        workerRedis.close();
        callerRedis.close();
        redis.close();
    }

    @Test
    void aCallerGetsTheWorkersQuote() {
        try (PricingCaller caller = new PricingCaller(callerRedis)) {
            assertThat(caller.quote(new Order("o-1", "beans", 2))).isEqualTo(new Quote("o-1", 500));
        }
    }

    @Test
    void manyCallsInFlightAreEachAnsweredWithTheirOwnQuote() {
        try (PricingCaller caller = new PricingCaller(callerRedis)) {
            @SuppressWarnings("unchecked")
            CompletableFuture<Quote>[] quotes = new CompletableFuture[20];
            for (int i = 0; i < quotes.length; i++) {
                quotes[i] = caller.quoteLater(new Order("o-" + i, "beans", i + 1));
            }
            for (int i = 0; i < quotes.length; i++) {
                assertThat(quotes[i].join()).isEqualTo(new Quote("o-" + i, (i + 1) * Quote.UNIT_PRICE_CENTS));
            }
        }
    }

    @Test
    void aHandlerExceptionReachesTheCallerAsAPortableError() {
        try (PricingCaller caller = new PricingCaller(callerRedis)) {
            assertThatThrownBy(() -> caller.quote(new Order("o-0", "beans", 0)))
                    .isInstanceOf(RequestFailedException.class)
                    .satisfies(e -> assertThat(((RequestFailedException) e).error().type())
                            .isEqualTo(IllegalArgumentException.class.getName()))
                    .hasMessageContaining("quantity must be at least 1");
        }
    }
}
