package dev.mailbox.mainloop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Mailbox;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.mainloop.Shop.Order;
import dev.mailbox.mainloop.Shop.Quote;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 2, unit = TimeUnit.MINUTES)
class CallTimeoutTest {

    /**
     * Nobody answers; the call's 300 ms timeout must fail it in time even while the JVM's common pool is
     * busy with unrelated blocking work.
     */
    @Test
    void callTimesOutWhileTheCommonPoolIsBusy() throws Exception {
        Mailbox<MainLoopRequest<Order>> requests = InMemoryMailbox.builder("rv-t-req", Shop.REQUESTS).build();
        MainLoopClient<Order, Quote> client = MainLoopClient.builder(requests,
                name -> InMemoryMailbox.builder(name, Shop.RESULTS).build()).receiveWait(Duration.ofMillis(200)).build();
        try (BusyCommonPool busy = new BusyCommonPool()) {
            long t0 = System.nanoTime();
            CompletableFuture<Quote> call = client.call(new Order("fig", 1), Duration.ofMillis(300));
            try {
                call.get(5, TimeUnit.SECONDS);
            } catch (Exception expected) {
                // RequestTimeoutException, or the test's own TimeoutException
            }
            long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertThat(call.isDone()).as("call with a 300 ms timeout done after %d ms", tookMs).isTrue();
        } finally {
            client.close();
        }
    }
}
