package dev.mailbox.sqs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.api.Codec;
import dev.mailbox.api.FencedException;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.model.DeleteMessageRequest;
import software.amazon.awssdk.services.sqs.model.ReceiveMessageResponse;

/** What the SQS fence is beyond the contract: one object's, and how it meets calls already under way. */
class SqsFencingTest {

    private static final ReceiveOptions WAIT = ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(5));
    private static final ReceiveOptions HIDE_LONG = WAIT.withVisibilityTimeout(Duration.ofMinutes(10));

    private final InterceptedClient sqs = new InterceptedClient();
    private final List<SqsMailbox<?>> made = new ArrayList<>();

    @AfterEach
    void cleanUp() {
        sqs.beforeSending(r -> { });
        sqs.afterAnswer(r -> { });
        for (SqsMailbox<?> m : made) {
            m.close();
            try {
                sqs.client().deleteQueue(r -> r.queueUrl(m.queueUrl()));
            } catch (RuntimeException ignored) {
                // a second object on a queue already deleted
            }
        }
        sqs.close();
    }

    private SqsMailbox<String> mailbox(String hint) {
        SqsMailbox<String> m = SqsMailbox.builder(hint + "-" + UUID.randomUUID().toString().substring(0, 8), Codec.utf8())
                .client(sqs.client()).createIfMissing(true).build();
        made.add(m);
        return m;
    }

    private SqsMailbox<String> reopen(SqsMailbox<String> m) {
        SqsMailbox<String> other = SqsMailbox.builder(m.name(), Codec.utf8()).client(sqs.client()).build();
        made.add(other);
        return other;
    }

    @Test
    @DisplayName("the fence is the object's: another SqsMailbox on the queue keeps its own, as atomicFencing()=false says")
    void fencePerObject() {
        SqsMailbox<String> m = mailbox("fence");
        SqsMailbox<String> other = reopen(m);
        m.sendBatch(List.of("a", "b"));
        assertThat(m.capabilities().atomicFencing()).isFalse();

        assertThat(m.fenced(2).receive(WAIT)).hasSize(1);

        assertThatThrownBy(() -> m.fenced(1).receive(WAIT)).isInstanceOfSatisfying(FencedException.class, e -> {
            assertThat(e.epoch()).isEqualTo(1);
            assertThat(e.fence()).isEqualTo(2);
        });
        List<Message<String>> throughOther = other.fenced(1).receive(WAIT);
        assertThat(throughOther).as("epoch 1 through the other object, whose fence is its own").hasSize(1);
        other.fenced(1).acknowledge(throughOther.get(0).receiptHandle());
        assertThat(m.approximateCount()).isEqualTo(1);
    }

    @Test
    @DisplayName("a receive whose messages arrive after the fence rose hands them back at once and throws FencedException")
    void receiveRacedWithRise() {
        SqsMailbox<String> m = mailbox("race");
        String id = m.send("x");
        Mailbox<String> old = m.fenced(1);
        Mailbox<String> successor = m.fenced(2);
        AtomicReference<List<Message<String>>> successorSaw = new AtomicReference<>();
        sqs.afterAnswer(response -> {
            if (response instanceof ReceiveMessageResponse r && r.hasMessages() && !r.messages().isEmpty()
                    && successorSaw.get() == null) {
                // SQS has handed the message to the old holder's receive, which has not seen it yet: the
                // successor starts now (and finds nothing, since the message is in flight)
                successorSaw.set(successor.receive());
            }
        });

        assertThatThrownBy(() -> old.receive(HIDE_LONG)).isInstanceOfSatisfying(FencedException.class, e -> {
            assertThat(e.epoch()).isEqualTo(1);
            assertThat(e.fence()).isEqualTo(2);
        });
        assertThat(successorSaw.get()).as("the successor's receive ran during the old holder's").isEmpty();

        // visible again at once, not after the ten minutes the old holder asked for
        List<Message<String>> again = successor.receive(WAIT);
        assertThat(again).hasSize(1);
        assertThat(again.get(0).id()).isEqualTo(id);
        assertThat(again.get(0).deliveryCount()).as("the handed-back delivery counts").isEqualTo(2);
    }

    @Test
    @DisplayName("a fence rise waits for an acknowledge already under way under the older epoch, then refuses that epoch")
    void riseWaitsForCallsUnderWay() throws Exception {
        SqsMailbox<String> m = mailbox("underway");
        m.send("x");
        Message<String> held = m.fenced(1).receive(HIDE_LONG).get(0);
        CountDownLatch deleteLeaving = new CountDownLatch(1);
        CountDownLatch letGo = new CountDownLatch(1);
        sqs.beforeSending(request -> {
            if (request instanceof DeleteMessageRequest) {
                deleteLeaving.countDown();
                await(letGo);
            }
        });
        Background<Void> acknowledge = inBackground("ack", () -> {
            held.acknowledge();
            return null;
        });
        assertThat(deleteLeaving.await(30, TimeUnit.SECONDS)).isTrue();

        Background<List<Message<String>>> rise = inBackground("rise", () -> m.fenced(2).receive());
        awaitWaitingForFence(rise);
        assertThat(rise.result()).as("the epoch 2 receive, while the epoch 1 acknowledge is under way").isNotDone();

        letGo.countDown();
        acknowledge.result().get(30, TimeUnit.SECONDS);
        assertThat(rise.result().get(30, TimeUnit.SECONDS)).isEmpty();
        assertThat(m.approximateCount()).as("the acknowledge admitted under epoch 1 went through").isZero();
        assertThatThrownBy(() -> m.fenced(1).receive()).isInstanceOf(FencedException.class);
    }

    /** A call running on a thread of its own. */
    private record Background<R>(Thread thread, CompletableFuture<R> result) {
    }

    /** Waits until the call's thread is parked on the fence's write lock, or the call finished (which fails the test). */
    private static void awaitWaitingForFence(Background<?> call) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() - deadline < 0 && !call.result().isDone()) {
            for (StackTraceElement frame : call.thread().getStackTrace()) {
                if (frame.getClassName().endsWith("ReentrantReadWriteLock$WriteLock") && frame.getMethodName().equals("lock")) {
                    return;
                }
            }
            Thread.onSpinWait();
        }
    }

    private static <R> Background<R> inBackground(String name, java.util.concurrent.Callable<R> call) {
        CompletableFuture<R> result = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                result.complete(call.call());
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        }, "fencing-test-" + name);
        t.setDaemon(true);
        t.start();
        return new Background<>(t, result);
    }

    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(30, TimeUnit.SECONDS)) {
                throw new AssertionError("the test never let the request go");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
