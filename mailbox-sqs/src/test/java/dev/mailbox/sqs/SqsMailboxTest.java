package dev.mailbox.sqs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.api.Codec;
import dev.mailbox.api.MailboxException;
import dev.mailbox.api.MailboxUnavailableException;
import dev.mailbox.api.Message;
import dev.mailbox.api.MessageTooLargeException;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import dev.mailbox.api.SerializationException;
import dev.mailbox.json.JsonCodec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.BatchResultErrorEntry;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchResponse;
import software.amazon.awssdk.services.sqs.model.ReceiveMessageRequest;
import software.amazon.awssdk.services.sqs.model.ReceiveMessageResponse;

class SqsMailboxTest {

    /** Records every SQS operation that leaves the client. */
    private final List<String> calls = new CopyOnWriteArrayList<>();
    private final SqsClient counted = SqsClient.builder()
            .endpointOverride(SharedElasticMq.endpoint())
            .region(Region.US_EAST_1)
            .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
            .httpClientBuilder(UrlConnectionHttpClient.builder())
            .overrideConfiguration(c -> c.addExecutionInterceptor(new ExecutionInterceptor() {
                @Override
                public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
                    calls.add(context.request().getClass().getSimpleName());
                }
            }))
            .build();
    private final List<SqsMailbox<?>> made = new ArrayList<>();

    @AfterEach
    void cleanUp() {
        for (SqsMailbox<?> m : made) {
            m.close();
            counted.deleteQueue(r -> r.queueUrl(m.queueUrl()));
        }
        counted.close();
    }

    private <T> SqsMailbox<T> mailbox(String hint, Codec<T> codec) {
        SqsMailbox<T> m = SqsMailbox.builder(hint + "-" + UUID.randomUUID().toString().substring(0, 8), codec)
                .client(counted).createIfMissing(true).build();
        made.add(m);
        return m;
    }

    @Test
    @DisplayName("a batch acknowledge reports a handle AWS calls expired (InvalidParameterValue) as stale, and settles the rest")
    void expiredHandleInBatchIsStale() {
        try (InterceptedClient intercepted = new InterceptedClient()) {
            SqsMailbox<String> m = SqsMailbox.builder("expired-" + UUID.randomUUID().toString().substring(0, 8),
                    Codec.utf8()).client(intercepted.client()).createIfMissing(true).build();
            try {
                m.sendBatch(List.of("a", "b"));
                List<Message<String>> got = new ArrayList<>();
                while (got.size() < 2) {
                    got.addAll(m.receive(ReceiveOptions.defaults().withMaxMessages(10).withWaitTime(Duration.ofSeconds(1))));
                }
                // what AWS answers for an expired handle (always on FIFO queues, and on standard ones after 12 h)
                intercepted.rewriteAnswer(r -> r instanceof DeleteMessageBatchResponse batch ? batch.toBuilder()
                        .successful(batch.successful().stream().filter(e -> !e.id().equals("1")).toList())
                        .failed(BatchResultErrorEntry.builder().id("1").code("InvalidParameterValue").senderFault(true)
                                .message("Value x for parameter ReceiptHandle is invalid. Reason: The receipt handle has"
                                        + " expired.").build())
                        .build() : r);

                assertThat(m.acknowledgeBatch(got)).containsExactly(got.get(1));
                intercepted.rewriteAnswer(r -> r);
                assertThatThrownBy(got.get(0)::acknowledge).as("the first was settled")
                        .isInstanceOf(ReceiptHandleExpiredException.class);
            } finally {
                m.close();
                intercepted.client().deleteQueue(r -> r.queueUrl(m.queueUrl()));
            }
        }
    }

    @Test
    @DisplayName("a receive waiting when close() is called returns an empty list, and what its long poll got goes back to the others")
    void receiveWaitingAtClose() throws Exception {
        try (InterceptedClient intercepted = new InterceptedClient()) {
            SqsMailbox<String> m = SqsMailbox.builder("closing-" + UUID.randomUUID().toString().substring(0, 8),
                    Codec.utf8()).client(intercepted.client()).createIfMissing(true).build();
            SqsMailbox<String> other = SqsMailbox.builder(m.name(), Codec.utf8()).client(intercepted.client()).build();
            try {
                java.util.concurrent.CountDownLatch polling = new java.util.concurrent.CountDownLatch(1);
                intercepted.beforeSending(r -> {
                    if (r instanceof ReceiveMessageRequest) {
                        polling.countDown();
                    }
                });
                java.util.concurrent.CompletableFuture<List<Message<String>>> waiting =
                        java.util.concurrent.CompletableFuture.supplyAsync(() -> m.receive(ReceiveOptions.defaults()
                                .withWaitTime(Duration.ofSeconds(5)).withVisibilityTimeout(Duration.ofMinutes(5))));
                assertThat(polling.await(5, java.util.concurrent.TimeUnit.SECONDS)).as("the long poll was sent").isTrue();
                intercepted.beforeSending(r -> { });

                m.close();
                other.send("sent after close"); // the long poll under way takes it

                assertThat(waiting.get(10, java.util.concurrent.TimeUnit.SECONDS)).as("the closed mailbox's receive").isEmpty();
                assertThat(other.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(2))))
                        .as("visible again at once, not hidden for 5 minutes").extracting(Message::body)
                        .containsExactly("sent after close");
            } finally {
                m.close();
                other.close();
                intercepted.client().deleteQueue(r -> r.queueUrl(m.queueUrl()));
            }
        }
    }

    @Test
    @DisplayName("an interrupt ends a long-polling receive at once, and what its poll gets afterwards is visible again at once")
    void interruptedLongPoll() throws Exception {
        try (InterceptedClient intercepted = new InterceptedClient()) {
            SqsMailbox<String> m = SqsMailbox.builder("interrupted-" + UUID.randomUUID().toString().substring(0, 8),
                    Codec.utf8()).client(intercepted.client()).createIfMissing(true).build();
            try {
                java.util.concurrent.CountDownLatch polling = new java.util.concurrent.CountDownLatch(1);
                intercepted.beforeSending(r -> {
                    if (r instanceof ReceiveMessageRequest) {
                        polling.countDown();
                    }
                });
                java.util.concurrent.CompletableFuture<Throwable> outcome = new java.util.concurrent.CompletableFuture<>();
                Thread receiver = new Thread(() -> {
                    try {
                        m.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(10))
                                .withVisibilityTimeout(Duration.ofMinutes(5)));
                        outcome.complete(null);
                    } catch (Throwable e) {
                        outcome.complete(Thread.currentThread().isInterrupted() ? e : new AssertionError(
                                "the interrupt was not kept", e));
                    }
                });
                receiver.start();
                assertThat(polling.await(5, java.util.concurrent.TimeUnit.SECONDS)).as("the long poll was sent").isTrue();
                java.util.concurrent.CountDownLatch handedBack = new java.util.concurrent.CountDownLatch(1);
                intercepted.beforeSending(r -> {
                    if (r instanceof software.amazon.awssdk.services.sqs.model.ChangeMessageVisibilityBatchRequest) {
                        handedBack.countDown();
                    }
                });
                long interruptedAt = System.nanoTime();
                receiver.interrupt();

                assertThat(outcome.get(5, java.util.concurrent.TimeUnit.SECONDS)).as("the receive threw")
                        .isInstanceOf(MailboxUnavailableException.class).hasMessageContaining("interrupted");
                assertThat(Duration.ofNanos(System.nanoTime() - interruptedAt)).as("long before the 10 s wait ended")
                        .isLessThan(Duration.ofSeconds(5));
                m.send("sent after the interrupt"); // the poll still under way takes it
                assertThat(handedBack.await(10, java.util.concurrent.TimeUnit.SECONDS)).as("the poll handed it back")
                        .isTrue();

                List<Message<String>> again = m.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(2)));
                assertThat(again).as("visible again at once, not hidden for 5 minutes").extracting(Message::body)
                        .containsExactly("sent after the interrupt");
                assertThat(again.get(0).deliveryCount()).as("the poll that took it counted").isEqualTo(2);
            } finally {
                m.close();
                intercepted.client().deleteQueue(r -> r.queueUrl(m.queueUrl()));
            }
        }
    }

    @Test
    @DisplayName("a receive that does not wait counts the visibility timeout from when it left, so a slow answer cannot make a lapsed handle pass")
    void slowAnswerDoesNotExtendTheHandle() throws Exception {
        try (InterceptedClient intercepted = new InterceptedClient()) {
            SqsMailbox<String> m = SqsMailbox.builder("slow-" + UUID.randomUUID().toString().substring(0, 8),
                    Codec.utf8()).client(intercepted.client()).createIfMissing(true).build();
            try {
                m.send("x");
                intercepted.afterAnswer(r -> { // the answer reaches the mailbox 600 ms after SQS gave it
                    if (r instanceof ReceiveMessageResponse rr && rr.hasMessages() && !rr.messages().isEmpty()) {
                        try {
                            Thread.sleep(600);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                });
                long before = System.nanoTime();
                Message<String> got = m.receive(ReceiveOptions.defaults().withVisibilityTimeout(Duration.ofSeconds(1))).get(0);
                intercepted.afterAnswer(r -> { });
                // SQS's 1 s ended about 1 s after `before`; 250 ms past that the handle has lapsed there
                long lapsed = before + Duration.ofMillis(1_250).toNanos();
                Thread.sleep(Math.max(0, (lapsed - System.nanoTime()) / 1_000_000));
                assertThatThrownBy(() -> got.extendVisibility(Duration.ofMinutes(5)))
                        .isInstanceOf(ReceiptHandleExpiredException.class);
            } finally {
                m.close();
                intercepted.client().deleteQueue(r -> r.queueUrl(m.queueUrl()));
            }
        }
    }

    @Test
    @DisplayName("bad input is refused before any request is made, with nothing sent")
    void refusedBeforeAnyCall() {
        SqsMailbox<String> m = mailbox("bad", Codec.utf8());
        calls.clear();
        Map<String, String> ten = new LinkedHashMap<>();
        for (int i = 0; i < 10; i++) {
            ten.put("a" + i, "v");
        }

        assertThatThrownBy(() -> m.send("x".repeat(256 * 1024 + 1))).isInstanceOf(MessageTooLargeException.class);
        assertThatThrownBy(() -> m.send("x", SendOptions.defaults().withAttribute("bad name", "v")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> m.send("x", SendOptions.defaults().withAttributes(ten).withAttribute("eleventh", "v")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> m.send("x", SendOptions.defaults().withAttribute("k", "nul\u0000")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> m.send("x", SendOptions.defaults().withAttribute(SqsMailbox.ENCODING_ATTRIBUTE, "v")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("reserved");
        assertThatThrownBy(() -> m.sendBatch(List.of("ok", "x".repeat(256 * 1024 + 1))))
                .isInstanceOf(MessageTooLargeException.class);

        assertThat(calls).as("requests sent to SQS").isEmpty();
        assertThat(m.approximateCount()).isZero();
    }

    @Test
    @DisplayName("bytes that are not SQS text travel as base64 and come back unchanged, the marker hidden")
    void binaryBodies() {
        SqsMailbox<byte[]> m = mailbox("binary", Codec.bytes());
        byte[] body = {0, 1, 2, (byte) 0xff, (byte) 0xfe, 'x'};
        m.send(body, SendOptions.defaults().withAttribute("k", "v"));

        Message<byte[]> got = m.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(5))).get(0);
        assertThat(got.body()).containsExactly(body);
        assertThat(got.attributes()).containsExactly(Map.entry("k", "v"));
    }

    @Test
    @DisplayName("a body SQS cannot carry and nine attributes is refused, since base64 needs one more")
    void binaryBodyNeedsAnAttribute() {
        SqsMailbox<byte[]> m = mailbox("binary", Codec.bytes());
        Map<String, String> ten = new LinkedHashMap<>();
        for (int i = 0; i < 10; i++) {
            ten.put("a" + i, "v");
        }
        assertThatThrownBy(() -> m.send(new byte[] {0}, SendOptions.defaults().withAttributes(ten)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(SqsMailbox.ENCODING_ATTRIBUTE);
    }

    @Test
    @DisplayName("a delivery is stale locally once acknowledged, nacked or lapsed, whatever SQS would accept")
    void localStaleness() throws Exception {
        SqsMailbox<String> m = mailbox("stale", Codec.utf8());
        m.send("x");
        Message<String> got = m.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(5))).get(0);
        got.nack(Duration.ofMinutes(5));
        calls.clear();
        assertThatThrownBy(() -> got.extendVisibility(Duration.ofMinutes(1)))
                .isInstanceOf(ReceiptHandleExpiredException.class).hasMessageContaining("nacked");
        assertThat(calls).isEmpty();
    }

    @Test
    @DisplayName("the builder explains a missing queue, refuses a capacity and bad names")
    void builder() {
        String missing = "missing-" + UUID.randomUUID().toString().substring(0, 8);
        assertThatThrownBy(() -> SqsMailbox.builder(missing, Codec.utf8()).client(counted).build())
                .isInstanceOf(MailboxException.class).hasMessageContaining("createIfMissing");
        assertThatThrownBy(() -> SqsMailbox.builder("ok", Codec.utf8()).capacity(10))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no capacity");
        assertThatThrownBy(() -> SqsMailbox.builder("bad name", Codec.utf8()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1 to 80");
        assertThatThrownBy(() -> SqsMailbox.builder("x", Codec.utf8()).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("exactly one of client");

        // the check against the queue's MaximumMessageSize cannot run here: ElasticMQ does not report it
    }

    @Test
    @DisplayName("an undecodable stored body surfaces from body(), not from receive")
    void undecodable() {
        SqsMailbox<String> raw = mailbox("json", Codec.utf8());
        SqsMailbox<Integer> typed = SqsMailbox.builder(raw.name(), JsonCodec.of(Integer.class)).client(counted).build();
        raw.send("not a number");
        Message<Integer> got = typed.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(5))).get(0);
        assertThatThrownBy(got::body).isInstanceOf(SerializationException.class);
        typed.close();
    }
}
