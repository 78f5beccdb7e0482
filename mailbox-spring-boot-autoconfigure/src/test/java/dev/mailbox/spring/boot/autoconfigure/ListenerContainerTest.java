package dev.mailbox.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.mainloop.RetryPolicy;
import dev.mailbox.testkit.ForwardingMailbox;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.reflect.Method;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The listener container's calls on its mailbox, in the order it makes them. */
class ListenerContainerTest {

    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);

    @AfterEach
    void stopTimer() {
        timer.shutdownNow();
    }

    /** Records every settle and extension, and holds the first extension until released. */
    static final class Calls extends ForwardingMailbox<String> {
        final Recorder<String> log = new Recorder<>();
        final CountDownLatch extensionStarted = new CountDownLatch(1);
        final CountDownLatch releaseExtension = new CountDownLatch(1);

        Calls(Mailbox<String> delegate) {
            super(delegate);
        }

        @Override
        public List<Message<String>> receive(ReceiveOptions options) {
            List<Message<String>> out = new ArrayList<>();
            delegate.receive(options).forEach(m -> out.add(new Recorded(m)));
            return out;
        }

        @Override
        public List<Message<String>> acknowledgeBatch(List<? extends Message<String>> messages) {
            List<Message<String>> stale = new ArrayList<>();
            for (Message<String> m : messages) {
                try {
                    m.acknowledge();
                } catch (dev.mailbox.api.ReceiptHandleExpiredException e) {
                    stale.add(m);
                }
            }
            return stale;
        }

        @Override
        public Mailbox<String> fenced(long epoch) {
            throw new UnsupportedOperationException();
        }

        final class Recorded implements Message<String> {
            private final Message<String> m;

            Recorded(Message<String> m) {
                this.m = m;
            }

            @Override
            public String id() {
                return m.id();
            }

            @Override
            public String body() {
                return m.body();
            }

            @Override
            public String receiptHandle() {
                return m.receiptHandle();
            }

            @Override
            public int deliveryCount() {
                return m.deliveryCount();
            }

            @Override
            public Instant enqueuedAt() {
                return m.enqueuedAt();
            }

            @Override
            public Map<String, String> attributes() {
                return m.attributes();
            }

            @Override
            public void acknowledge() {
                log.add("acknowledge");
                m.acknowledge();
            }

            @Override
            public void nack(Duration visibilityTimeout) {
                log.add("nack");
                m.nack(visibilityTimeout);
            }

            @Override
            public void extendVisibility(Duration timeout) {
                log.add("extend");
                extensionStarted.countDown();
                try {
                    releaseExtension.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                log.add("extended");
                try {
                    m.extendVisibility(timeout);
                } catch (RuntimeException stale) {
                    // after a nack on SQS this would have succeeded and undone the backoff
                }
            }
        }
    }

    /** Throws once its message's visibility is being extended. */
    public static final class Failing {
        final CountDownLatch extensionStarted;

        Failing(CountDownLatch extensionStarted) {
            this.extensionStarted = extensionStarted;
        }

        public void on(String body) throws InterruptedException {
            extensionStarted.await(10, TimeUnit.SECONDS);
            throw new IllegalStateException("refused " + body);
        }
    }

    @Test
    void noExtensionReachesTheMailboxAfterTheMessageIsNacked() throws Exception {
        InMemoryMailbox<String> real = InMemoryMailbox.<String>builder("orders", Codec.utf8()).build();
        Calls mailbox = new Calls(real);
        Method method = Failing.class.getMethod("on", String.class);
        ListenerContainer<String> container = new ListenerContainer<>(mailbox, new Failing(mailbox.extensionStarted),
                method, false, 1, 1, Duration.ofMillis(300), Duration.ofMillis(200),
                RetryPolicy.defaults().withBackoff(Duration.ofSeconds(5), 1, Duration.ofSeconds(5)), timer,
                new SimpleMeterRegistry(), "test listener");
        mailbox.send("o-1");
        container.start(0);
        try {
            // the method threw while the extension was under way: the nack must wait for it
            try {
                mailbox.log.await(l -> l.contains("nack"), Duration.ofSeconds(1), "a nack");
            } catch (AssertionError notYet) {
                // what should happen: the nack waits for the extension
            }
            mailbox.releaseExtension.countDown();
            List<String> log = mailbox.log.await(l -> l.contains("nack"), Duration.ofSeconds(10), "a nack");
            assertThat(log).as("calls on the message").containsSubsequence("extend", "extended", "nack");
            assertThat(log.subList(log.indexOf("nack"), log.size())).doesNotContain("extend", "extended");
        } finally {
            container.stop(Duration.ZERO);
        }
        // the nack kept its backoff: the message is not visible yet
        assertThat(real.receive(ReceiveOptions.defaults())).isEmpty();
    }
}
