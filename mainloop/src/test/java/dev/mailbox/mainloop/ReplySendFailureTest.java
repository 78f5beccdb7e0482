package dev.mailbox.mainloop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxUnavailableException;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.mainloop.Shop.Order;
import dev.mailbox.mainloop.Shop.Quote;
import dev.mailbox.testkit.CollectingMailbox;
import dev.mailbox.testkit.ForwardingMailbox;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A result whose send fails for a reason other than its size: retried a few times at once, given back, and
 * dead-lettered with a portable error once the retry policy's deliveries are used up; each delivery counted once.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ReplySendFailureTest {

    /** A reply mailbox whose first {@code failing} sends fail as an outage would (retryable). */
    static final class Flaky<T> extends ForwardingMailbox<T> {
        final AtomicInteger sends = new AtomicInteger();
        final int failing;

        Flaky(Mailbox<T> delegate, int failing) {
            super(delegate);
            this.failing = failing;
        }

        @Override
        public String send(T body, SendOptions options) {
            if (sends.incrementAndGet() <= failing) {
                throw new MailboxUnavailableException("connection reset", true, null);
            }
            return delegate.send(body, options);
        }

        @Override
        public Mailbox<T> fenced(long epoch) {
            throw new UnsupportedOperationException();
        }
    }

    @Test
    @DisplayName("a reply mailbox that keeps failing: the request is given back until the retry policy's last "
            + "delivery, then dead-lettered with mainloop.ReplyFailed, not redelivered for as long as its result is "
            + "remembered; the handler runs once, each delivery is counted once and the give-up once")
    void replyThatKeepsFailingIsDeadLetteredAfterTheLastDelivery() {
        var requests = InMemoryMailbox.builder("rsf-requests", Shop.REQUESTS).build();
        var replies = new Flaky<>(InMemoryMailbox.builder("rsf-replies", Shop.RESULTS).build(), Integer.MAX_VALUE);
        var dead = new CollectingMailbox<DeadLetter<Order>>("rsf-dead");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        AtomicInteger handled = new AtomicInteger();
        MainLoop<Order, Quote> loop = MainLoop.<Order, Quote>builder(requests, r -> {
            handled.incrementAndGet();
            return Shop.price(r.body());
        }).responses(replies).deadLetters(dead).waitTime(Duration.ZERO)
                .retryPolicy(RetryPolicy.defaults().withMaxDeliveries(3).withBackoff(Duration.ZERO, 1, Duration.ZERO))
                .rememberCompleted(100, Duration.ofHours(1)).meterRegistry(registry).build();
        MainLoopRequest<Order> request = MainLoopRequest.of(new Order("kiwi", 2));
        requests.send(request);

        // many more receives than the policy allows deliveries: the request must be gone after its third
        long taken = loop.run(10);

        assertThat(taken).as("deliveries taken").isEqualTo(3);
        assertThat(handled).as("the handler ran once; later deliveries were answered from memory").hasValue(1);
        assertThat(replies.sends).as("each delivery tried the send %s times", Task.REPLY_ATTEMPTS)
                .hasValue(3 * Task.REPLY_ATTEMPTS);
        assertThat(requests.approximateCount()).as("the request was not given back again").isZero();
        assertThat(dead.bodies()).singleElement().satisfies(d -> {
            assertThat(d.request()).isEqualTo(request);
            assertThat(d.deliveryCount()).isEqualTo(3);
            assertThat(d.error().type()).isEqualTo(MainLoopError.REPLY_FAILED);
            assertThat(d.error().message()).contains("rsf-replies").contains("connection reset");
        });
        assertThat(OutcomeCountTest.outcomes(registry)).as("one outcome per delivery: the handler's, then answered "
                + "from memory").isEqualTo(Map.of("success", 1.0, "duplicate", 2.0));
        assertThat(registry.get("mainloop.replies.failed").tag("then", "given_back").counter().count()).isEqualTo(2);
        assertThat(registry.get("mainloop.replies.failed").tag("then", "given_up").counter().count())
                .as("the give-up counted once").isEqualTo(1);
        loop.close();
    }

    @Test
    @DisplayName("a reply send that fails twice and then works is retried at once: the request is answered on its "
            + "first delivery, not given back")
    void transientReplyFailureIsRetriedInTheSameDelivery() {
        var requests = InMemoryMailbox.builder("rsf2-requests", Shop.REQUESTS).build();
        var real = InMemoryMailbox.builder("rsf2-replies", Shop.RESULTS).build();
        var replies = new Flaky<>(real, 2);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        MainLoop<Order, Quote> loop = MainLoop.builder(requests, RequestHandler.ofBody(Shop::price))
                .responses(replies).waitTime(Duration.ZERO).meterRegistry(registry).build();
        requests.send(MainLoopRequest.of(new Order("lime", 4)));

        assertThat(loop.run(1)).isEqualTo(1);

        assertThat(real.receive(ReceiveOptions.defaults())).singleElement()
                .satisfies(m -> assertThat(m.body().response()).isEqualTo(new Quote("lime", 4, 500)));
        assertThat(requests.approximateCount()).as("answered and acknowledged on its first delivery").isZero();
        assertThat(OutcomeCountTest.outcomes(registry)).isEqualTo(Map.of("success", 1.0));
        loop.close();
    }
}
