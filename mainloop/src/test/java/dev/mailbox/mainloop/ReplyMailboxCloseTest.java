package dev.mailbox.mainloop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxUnavailableException;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.mainloop.Shop.Order;
import dev.mailbox.mainloop.Shop.Quote;
import dev.mailbox.testkit.ForwardingMailbox;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ReplyMailboxCloseTest {

    /** A reply-to mailbox that refuses every send (its queue was deleted by the client's cleanup, say). */
    static class Refusing<T> extends ForwardingMailbox<T> {
        final AtomicInteger sends = new AtomicInteger();
        final AtomicBoolean closed = new AtomicBoolean();

        Refusing(Mailbox<T> delegate) {
            super(delegate);
        }

        @Override
        public String send(T body, SendOptions options) {
            sends.incrementAndGet();
            throw new MailboxUnavailableException("queue does not exist", false, null);
        }

        @Override
        public Mailbox<T> fenced(long epoch) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void close() {
            closed.set(true);
            super.close();
        }
    }

    @Test
    void closeClosesReplyMailboxesBeforeReturning() throws Exception {
        Mailbox<MainLoopRequest<Order>> requests = InMemoryMailbox.builder("rv-c-req", Shop.REQUESTS).build();
        Refusing<MainLoopResult<Quote>> reply = new Refusing<>(InMemoryMailbox.builder("rv-c-reply", Shop.RESULTS).build()) {
            @Override
            public String send(MainLoopResult<Quote> body, SendOptions options) {
                return delegate.send(body, options);
            }
        };
        MainLoop<Order, Quote> loop = MainLoop.<Order, Quote>builder(requests, r -> Shop.price(r.body()))
                .replyTo(name -> reply).waitTime(Duration.ofMillis(100)).build();
        requests.send(MainLoopRequest.of(new Order("fig", 1)).withReplyTo("rv-c-reply"));
        assertThat(loop.run(1)).isEqualTo(1); // opens the reply mailbox
        assertThat(reply.receive(ReceiveOptions.defaults())).hasSize(1);

        try (BusyCommonPool busy = new BusyCommonPool()) { // its threads never get to close anything
            loop.close();
            assertThat(reply.closed).as("reply mailbox closed when close() returned").isTrue();
        }
    }
}
