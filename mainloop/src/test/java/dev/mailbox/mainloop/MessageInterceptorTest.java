package dev.mailbox.mainloop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.SendOptions;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.mainloop.Shop.Order;
import dev.mailbox.mainloop.Shop.Quote;
import dev.mailbox.testkit.ForwardingMailbox;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The hook a tracing module uses: the work for a message runs inside it, on the thread that called it. */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class MessageInterceptorTest {

    /** What the interceptor puts in place around the work: the message's "corr" attribute. */
    private static final ThreadLocal<String> CORRELATION = new ThreadLocal<>();

    private static MessageInterceptor correlating(List<String> seen) {
        return (mailbox, message, work) -> {
            CORRELATION.set(mailbox + ":" + message.attributes().getOrDefault("corr", "-"));
            try {
                work.run();
            } finally {
                CORRELATION.remove();
            }
            seen.add(mailbox + ":" + message.id());
        };
    }

    /** A mailbox that notes what was in place on the thread that sent each message through it. */
    static final class Noting<T> extends ForwardingMailbox<T> {
        final List<String> atSend = new CopyOnWriteArrayList<>();

        Noting(Mailbox<T> delegate) {
            super(delegate);
        }

        @Override
        public String send(T body, SendOptions options) {
            atSend.add(String.valueOf(CORRELATION.get()));
            return super.send(body, options.withAttribute("corr", "reply-of-" + CORRELATION.get()));
        }

        @Override
        public Mailbox<T> fenced(long epoch) {
            throw new UnsupportedOperationException();
        }
    }

    @Test
    @DisplayName("a runner's handler and the result it sends run inside the interceptor; a client completes calls inside it")
    void handlerReplyAndDeliveryRunInside() throws Exception {
        List<String> runnerSaw = new CopyOnWriteArrayList<>();
        List<String> clientSaw = new CopyOnWriteArrayList<>();
        List<String> inHandler = new CopyOnWriteArrayList<>();
        Mailbox<MainLoopRequest<Order>> requests = InMemoryMailbox.builder("mi-req", Shop.REQUESTS).build();
        Noting<MainLoopResult<Quote>> replies = new Noting<>(InMemoryMailbox.builder("mi-reply", Shop.RESULTS).build());
        Mailbox<MainLoopRequest<Order>> tagged = new ForwardingMailbox<>(requests) {
            @Override
            public String send(MainLoopRequest<Order> body, SendOptions options) {
                return super.send(body, options.withAttribute("corr", "c-1"));
            }

            @Override
            public Mailbox<MainLoopRequest<Order>> fenced(long epoch) {
                throw new UnsupportedOperationException();
            }
        };
        try (MainLoop<Order, Quote> loop = MainLoop.<Order, Quote>builder(requests, r -> {
                    inHandler.add(CORRELATION.get());
                    return Shop.price(r.body());
                }).replyTo(name -> replies).waitTime(Duration.ofMillis(100))
                .interceptor(correlating(runnerSaw)).build();
             MainLoopClient<Order, Quote> client = MainLoopClient.<Order, Quote>builder(tagged, name -> replies)
                     .responseMailboxName("mi-reply").cleanup(m -> { }).receiveWait(Duration.ofMillis(200))
                     .interceptor(correlating(clientSaw)).build()) {
            CompletableFuture<Quote> call = client.call(new Order("fig", 2));
            // registered before the runner has run, so this stage runs on the thread that completes the call
            CompletableFuture<String> completedIn = call.thenApply(q -> String.valueOf(CORRELATION.get()));
            assertThat(loop.run(1)).isEqualTo(1);

            assertThat(completedIn.get(30, TimeUnit.SECONDS)).isEqualTo("mi-reply:reply-of-mi-req:c-1");
            assertThat(call.get().cents()).isEqualTo(250);
            assertThat(inHandler).containsExactly("mi-req:c-1");
            assertThat(replies.atSend).containsExactly("mi-req:c-1");
            assertThat(runnerSaw).hasSize(1).allMatch(s -> s.startsWith("mi-req:"));
            assertThat(clientSaw).hasSize(1).allMatch(s -> s.startsWith("mi-reply:"));
        }
        assertThat(CORRELATION.get()).isNull();
    }

    @Test
    @DisplayName("without an interceptor the work runs as before")
    void noneRunsTheWork() {
        List<String> ran = new CopyOnWriteArrayList<>();
        MessageInterceptor.NONE.intercept("m", null, () -> ran.add("yes"));
        assertThat(ran).containsExactly("yes");
    }
}
