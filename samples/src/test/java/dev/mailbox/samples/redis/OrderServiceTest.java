package dev.mailbox.samples.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.samples.Order;
import dev.mailbox.testkit.redis.RedisServerProcess;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The Redis tutorial's service against a real redis-server (the testkit starts one on a free port). */
class OrderServiceTest {

    private RedisServerProcess redis;
    private OrderService service;

    @BeforeEach
    void start() {
        redis = RedisServerProcess.start();
        service = new OrderService(redis.uri());
    }

    @AfterEach
    void stop() {
        service.close();
        redis.close();
    }

    @Test
    void ordersPlacedAreHandledOnceAndDeleted() {
        service.place(new Order("o-1", "beans", 2));
        service.place(new Order("o-2", "rice", 1));
        List<Order> handled = new CopyOnWriteArrayList<>();

        int n = service.work(Duration.ofSeconds(5), handled::add);

        assertThat(n).isEqualTo(2);
        assertThat(handled).containsExactlyInAnyOrder(new Order("o-1", "beans", 2), new Order("o-2", "rice", 1));
        assertThat(service.backlog()).isZero();
    }

    @Test
    void aFailedOrderIsKeptAndHiddenForItsBackoff() {
        service.place(new Order("o-3", "tea", 1));

        int n = service.work(Duration.ofSeconds(5), order -> {
            throw new IllegalStateException("payment service down");
        });

        assertThat(n).isZero();
        assertThat(service.backlog()).as("nacked, not lost").isEqualTo(1);
        assertThat(service.work(Duration.ZERO, order -> { })).as("hidden for its 10 s backoff").isZero();
        assertThat(service.deadLetters().approximateCount()).isZero();
    }

    @Test
    void aServiceStartedAgainFindsWhatTheLastOneLeft() {
        service.place(new Order("o-4", "salt", 3));
        service.close();

        service = new OrderService(redis.uri());
        List<Order> handled = new CopyOnWriteArrayList<>();
        assertThat(service.work(Duration.ofSeconds(5), handled::add)).isEqualTo(1);
        assertThat(handled).containsExactly(new Order("o-4", "salt", 3));
    }
}
