package dev.mailbox.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.mailbox.api.AttributeValue;
import dev.mailbox.api.Codec;
import dev.mailbox.api.FencedException;
import dev.mailbox.api.Limits;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxCapabilities;
import dev.mailbox.api.MailboxClosedException;
import dev.mailbox.api.MailboxException;
import dev.mailbox.api.MailboxFullException;
import dev.mailbox.api.Message;
import dev.mailbox.api.MessageTooLargeException;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.api.SendOptions;
import dev.mailbox.api.SerializationException;
import dev.mailbox.json.JsonCodec;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The Mailbox compatibility kit: the contract of {@link Mailbox} and {@link Message} as tests. A
 * backend runs all of it by extending this class and implementing {@link #createMailbox(MailboxSpec)}:
 *
 * <pre>{@code
 * class RedisMailboxContractTest extends MailboxContract {
 *     @Override
 *     protected <T> Mailbox<T> createMailbox(MailboxSpec<T> spec) {
 *         return RedisMailbox.builder(spec.name(), spec.codec()).client(redis)...build();
 *     }
 * }
 * }</pre>
 *
 * <p>Where backends may differ the tests read the mailbox's {@link MailboxCapabilities} and check
 * the rule the backend declares. A test is skipped only where a backend declares it cannot do what
 * the test needs (or does not implement an optional hook), and then with a message saying why; JUnit
 * reports it as skipped, never as passed.
 *
 * <h2>What each group needs</h2>
 * <ul>
 *   <li><b>Acting by receipt handle</b> ({@link Mailbox#acknowledge(String)}, {@link Mailbox#nack(String,
 *       Duration)}, {@link Mailbox#extendVisibility(String, Duration)}): a stale handle is refused with
 *       {@link ReceiptHandleExpiredException} exactly as the message's own methods are (acknowledge only
 *       where {@link MailboxCapabilities#detectsStaleAcknowledge()}; nack and extend always). The
 *       strings {@code ""} and {@code "not a receipt handle"} must be refused with
 *       {@link IllegalArgumentException}, so a backend whose handles are opaque needs at least a
 *       syntactic check. The test that a handle works from another object of the same queue needs
 *       {@link #reopen(MailboxSpec)}.</li>
 *   <li><b>Fencing</b> ({@link Mailbox#fenced(long)}): every backend, through one mailbox object. A
 *       receive under any accepted epoch raises the fence, even if it finds nothing. Two tests need
 *       {@link MailboxCapabilities#atomicFencing()}: a receive already waiting when the fence rises must
 *       not take a message afterwards (it throws {@link FencedException} or returns empty), and a fence
 *       raised through one object refuses calls through another (this one also needs
 *       {@link #reopen(MailboxSpec)}).</li>
 *   <li><b>Deduplication</b> ({@link SendOptions#withDeduplicationId(String)}): every backend, through
 *       one mailbox object, including batches (message {@code i} under {@code id/i}) and concurrent
 *       senders. The test that the id is forgotten after {@link Limits#DEDUPLICATION_WINDOW} runs only
 *       where {@link #hasManualClock()}; the cross-object test needs
 *       {@link MailboxCapabilities#durableDeduplication()} and {@link #reopen(MailboxSpec)}; the test
 *       that a duplicate needs no room needs {@link MailboxCapabilities#capacity()}.</li>
 *   <li><b>FIFO mailboxes</b> ({@link FifoContract}): every backend whose {@link #createMailbox} makes a
 *       mailbox that declares {@link MailboxCapabilities#fifo()} when the spec carries
 *       {@link MailboxSpec#fifo() FIFO options} (a backend without FIFO mailboxes may ignore them: the group is
 *       then skipped, saying so). Includes a model-checked property test of 500 random histories; the
 *       deduplication-window test needs {@link #hasManualClock()}.</li>
 *   <li><b>Fairness</b> ({@link FairnessContract}): standard mailboxes that declare
 *       {@link MailboxCapabilities#fairness()}; the tests that compare with visibility order also need
 *       {@link MailboxCapabilities#visibilityOrder()}.</li>
 *   <li><b>Late acknowledgement</b> ({@link LateAcknowledgementContract}): mailboxes that declare
 *       {@link MailboxCapabilities#lateAcknowledge()}.</li>
 * </ul>
 *
 * <p><b>Time.</b> Tests that need time to pass call {@link #elapse(Duration)}: by default it sleeps
 * (a real server keeps its own time), while a backend on a manual clock overrides it to move the
 * clock, and {@link #patience()} to zero, so its run takes no wall-clock time at all. Tests that need
 * a receive to be blocked before they act call {@link #awaitBlockedInReceive(Thread)} rather than
 * sleeping.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
public abstract class MailboxContract {

    /** Text that the kit's codec refuses to encode. */
    protected static final String UNENCODABLE = "!unencodable";
    /** Text that the kit's codec encodes but refuses to decode. */
    protected static final String POISON = "!poison";

    /** Strings as UTF-8, except that {@link #UNENCODABLE} cannot be encoded nor {@link #POISON} decoded. */
    protected static final Codec<String> TEXT = new Codec<>() {
        @Override
        public byte[] encode(String value) {
            if (value.startsWith(UNENCODABLE)) {
                throw new SerializationException("the kit's codec refuses to encode '" + value + "'", null);
            }
            return value.getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public String decode(byte[] bytes) {
            String value = new String(bytes, StandardCharsets.UTF_8);
            if (value.startsWith(POISON)) {
                throw new SerializationException("the kit's codec refuses to decode '" + value + "'", null);
            }
            return value;
        }

        @Override
        public String toString() {
            return "MailboxContract.TEXT";
        }
    };

    /** A typed body with nested records, a list, java.time and an Optional. */
    public record Order(String id, List<Line> lines, Instant placedAt, LocalDate deliverOn,
                        Optional<String> note) {
    }

    /** A line of an {@link Order}. */
    public record Line(String sku, int quantity, BigDecimal price) {
    }

    /** A timeout that must not lapse during a test. */
    private static final Duration LONG = Duration.ofMinutes(10);
    /** How long a blocked receive is allowed to wait; much longer than any test waits for it. */
    private static final Duration LONG_WAIT = Duration.ofSeconds(60);
    /** How long the test itself waits, in real time, for something that must happen. */
    private static final Duration REAL_TIMEOUT = Duration.ofSeconds(30);

    private final List<Mailbox<?>> created = new CopyOnWriteArrayList<>();
    private final List<Thread> receivers = new CopyOnWriteArrayList<>();

    /**
     * Creates a new mailbox as the spec says. Called several times per test, always with a new name.
     *
     * @param spec name, codec, and optionally redrive policy, capacity and size limit
     * @param <T>  the body type
     * @return the mailbox
     */
    protected abstract <T> Mailbox<T> createMailbox(MailboxSpec<T> spec);

    /**
     * Lets {@code duration} of the backend's time pass. The default sleeps for it plus a 100 ms
     * margin; a backend on a manual clock moves the clock instead.
     *
     * @param duration how long
     */
    protected void elapse(Duration duration) {
        try {
            Thread.sleep(duration.plusMillis(100).toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /**
     * How long a receive that expects messages may wait for them: backends with eventually consistent
     * reads need a moment. Zero for backends where a sent message is visible at once.
     *
     * @return the default, 5 seconds
     */
    protected Duration patience() {
        return Duration.ofSeconds(5);
    }

    /**
     * The unit of time tests use for delays and visibility timeouts. At least the backend's time
     * granularity.
     *
     * @return the default, one second
     */
    protected Duration tick() {
        return Duration.ofSeconds(1);
    }

    /**
     * The backend's current wall-clock time, to check {@link Message#enqueuedAt()}.
     *
     * @return the default, {@link Instant#now()}
     */
    protected Instant backendNow() {
        return Instant.now();
    }

    /**
     * Waits until {@code thread} is blocked inside a receive. The default waits (up to 5 seconds) for
     * the thread to park; a backend whose receive blocks in a socket read (where the thread stays
     * RUNNABLE) should override this with a precise check, such as asking the server for its blocked
     * clients.
     *
     * @param thread the thread running the receive
     */
    protected void awaitBlockedInReceive(Thread thread) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() - deadline < 0) {
            Thread.State state = thread.getState();
            if (state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING
                    || state == Thread.State.TERMINATED) {
                return;
            }
            Thread.onSpinWait();
            Thread.yield();
        }
    }

    /**
     * Removes a mailbox a test created. The default purges and closes it, ignoring failures.
     *
     * @param mailbox the mailbox
     */
    protected void destroy(Mailbox<?> mailbox) {
        try {
            mailbox.purge();
        } catch (RuntimeException ignored) {
            // already closed, or the test broke it on purpose
        }
        mailbox.close();
    }

    /**
     * Opens another mailbox object on the queue that {@link #createMailbox(MailboxSpec)} made for
     * {@code spec}, as a second process (or the same one after a restart) would: a separate object with
     * its own resources, sharing the queue's messages, receipt handles, fence and deduplication ids as
     * far as the backend keeps them with the messages. Closing either object must not close the other.
     * The kit calls it after {@code createMailbox(spec)} and destroys what it returns after the test, like
     * the first object.
     *
     * <p>The default returns empty: the tests that need a second object are then skipped, saying so.
     * Redis and SQS build a second mailbox of the same name on the same server.
     *
     * @param spec the spec the queue was created with
     * @param <T>  the body type
     * @return a second object on the same queue, or empty if the backend cannot open one
     */
    protected <T> Optional<Mailbox<T>> reopen(MailboxSpec<T> spec) {
        return Optional.empty();
    }

    /**
     * Whether {@link #elapse(Duration)} moves a manual clock rather than sleeping. Tests that need a long
     * span of the backend's time (the five-minute {@link Limits#DEDUPLICATION_WINDOW}) run only then.
     *
     * @return the default, false
     */
    protected boolean hasManualClock() {
        return false;
    }

    @AfterEach
    void destroyMailboxes() throws InterruptedException {
        for (Mailbox<?> m : created) {
            destroy(m);
        }
        for (Thread t : receivers) {
            t.join(REAL_TIMEOUT.toMillis());
        }
    }

    // ------------------------------------------------------------------ helpers

    /**
     * @param spec what to create
     * @param <T>  the body type
     * @return a mailbox that is destroyed after the test
     */
    protected final <T> Mailbox<T> newMailbox(MailboxSpec<T> spec) {
        Mailbox<T> m = createMailbox(spec);
        created.add(m);
        return m;
    }

    /**
     * @param spec the spec a mailbox was created with
     * @param <T>  the body type
     * @return a second object on its queue, destroyed after the test; the test is skipped, saying why,
     *         if the backend does not provide one
     */
    private <T> Mailbox<T> secondObject(MailboxSpec<T> spec) {
        Optional<Mailbox<T>> other = reopen(spec);
        Assumptions.assumeTrue(other.isPresent(), () -> getClass().getSimpleName() + " does not override"
                + " reopen(MailboxSpec), so no second mailbox object on the same queue can be opened");
        created.add(other.get());
        return other.get();
    }

    /**
     * Destroys a mailbox a test made before the test ends (the property tests make many).
     *
     * @param mailbox a mailbox from {@link #newMailbox}
     */
    final void discard(Mailbox<?> mailbox) {
        if (created.remove(mailbox)) {
            destroy(mailbox);
        }
    }

    /**
     * @param spec the spec a mailbox was created with
     * @param <T>  the body type
     * @return a second object on its queue, destroyed after the test, or empty if the backend has none
     */
    final <T> Optional<Mailbox<T>> secondObjectIfAny(MailboxSpec<T> spec) {
        Optional<Mailbox<T>> other = reopen(spec);
        other.ifPresent(created::add);
        return other;
    }

    /** @return a fresh mailbox of strings with the kit's codec */
    protected final Mailbox<String> newTextMailbox() {
        return newMailbox(MailboxSpec.of(uniqueName("text"), TEXT));
    }

    /**
     * @param hint a readable part
     * @return a mailbox name no other test uses
     */
    protected static String uniqueName(String hint) {
        return "tck-" + hint + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private Duration ticks(long n) {
        return tick().multipliedBy(n);
    }

    private static ReceiveOptions visibility(Duration timeout) {
        return ReceiveOptions.defaults().withVisibilityTimeout(timeout);
    }

    private <T> Message<T> receiveOne(Mailbox<T> m, Duration visibilityTimeout) {
        List<Message<T>> got = m.receive(visibility(visibilityTimeout).withWaitTime(patience()));
        assertThat(got).as("one message received from %s", m.name()).hasSize(1);
        return got.get(0);
    }

    private <T> Message<T> receiveOne(Mailbox<T> m) {
        return receiveOne(m, LONG);
    }

    /** Receives until {@code n} messages arrived (or nothing more comes within patience), in arrival order. */
    private <T> List<Message<T>> receiveAll(Mailbox<T> m, int n, Duration visibilityTimeout) {
        List<Message<T>> all = new ArrayList<>();
        long deadline = System.nanoTime() + patience().toNanos();
        Duration wait = patience().isZero() ? Duration.ZERO : Duration.ofSeconds(1);
        while (all.size() < n) {
            int want = Math.min(Limits.MAX_BATCH, n - all.size());
            List<Message<T>> batch = m.receive(visibility(visibilityTimeout).withMaxMessages(want).withWaitTime(wait));
            if (batch.isEmpty() && System.nanoTime() - deadline >= 0) {
                break;
            }
            all.addAll(batch);
        }
        return all;
    }

    private static void assertNothingVisible(Mailbox<?> m) {
        assertThat(m.receive(ReceiveOptions.defaults().withMaxMessages(10)))
                .as("messages visible in %s", m.name()).isEmpty();
    }

    private void assertCount(Mailbox<?> m, long expected) {
        if (m.capabilities().exactCount()) {
            assertThat(m.approximateCount()).as("count of %s", m.name()).isEqualTo(expected);
            return;
        }
        long deadline = System.nanoTime() + patience().plusSeconds(60).toNanos();
        long last;
        while ((last = m.approximateCount()) != expected && System.nanoTime() - deadline < 0) {
            Thread.onSpinWait();
            pause();
        }
        assertThat(last).as("count of %s (eventually)", m.name()).isEqualTo(expected);
    }

    private static void pause() {
        try {
            Thread.sleep(100);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /**
     * Acknowledging with a stale handle is refused; where the backend cannot always tell, it may
     * instead return normally. Either way the callers check that nothing was deleted.
     */
    private static void assertStaleAcknowledge(Mailbox<?> m, Message<?> stale) {
        if (m.capabilities().detectsStaleAcknowledge()) {
            assertThatThrownBy(stale::acknowledge).isInstanceOf(ReceiptHandleExpiredException.class)
                    .hasMessageContaining(stale.receiptHandle());
        } else {
            try {
                stale.acknowledge();
            } catch (ReceiptHandleExpiredException refused) {
                // detected this time; allowed
            }
        }
    }

    /** Asserts that a call is refused by the fence, with the exception the contract promises. */
    private static void assertFenced(ThrowingCallable call, Mailbox<?> m, long epoch, long fence) {
        assertThatThrownBy(call).as("a call under epoch %d after epoch %d was used", epoch, fence)
                .isInstanceOf(FencedException.class)
                .isInstanceOf(MailboxException.class)
                .hasMessageContaining(m.name())
                .hasMessageContaining("epoch " + epoch)
                .hasMessageContaining("epoch " + fence)
                .satisfies(e -> {
                    FencedException f = (FencedException) e;
                    assertThat(f.epoch()).as("refused epoch").isEqualTo(epoch);
                    assertThat(f.fence()).as("fence").isEqualTo(fence);
                    assertThat(f.isRetryable()).as("retryable").isFalse();
                });
    }

    private static SendOptions deduplicated(String id) {
        return SendOptions.defaults().withDeduplicationId(id);
    }

    /** A receive running on its own thread. */
    private record Pending<T>(Thread thread, CompletableFuture<List<Message<T>>> result) {
        List<Message<T>> await() {
            try {
                return result.get(REAL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (Exception e) {
                throw new AssertionError("the background receive did not return within " + REAL_TIMEOUT, e);
            }
        }
    }

    private <T> Pending<T> receiveInBackground(Mailbox<T> m, ReceiveOptions options) {
        CompletableFuture<List<Message<T>>> result = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                result.complete(m.receive(options));
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        }, "tck-receiver-" + m.name());
        t.setDaemon(true);
        receivers.add(t);
        t.start();
        awaitBlockedInReceive(t);
        return new Pending<>(t, result);
    }

    private static Order sampleOrder(String id) {
        return new Order(id,
                List.of(new Line("sku-1", 2, new BigDecimal("19.99")), new Line("sku-2", 1, new BigDecimal("5.00"))),
                Instant.parse("2026-11-21T10:15:30.123456Z"), LocalDate.of(2026, 12, 24), Optional.of("leave at door"));
    }

    // ------------------------------------------------------------------ the contract

    @Nested
    @DisplayName("sending and receiving")
    class SendingAndReceiving {

        @Test
        @DisplayName("a typed body and its attributes arrive exactly as sent")
        void typedRoundTrip() {
            Mailbox<Order> m = newMailbox(MailboxSpec.of(uniqueName("orders"), JsonCodec.of(Order.class)));
            Order order = sampleOrder("o-1");
            m.send(order, SendOptions.defaults().withAttribute("tenant", "acme").withAttribute("trace-id", "t.1"));

            Message<Order> got = receiveOne(m);

            assertThat(got.body()).isEqualTo(order);
            assertThat(got.attributes()).containsExactlyInAnyOrderEntriesOf(Map.of("tenant", "acme", "trace-id", "t.1"));
        }

        @Test
        @DisplayName("typed attributes (String, Number, Binary, custom types) arrive with their types and values, one"
                + " by one and in a batch; attributes() holds the plain strings")
        void typedAttributes() {
            Mailbox<String> m = newTextMailbox();
            SendOptions options = SendOptions.defaults().withAttribute("tenant", "acme")
                    .withAttribute("total", AttributeValue.number("12.50"))
                    .withAttribute("count", AttributeValue.of("Number.int", "-7"))
                    .withAttribute("json", AttributeValue.of("String.json", "{\"a\": [1, 2]}"))
                    .withAttribute("blob", AttributeValue.binary(new byte[] {0, 1, 2, (byte) 0xff}))
                    .withAttribute("png", AttributeValue.ofBinary("Binary.png", new byte[] {(byte) 0x89, 'P', 'N', 'G'}))
                    .withAttribute("braces", "{sqs:Number}1");
            m.send("one", options);
            m.sendBatch(List.of("two", "three"), options);

            List<Message<String>> got = receiveAll(m, 3, LONG);
            assertThat(got).hasSize(3).allSatisfy(msg -> {
                assertThat(msg.typedAttributes()).isEqualTo(options.typedAttributes());
                assertThat(msg.attributes()).isEqualTo(Map.of("tenant", "acme", "braces", "{sqs:Number}1"));
            });
        }

        @Test
        @DisplayName("system attributes come back apart from the attributes, even under an attribute's name, and do"
                + " not count among the ten")
        void systemAttributes() {
            Mailbox<String> m = newTextMailbox();
            Assumptions.assumeTrue(m.capabilities().systemAttributes(), () -> getClass().getSimpleName()
                    + ": the mailbox does not declare MailboxCapabilities.systemAttributes(), so this test is skipped");
            SendOptions options = SendOptions.defaults().withSystemAttribute("SenderId", "alice")
                    .withSystemAttribute("AWSTraceHeader", "Root=1-5759e988-bd862e3fe1be46a994272793");
            for (int i = 0; i < Limits.MAX_ATTRIBUTES - 1; i++) {
                options = options.withAttribute("a" + i, "v" + i);
            }
            options = options.withAttribute("SenderId", AttributeValue.number("42"));
            m.send("x", options);

            Message<String> got = receiveOne(m);
            assertThat(got.systemAttributes()).isEqualTo(Map.of("SenderId", "alice",
                    "AWSTraceHeader", "Root=1-5759e988-bd862e3fe1be46a994272793"));
            assertThat(got.typedAttributes()).isEqualTo(options.typedAttributes()).hasSize(Limits.MAX_ATTRIBUTES);
        }

        @Test
        @DisplayName("a generic body such as List<Order> arrives as sent")
        void genericRoundTrip() {
            Mailbox<List<Order>> m = newMailbox(MailboxSpec.of(uniqueName("order-lists"),
                    JsonCodec.of(new TypeReference<List<Order>>() { })));
            List<Order> orders = List.of(sampleOrder("a"), sampleOrder("b"));
            m.send(orders);

            assertThat(receiveOne(m).body()).isEqualTo(orders).first().isInstanceOf(Order.class);
        }

        @Test
        @DisplayName("send returns a unique id, and the received message carries it")
        void idsAreUniqueAndCarried() {
            Mailbox<String> m = newTextMailbox();
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                ids.add(m.send("m" + i));
            }
            assertThat(new HashSet<>(ids)).hasSize(20);

            List<Message<String>> got = receiveAll(m, 20, LONG);
            Map<String, String> idByBody = got.stream().collect(Collectors.toMap(Message::body, Message::id));
            for (int i = 0; i < 20; i++) {
                assertThat(idByBody.get("m" + i)).isEqualTo(ids.get(i));
            }
        }

        @Test
        @DisplayName("a first delivery has delivery count 1, no attributes and the send time")
        void firstDelivery() {
            Mailbox<String> m = newTextMailbox();
            Instant before = backendNow();
            m.send("hello");
            Instant after = backendNow();

            Message<String> got = receiveOne(m);

            Duration tolerance = Duration.ofSeconds(1).plus(m.capabilities().timeGranularity());
            assertThat(got.deliveryCount()).isEqualTo(1);
            assertThat(got.attributes()).isEmpty();
            assertThat(got.enqueuedAt()).isBetween(before.minus(tolerance), after.plus(tolerance));
            assertThat(got.receiptHandle()).isNotBlank();
        }

        @Test
        @DisplayName("receiving from an empty mailbox without waiting returns an empty list")
        void emptyReceive() {
            Mailbox<String> m = newTextMailbox();
            assertThat(m.receive()).isEmpty();
            assertThat(m.receive(ReceiveOptions.defaults().withMaxMessages(10))).isEmpty();
        }

        @Test
        @DisplayName("a received message is invisible to other receivers")
        void receivedIsInvisible() {
            Mailbox<String> m = newTextMailbox();
            m.send("only");
            receiveOne(m);

            assertNothingVisible(m);
        }

        @Test
        @DisplayName("a receive returns at most maxMessages messages")
        void maxMessages() {
            Mailbox<String> m = newTextMailbox();
            m.sendBatch(IntStream.range(0, 10).mapToObj(i -> "a" + i).toList());
            m.sendBatch(IntStream.range(0, 5).mapToObj(i -> "b" + i).toList());

            List<Message<String>> first = m.receive(ReceiveOptions.defaults().withMaxMessages(10)
                    .withVisibilityTimeout(LONG).withWaitTime(patience()));
            List<Message<String>> three = m.receive(ReceiveOptions.defaults().withMaxMessages(3)
                    .withVisibilityTimeout(LONG).withWaitTime(patience()));

            if (m.capabilities().exactCount()) {
                assertThat(first).hasSize(10);
                assertThat(three).hasSize(3);
            } else {
                assertThat(first).hasSizeBetween(1, 10);
                assertThat(three).hasSizeBetween(1, 3);
            }
            List<Message<String>> rest = receiveAll(m, 15 - first.size() - three.size(), LONG);
            Set<String> bodies = new HashSet<>();
            for (List<Message<String>> batch : List.of(first, three, rest)) {
                batch.forEach(msg -> assertThat(bodies.add(msg.body())).as("duplicate %s", msg.body()).isTrue());
            }
            assertThat(bodies).hasSize(15);
        }

        @Test
        @DisplayName("a batch send stores every message with its own id and the shared attributes")
        void batchSend() {
            Mailbox<String> m = newTextMailbox();
            List<String> bodies = IntStream.range(0, 10).mapToObj(i -> "batch-" + i).toList();
            List<String> ids = m.sendBatch(bodies, SendOptions.defaults().withAttribute("kind", "batch"));

            assertThat(ids).hasSize(10).doesNotHaveDuplicates();
            List<Message<String>> got = receiveAll(m, 10, LONG);
            assertThat(got).extracting(Message::body).containsExactlyInAnyOrderElementsOf(bodies);
            assertThat(got).allSatisfy(msg -> {
                assertThat(msg.attributes()).containsEntry("kind", "batch");
                assertThat(msg.id()).isEqualTo(ids.get(bodies.indexOf(msg.body())));
            });
        }

        @Test
        @DisplayName("the default receive() takes one message")
        void defaultReceive() {
            Mailbox<String> m = newTextMailbox();
            m.sendBatch(List.of("x", "y"));
            assertCount(m, 2);
            List<Message<String>> got = m.receive(ReceiveOptions.defaults().withWaitTime(patience()));
            assertThat(got).hasSize(1);
            assertThat(ReceiveOptions.defaults().visibilityTimeout()).isEqualTo(Duration.ofSeconds(30));
        }
    }

    @Nested
    @DisplayName("receipt handles")
    class ReceiptHandles {

        @Test
        @DisplayName("every delivery gets a new receipt handle")
        void newHandlePerDelivery() {
            Mailbox<String> m = newTextMailbox();
            m.send("x");
            Set<String> handles = new HashSet<>();
            for (int i = 1; i <= 3; i++) {
                Message<String> got = receiveOne(m);
                assertThat(got.deliveryCount()).isEqualTo(i);
                assertThat(handles.add(got.receiptHandle())).as("handle %s reused", got.receiptHandle()).isTrue();
                got.nack();
            }
        }

        @Test
        @DisplayName("acknowledging deletes the message")
        void acknowledgeDeletes() {
            Mailbox<String> m = newTextMailbox();
            m.send("x");
            receiveOne(m).acknowledge();

            assertCount(m, 0);
            assertNothingVisible(m);
        }

        @Test
        @DisplayName("acknowledging twice: the second acknowledge has a stale handle")
        void acknowledgeTwice() {
            Mailbox<String> m = newTextMailbox();
            m.send("x");
            Message<String> got = receiveOne(m);
            got.acknowledge();

            assertStaleAcknowledge(m, got);
            assertCount(m, 0);
        }

        @Test
        @DisplayName("after redelivery the old handle cannot acknowledge, and the new delivery is untouched")
        void oldHandleAfterRedelivery() {
            Mailbox<String> m = newTextMailbox();
            m.send("x");
            Message<String> first = receiveOne(m, tick());
            elapse(tick());
            Message<String> second = receiveOne(m);
            assertThat(second.deliveryCount()).isEqualTo(2);

            assertStaleAcknowledge(m, first);

            assertCount(m, 1);
            assertThatCode(second::acknowledge).doesNotThrowAnyException();
            assertCount(m, 0);
        }

        @Test
        @DisplayName("once the visibility timeout ends the handle cannot nack or extend, nor acknowledge without late acknowledgement")
        void handleStaleAfterExpiry() {
            Mailbox<String> m = newTextMailbox();
            m.send("x");
            Message<String> got = receiveOne(m, tick());
            elapse(tick());

            // with late acknowledgement the handle still deletes it: see LateAcknowledgementContract
            if (m.capabilities().detectsStaleAcknowledge() && !m.capabilities().lateAcknowledge()) {
                assertThatThrownBy(got::acknowledge).isInstanceOf(ReceiptHandleExpiredException.class);
                assertThat(receiveOne(m).deliveryCount()).isEqualTo(2);
            }
            assertThatThrownBy(() -> got.extendVisibility(LONG)).isInstanceOf(ReceiptHandleExpiredException.class);
            assertThatThrownBy(got::nack).isInstanceOf(ReceiptHandleExpiredException.class);
        }

        @Test
        @DisplayName("a stale handle cannot nack: the current delivery stays invisible")
        void staleNack() {
            Mailbox<String> m = newTextMailbox();
            m.send("x");
            Message<String> first = receiveOne(m, tick());
            elapse(tick());
            Message<String> second = receiveOne(m);

            assertThatThrownBy(first::nack).isInstanceOf(ReceiptHandleExpiredException.class);
            assertNothingVisible(m);
            second.acknowledge();
        }

        @Test
        @DisplayName("a stale handle cannot extend the visibility timeout")
        void staleExtend() {
            Mailbox<String> m = newTextMailbox();
            m.send("x");
            Message<String> first = receiveOne(m, tick());
            elapse(tick());
            Message<String> second = receiveOne(m);

            assertThatThrownBy(() -> first.extendVisibility(LONG))
                    .isInstanceOf(ReceiptHandleExpiredException.class);
            assertThatCode(second::acknowledge).doesNotThrowAnyException();
        }

        @Test
        @DisplayName("a batch acknowledge deletes the current deliveries and returns the stale ones")
        void acknowledgeBatch() {
            Mailbox<String> m = newTextMailbox();
            m.sendBatch(List.of("a", "b", "c", "d"));
            List<Message<String>> got = receiveAll(m, 4, LONG);
            assertThat(got).hasSize(4);
            got.get(1).acknowledge();

            List<Message<String>> stale = m.acknowledgeBatch(got);

            if (m.capabilities().detectsStaleAcknowledge()) {
                assertThat(stale).extracting(Message::receiptHandle).containsExactly(got.get(1).receiptHandle());
            }
            assertCount(m, 0);
            assertNothingVisible(m);
            assertThatThrownBy(() -> m.acknowledgeBatch(List.of())).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("between 1 and 10");
        }

        @Test
        @DisplayName("a batch acknowledge holding a message of another mailbox is refused whole, before anything changes")
        void batchWithForeignMessageRefused() {
            Mailbox<String> m = newTextMailbox();
            Mailbox<String> other = newTextMailbox();
            m.send("mine");
            other.send("theirs");
            Message<String> mine = receiveOne(m);
            Message<String> theirs = receiveOne(other);

            assertThatThrownBy(() -> m.acknowledgeBatch(List.of(mine, theirs)))
                    .isInstanceOf(IllegalArgumentException.class);
            assertCount(m, 1);
            assertCount(other, 1);
        }

        @Test
        @DisplayName("a nacked delivery's handle is stale")
        void nackMakesHandleStale() {
            Mailbox<String> m = newTextMailbox();
            m.send("x");
            Message<String> got = receiveOne(m);
            got.nack(LONG);

            assertThatThrownBy(() -> got.extendVisibility(LONG)).isInstanceOf(ReceiptHandleExpiredException.class);
            assertThatThrownBy(got::nack).isInstanceOf(ReceiptHandleExpiredException.class);
            if (m.capabilities().detectsStaleAcknowledge()) {
                assertThatThrownBy(got::acknowledge).isInstanceOf(ReceiptHandleExpiredException.class);
                assertCount(m, 1);
            }
        }

        @Test
        @DisplayName("purging makes the handles of in-flight messages stale")
        void purgeMakesHandlesStale() {
            Mailbox<String> m = newTextMailbox();
            m.send("x");
            Message<String> got = receiveOne(m);
            m.purge();

            assertStaleAcknowledge(m, got);
            assertThatThrownBy(() -> got.extendVisibility(LONG)).isInstanceOf(ReceiptHandleExpiredException.class);
            assertCount(m, 0);
        }
    }

    @Nested
    @DisplayName("visibility timeout")
    class Visibility {

        @Test
        @DisplayName("an unacknowledged message is delivered again when its visibility timeout ends")
        void redeliveredAfterTimeout() {
            Mailbox<String> m = newTextMailbox();
            String id = m.send("x");
            Message<String> first = receiveOne(m, tick());
            elapse(tick());

            Message<String> second = receiveOne(m);

            assertThat(second.id()).isEqualTo(id);
            assertThat(second.body()).isEqualTo("x");
            assertThat(second.deliveryCount()).isEqualTo(2);
            assertThat(second.receiptHandle()).isNotEqualTo(first.receiptHandle());
            assertThat(second.enqueuedAt()).isEqualTo(first.enqueuedAt());
        }

        @Test
        @DisplayName("a message is not delivered again before its visibility timeout ends")
        void notRedeliveredEarly() {
            Mailbox<String> m = newTextMailbox();
            m.send("x");
            receiveOne(m, ticks(4));
            elapse(tick());

            assertNothingVisible(m);
        }

        @Test
        @DisplayName("extending the visibility timeout prevents redelivery and keeps the handle current")
        void extendPreventsRedelivery() {
            Mailbox<String> m = newTextMailbox();
            m.send("x");
            Message<String> got = receiveOne(m, ticks(2));
            got.extendVisibility(ticks(8));
            elapse(ticks(3));

            assertNothingVisible(m);
            assertThatCode(got::acknowledge).doesNotThrowAnyException();
            assertCount(m, 0);
        }

        @Test
        @DisplayName("an extension counts from now, not from the receive")
        void extendCountsFromNow() {
            Mailbox<String> m = newTextMailbox();
            m.send("x");
            Message<String> got = receiveOne(m, ticks(8));
            elapse(tick());
            got.extendVisibility(tick());
            elapse(tick());

            assertThat(receiveOne(m).deliveryCount()).isEqualTo(2);
        }

        @Test
        @DisplayName("nack() makes the message visible again at once, keeping its delivery count")
        void nackZero() {
            Mailbox<String> m = newTextMailbox();
            m.send("x");
            receiveOne(m).nack();

            Message<String> again = receiveOne(m);
            assertThat(again.deliveryCount()).isEqualTo(2);
            assertThat(again.body()).isEqualTo("x");
        }

        @Test
        @DisplayName("nack(t) hides the message for t")
        void nackWithTimeout() {
            Mailbox<String> m = newTextMailbox();
            m.send("x");
            receiveOne(m).nack(ticks(3));
            elapse(tick());
            assertNothingVisible(m);

            elapse(ticks(2));
            assertThat(receiveOne(m).deliveryCount()).isEqualTo(2);
        }

        @Test
        @DisplayName("a visibility timeout of zero leaves the message visible to the next receive")
        void zeroVisibility() {
            Mailbox<String> m = newTextMailbox();
            m.send("x");
            receiveOne(m, Duration.ZERO);

            assertThat(receiveOne(m).deliveryCount()).isEqualTo(2);
        }
    }

    @Nested
    @DisplayName("delays")
    class Delays {

        @Test
        @DisplayName("a delayed message stays invisible until its delay ends")
        void delayed() {
            Mailbox<String> m = newTextMailbox();
            m.send("later", SendOptions.defaults().withDelay(ticks(3)));
            assertNothingVisible(m);
            elapse(tick());
            assertNothingVisible(m);

            elapse(ticks(2));
            Message<String> got = receiveOne(m);
            assertThat(got.body()).isEqualTo("later");
            assertThat(got.deliveryCount()).isEqualTo(1);
        }

        @Test
        @DisplayName("a delayed message does not hold back the messages sent after it")
        void delayDoesNotBlock() {
            Mailbox<String> m = newTextMailbox();
            m.send("later", SendOptions.defaults().withDelay(LONG));
            m.send("now");

            assertThat(receiveOne(m).body()).isEqualTo("now");
            assertNothingVisible(m);
        }

        @Test
        @DisplayName("a delayed batch becomes visible together")
        void delayedBatch() {
            Mailbox<String> m = newTextMailbox();
            m.sendBatch(List.of("a", "b", "c"), SendOptions.defaults().withDelay(ticks(2)));
            assertNothingVisible(m);
            elapse(ticks(2));

            assertThat(receiveAll(m, 3, LONG)).extracting(Message::body).containsExactlyInAnyOrder("a", "b", "c");
        }
    }

    @Nested
    @DisplayName("long polling")
    class LongPolling {

        @Test
        @DisplayName("a waiting receive returns empty when its wait ends")
        void waitEnds() {
            Mailbox<String> m = newTextMailbox();
            Pending<String> pending = receiveInBackground(m, ReceiveOptions.defaults().withWaitTime(ticks(2)));
            assertThat(pending.result()).isNotDone();

            elapse(ticks(2));

            assertThat(pending.await()).isEmpty();
        }

        @Test
        @DisplayName("a waiting receive returns at once when a message is already there")
        void returnsAtOnce() {
            Mailbox<String> m = newTextMailbox();
            m.send("x");
            assertCount(m, 1);

            Pending<String> pending = receiveInBackground(m, ReceiveOptions.defaults().withWaitTime(LONG_WAIT));

            assertThat(pending.await()).extracting(Message::body).containsExactly("x");
        }

        @Test
        @DisplayName("a waiting receive wakes when a message is sent")
        void wakesOnSend() {
            Mailbox<String> m = newTextMailbox();
            Pending<String> pending = receiveInBackground(m, ReceiveOptions.defaults().withWaitTime(LONG_WAIT));

            m.send("wake");

            assertThat(pending.await()).extracting(Message::body).containsExactly("wake");
        }

        @Test
        @DisplayName("a waiting receive wakes when a message is nacked")
        void wakesOnNack() {
            Mailbox<String> m = newTextMailbox();
            m.send("x");
            Message<String> held = receiveOne(m);
            Pending<String> pending = receiveInBackground(m, ReceiveOptions.defaults().withWaitTime(LONG_WAIT));

            held.nack();

            List<Message<String>> got = pending.await();
            assertThat(got).hasSize(1);
            assertThat(got.get(0).deliveryCount()).isEqualTo(2);
        }

        @Test
        @DisplayName("a waiting receive wakes when a visibility timeout ends")
        void wakesOnExpiry() {
            Mailbox<String> m = newTextMailbox();
            m.send("x");
            receiveOne(m, tick());
            Pending<String> pending = receiveInBackground(m, ReceiveOptions.defaults().withWaitTime(LONG_WAIT));

            elapse(tick());

            List<Message<String>> got = pending.await();
            assertThat(got).hasSize(1);
            assertThat(got.get(0).deliveryCount()).isEqualTo(2);
        }

        @Test
        @DisplayName("a waiting receive wakes when a delay ends")
        void wakesOnDelayEnd() {
            Mailbox<String> m = newTextMailbox();
            m.send("later", SendOptions.defaults().withDelay(tick()));
            Pending<String> pending = receiveInBackground(m, ReceiveOptions.defaults().withWaitTime(LONG_WAIT));

            elapse(tick());

            assertThat(pending.await()).extracting(Message::body).containsExactly("later");
        }

        @Test
        @DisplayName("several waiting receivers each get a different message")
        void severalWaiters() {
            Mailbox<String> m = newTextMailbox();
            List<Pending<String>> pending = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                pending.add(receiveInBackground(m, visibility(LONG).withWaitTime(LONG_WAIT)));
            }

            m.sendBatch(List.of("a", "b", "c"));

            List<String> bodies = new ArrayList<>();
            for (Pending<String> p : pending) {
                List<Message<String>> got = p.await();
                assertThat(got).hasSize(1);
                bodies.add(got.get(0).body());
            }
            assertThat(bodies).containsExactlyInAnyOrder("a", "b", "c");
        }

        @Test
        @DisplayName("closing the mailbox wakes waiting receivers, which return empty")
        void closeWakesReceivers() {
            Mailbox<String> m = newTextMailbox();
            Pending<String> pending = receiveInBackground(m, ReceiveOptions.defaults().withWaitTime(LONG_WAIT));

            m.close();

            assertThat(pending.await()).isEmpty();
        }
    }

    @Nested
    @DisplayName("order")
    class Ordering {

        @Test
        @DisplayName("messages arrive in send order where the backend claims visibility order, and all arrive otherwise")
        void sendOrder() {
            Mailbox<String> m = newTextMailbox();
            List<String> sent = IntStream.range(0, 25).mapToObj(i -> "m" + i).toList();
            sent.forEach(m::send);

            List<String> got = new ArrayList<>();
            for (int i = 0; i < 25; i++) {
                Message<String> msg = receiveOne(m);
                got.add(msg.body());
                msg.acknowledge();
            }
            if (m.capabilities().visibilityOrder()) {
                assertThat(got).containsExactlyElementsOf(sent);
            } else {
                assertThat(got).containsExactlyInAnyOrderElementsOf(sent);
            }
        }

        @Test
        @DisplayName("batch receives keep the order across and within batches where visibility order is claimed")
        void batchOrder() {
            Mailbox<String> m = newTextMailbox();
            List<String> sent = IntStream.range(0, 25).mapToObj(i -> "m" + i).toList();
            for (int i = 0; i < 25; i += 5) {
                m.sendBatch(sent.subList(i, i + 5));
            }

            List<String> got = receiveAll(m, 25, LONG).stream().map(Message::body).toList();
            if (m.capabilities().visibilityOrder()) {
                assertThat(got).containsExactlyElementsOf(sent);
            } else {
                assertThat(got).containsExactlyInAnyOrderElementsOf(sent);
            }
        }

        @Test
        @DisplayName("a nacked message goes behind the messages already waiting where visibility order is claimed")
        void nackGoesBehind() {
            Mailbox<String> m = newTextMailbox();
            m.send("a");
            m.send("b");
            Message<String> a = receiveOne(m);
            assertThat(a.body()).isEqualTo(m.capabilities().visibilityOrder() ? "a" : a.body());
            a.nack();

            List<String> next = receiveAll(m, 2, LONG).stream().map(Message::body).toList();
            if (m.capabilities().visibilityOrder()) {
                assertThat(next).containsExactly("b", "a");
            } else {
                assertThat(next).containsExactlyInAnyOrder("a", "b");
            }
        }
    }

    @Nested
    @DisplayName("counting and purging")
    class Counting {

        @Test
        @DisplayName("the count includes queued, in-flight and delayed messages")
        void countsEveryState() {
            Mailbox<String> m = newTextMailbox();
            m.send("queued");
            m.send("in flight");
            m.send("delayed", SendOptions.defaults().withDelay(LONG));
            assertCount(m, 3);
            receiveOne(m);

            assertCount(m, 3);
        }

        @Test
        @DisplayName("acknowledging lowers the count; nacking does not")
        void countAfterAckAndNack() {
            Mailbox<String> m = newTextMailbox();
            m.sendBatch(List.of("a", "b"));
            List<Message<String>> got = receiveAll(m, 2, LONG);
            got.get(0).acknowledge();
            assertCount(m, 1);
            got.get(1).nack();
            assertCount(m, 1);
        }

        @Test
        @DisplayName("purge removes queued, in-flight and delayed messages and says how many")
        void purgeEverything() {
            Mailbox<String> m = newTextMailbox();
            m.sendBatch(List.of("a", "b", "c"));
            m.send("delayed", SendOptions.defaults().withDelay(LONG));
            assertCount(m, 4);
            receiveOne(m);

            long purged = m.purge();

            if (m.capabilities().exactCount()) {
                assertThat(purged).isEqualTo(4);
            } else {
                assertThat(purged).isBetween(0L, 4L);
            }
            assertCount(m, 0);
            assertNothingVisible(m);
        }

        @Test
        @DisplayName("purging an empty mailbox removes nothing")
        void purgeEmpty() {
            Mailbox<String> m = newTextMailbox();
            assertThat(m.purge()).isZero();
            assertCount(m, 0);
        }

        @Test
        @DisplayName("purging one mailbox leaves other mailboxes alone")
        void purgeIsolated() {
            Mailbox<String> one = newTextMailbox();
            Mailbox<String> other = newTextMailbox();
            one.send("x");
            other.send("y");
            assertCount(one, 1);

            one.purge();

            assertCount(other, 1);
            assertThat(receiveOne(other).body()).isEqualTo("y");
        }
    }

    @Nested
    @DisplayName("dead letters")
    class DeadLetters {

        @Test
        @DisplayName("after maxReceiveCount deliveries the message moves to the dead-letter mailbox, intact")
        void movesAfterMaxReceives() {
            Mailbox<String> dlq = newMailbox(MailboxSpec.of(uniqueName("dlq"), TEXT));
            Mailbox<String> m = newMailbox(MailboxSpec.of(uniqueName("redrive"), TEXT)
                    .withRedrivePolicy(RedrivePolicy.of(2, dlq)));
            m.send("doomed", SendOptions.defaults().withAttribute("k", "v"));

            receiveOne(m).nack();
            Message<String> second = receiveOne(m);
            assertThat(second.deliveryCount()).isEqualTo(2);
            second.nack();

            assertNothingVisible(m);
            Message<String> dead = receiveOne(dlq);
            assertThat(dead.body()).isEqualTo("doomed");
            assertThat(dead.attributes()).containsEntry("k", "v");
            assertCount(m, 0);
            assertCount(dlq, 1);
        }

        @Test
        @DisplayName("a visibility timeout ending counts as a failed delivery")
        void expiryCounts() {
            Mailbox<String> dlq = newMailbox(MailboxSpec.of(uniqueName("dlq"), TEXT));
            Mailbox<String> m = newMailbox(MailboxSpec.of(uniqueName("redrive"), TEXT)
                    .withRedrivePolicy(RedrivePolicy.of(1, dlq)));
            m.send("slow");
            receiveOne(m, tick());
            elapse(tick());

            assertNothingVisible(m);
            assertThat(receiveOne(dlq).body()).isEqualTo("slow");
        }

        @Test
        @DisplayName("a message acknowledged within its allowance is never dead-lettered")
        void acknowledgedInTime() {
            Mailbox<String> dlq = newMailbox(MailboxSpec.of(uniqueName("dlq"), TEXT));
            Mailbox<String> m = newMailbox(MailboxSpec.of(uniqueName("redrive"), TEXT)
                    .withRedrivePolicy(RedrivePolicy.of(2, dlq)));
            m.send("fine");
            receiveOne(m).nack();
            receiveOne(m).acknowledge();

            assertCount(m, 0);
            assertCount(dlq, 0);
            assertNothingVisible(dlq);
        }

        @Test
        @DisplayName("an undecodable body surfaces as an error and ends in the dead-letter mailbox, bytes intact")
        void undecodableIsDeadLettered() {
            Mailbox<byte[]> dlq = newMailbox(MailboxSpec.of(uniqueName("dlq"), Codec.bytes()));
            Mailbox<String> m = newMailbox(MailboxSpec.of(uniqueName("redrive"), TEXT)
                    .withRedrivePolicy(RedrivePolicy.of(2, dlq)));
            m.send(POISON + " payload");

            for (int i = 1; i <= 2; i++) {
                Message<String> got = receiveOne(m);
                assertThat(got.deliveryCount()).isEqualTo(i);
                assertThatThrownBy(got::body).isInstanceOf(SerializationException.class);
                got.nack();
            }

            assertNothingVisible(m);
            Message<byte[]> dead = receiveOne(dlq);
            assertThat(new String(dead.body(), StandardCharsets.UTF_8)).isEqualTo(POISON + " payload");
        }

        @Test
        @DisplayName("without a redrive policy an undecodable message is never dropped and blocks nothing")
        void undecodableKept() {
            Mailbox<String> m = newTextMailbox();
            m.send(POISON);
            m.send("good");

            List<Message<String>> got = receiveAll(m, 2, LONG);
            assertThat(got).hasSize(2);
            Message<String> bad = got.stream().filter(x -> !decodes(x)).findFirst().orElseThrow();
            Message<String> good = got.stream().filter(MailboxContract::decodes).findFirst().orElseThrow();
            assertThat(good.body()).isEqualTo("good");
            assertThatThrownBy(bad::body).isInstanceOf(SerializationException.class)
                    .hasMessageContaining("decode")
                    .satisfies(e -> assertThat(((SerializationException) e).undecodableBody())
                            .as("the stored bytes travel with the decoding failure")
                            .isEqualTo(POISON.getBytes(StandardCharsets.UTF_8)));
            good.acknowledge();
            bad.nack();

            Message<String> again = receiveOne(m);
            assertThatThrownBy(again::body).isInstanceOf(SerializationException.class);
            assertThat(again.deliveryCount()).isEqualTo(2);
            assertCount(m, 1);
        }
    }

    private static boolean decodes(Message<?> m) {
        try {
            m.body();
            return true;
        } catch (SerializationException e) {
            return false;
        }
    }

    @Nested
    @DisplayName("names")
    class Names {

        private String named(String prefix, int length) {
            String base = uniqueName(prefix);
            return base + "x".repeat(Math.max(0, length - base.length()));
        }

        @Test
        @DisplayName("a portable name (80 characters of A-Z a-z 0-9 _ -) works on every backend")
        void portable() {
            String name = named("portable-", Limits.MAX_NAME_LENGTH);
            assertThat(Limits.mailboxNameProblem(name, false)).isNull();
            Mailbox<String> m = newMailbox(MailboxSpec.of(name, TEXT));
            assertThat(m.name()).isEqualTo(name);
            m.send("hello");
            assertThat(receiveOne(m).body()).isEqualTo("hello");
        }

        @Test
        @DisplayName("'.' and '@' work exactly where the backend declares extended names, and are refused elsewhere")
        void extended() {
            String name = uniqueName("dotted.name") + "@n1";
            if (newTextMailbox().capabilities().extendedNames()) {
                Mailbox<String> m = newMailbox(MailboxSpec.of(name, TEXT));
                m.send("hello");
                assertThat(receiveOne(m).body()).isEqualTo("hello");
            } else {
                assertThatThrownBy(() -> newMailbox(MailboxSpec.of(name, TEXT)))
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("mailbox name must be");
            }
        }

        @Test
        @DisplayName("names outside the rule are refused when the mailbox is built, naming the rule")
        void refused() {
            for (String bad : List.of("", "has space", "slash/name", "brace{x}", "é",
                    named("too-long-", Limits.MAX_EXTENDED_NAME_LENGTH + 1))) {
                assertThatThrownBy(() -> newMailbox(MailboxSpec.of(bad, TEXT))).as("name '%s'", bad)
                        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("mailbox name must be");
            }
        }
    }

    @Nested
    @DisplayName("bad input")
    class BadInput {

        @Test
        @DisplayName("a body that cannot be encoded is refused at send, with nothing stored")
        void unencodable() {
            Mailbox<String> m = newTextMailbox();
            assertThatThrownBy(() -> m.send(UNENCODABLE)).isInstanceOf(SerializationException.class);
            assertThatThrownBy(() -> m.sendBatch(List.of("fine", UNENCODABLE)))
                    .isInstanceOf(SerializationException.class);

            assertCount(m, 0);
            assertNothingVisible(m);
        }

        @Test
        @DisplayName("a null body or null options are refused with NullPointerException")
        void nulls() {
            Mailbox<String> m = newTextMailbox();
            assertThatThrownBy(() -> m.send(null)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> m.send("x", null)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> m.receive(null)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> m.sendBatch(java.util.Arrays.asList("a", null)))
                    .isInstanceOf(NullPointerException.class);
            assertCount(m, 0);
        }

        @Test
        @DisplayName("an oversized message is refused with nothing stored; one exactly at the limit is accepted")
        void oversized() {
            Mailbox<String> m = newTextMailbox();
            int limit = m.capabilities().maxMessageBytes();
            String atLimit = "x".repeat(limit);
            String over = "x".repeat(limit + 1);

            assertThatThrownBy(() -> m.send(over)).isInstanceOf(MessageTooLargeException.class)
                    .hasMessageContaining(String.valueOf(limit));
            assertThatThrownBy(() -> m.send("x".repeat(limit - 10),
                    SendOptions.defaults().withAttribute("attribute", "value")))
                    .isInstanceOf(MessageTooLargeException.class);
            assertThatThrownBy(() -> m.sendBatch(List.of("small", over))).isInstanceOf(MessageTooLargeException.class);
            // a typed attribute counts its name, its data type and its value's bytes, as SQS counts it
            assertThatThrownBy(() -> m.send("x".repeat(limit - 10),
                    SendOptions.defaults().withAttribute("b", AttributeValue.binary(new byte[5]))))
                    .isInstanceOf(MessageTooLargeException.class);
            assertCount(m, 0);

            m.send(atLimit);
            assertThat(receiveOne(m).body()).hasSize(limit);
        }

        @Test
        @DisplayName("maxMessages outside 1 to 10 is refused, naming the range")
        void maxMessagesRange() {
            assertThatThrownBy(() -> ReceiveOptions.defaults().withMaxMessages(0))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("between 1 and 10");
            assertThatThrownBy(() -> ReceiveOptions.defaults().withMaxMessages(11))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("between 1 and 10");
        }

        @Test
        @DisplayName("visibility timeouts outside 0 to 12 hours are refused on receive, nack and extend")
        void visibilityRange() {
            assertThatThrownBy(() -> ReceiveOptions.defaults().withVisibilityTimeout(Duration.ofSeconds(-1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("12 hours");
            assertThatThrownBy(() -> ReceiveOptions.defaults().withVisibilityTimeout(Duration.ofHours(12).plusSeconds(1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("12 hours");

            Mailbox<String> m = newTextMailbox();
            m.send("x");
            Message<String> got = receiveOne(m);
            assertThatThrownBy(() -> got.nack(Duration.ofHours(13)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("12 hours");
            assertThatThrownBy(() -> got.extendVisibility(Duration.ofMillis(-1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("12 hours");

            // the refused calls changed nothing: the handle is still current
            assertNothingVisible(m);
            assertThatCode(got::acknowledge).doesNotThrowAnyException();
        }

        @Test
        @DisplayName("delays over 15 minutes and waits over 15 minutes are refused, naming the range")
        void delayAndWaitRange() {
            assertThatThrownBy(() -> SendOptions.defaults().withDelay(Duration.ofMinutes(15).plusSeconds(1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("15 minutes");
            assertThatThrownBy(() -> SendOptions.defaults().withDelay(Duration.ofSeconds(-1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("15 minutes");
            assertThatThrownBy(() -> ReceiveOptions.defaults().withWaitTime(Duration.ofMinutes(16)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("15 minutes");
        }

        @Test
        @DisplayName("more than ten attributes, bad names and empty values are refused")
        void attributes() {
            Map<String, String> eleven = new LinkedHashMap<>();
            for (int i = 0; i < 11; i++) {
                eleven.put("a" + i, "v");
            }
            assertThatThrownBy(() -> SendOptions.defaults().withAttributes(eleven))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most 10");
            assertThatThrownBy(() -> SendOptions.defaults().withAttribute("bad name", "v"))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bad name");
            assertThatThrownBy(() -> SendOptions.defaults().withAttribute("AWS.trace", "v"))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("reserved");
            assertThatThrownBy(() -> SendOptions.defaults().withAttribute("k", ""))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("empty");
            assertThatThrownBy(() -> SendOptions.defaults().withAttribute("k", "bell\u0007"))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("U+0007");
        }

        @Test
        @DisplayName("a batch of zero or more than ten messages is refused, with nothing stored")
        void batchSize() {
            Mailbox<String> m = newTextMailbox();
            assertThatThrownBy(() -> m.sendBatch(List.of()))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("between 1 and 10");
            assertThatThrownBy(() -> m.sendBatch(Collections.nCopies(11, "x")))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("between 1 and 10");
            assertCount(m, 0);
        }
    }

    @Nested
    @DisplayName("capacity")
    class Capacity {

        @Test
        @DisplayName("a full mailbox refuses sends with nothing stored, and takes them again once there is room")
        void full() {
            Supplier<Mailbox<String>> create = () -> newMailbox(MailboxSpec.of(uniqueName("bounded"), TEXT).withCapacity(3));
            if (!newTextMailbox().capabilities().capacity()) {
                assertThatThrownBy(create::get).as("a backend without capacity must refuse one, not ignore it")
                        .isInstanceOf(IllegalArgumentException.class);
                return;
            }
            Mailbox<String> m = create.get();
            m.send("queued");
            m.send("delayed", SendOptions.defaults().withDelay(LONG));
            m.send("in flight");
            Message<String> got = receiveOne(m);

            assertThatThrownBy(() -> m.send("fourth")).isInstanceOf(MailboxFullException.class)
                    .hasMessageContaining(m.name());
            assertCount(m, 3);

            got.acknowledge();
            assertThatThrownBy(() -> m.sendBatch(List.of("a", "b"))).isInstanceOf(MailboxFullException.class);
            assertCount(m, 2);
            m.send("fits");
            assertCount(m, 3);
        }
    }

    @Nested
    @DisplayName("concurrency")
    class Concurrency {

        @Test
        @DisplayName("threads racing to acknowledge the same delivery: exactly one succeeds, the rest are refused")
        void racingAcknowledges() throws Exception {
            Mailbox<String> m = newTextMailbox();
            m.sendBatch(List.of("a", "b", "c", "d", "e"));
            for (Message<String> msg : receiveAll(m, 5, LONG)) {
                int racers = 4;
                CountDownLatch start = new CountDownLatch(1);
                AtomicInteger succeeded = new AtomicInteger();
                AtomicInteger refused = new AtomicInteger();
                List<Thread> threads = new ArrayList<>();
                for (int i = 0; i < racers; i++) {
                    Thread t = new Thread(() -> {
                        try {
                            start.await();
                            msg.acknowledge();
                            succeeded.incrementAndGet();
                        } catch (ReceiptHandleExpiredException e) {
                            refused.incrementAndGet();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    });
                    threads.add(t);
                    t.start();
                }
                start.countDown();
                for (Thread t : threads) {
                    t.join(REAL_TIMEOUT.toMillis());
                }
                if (m.capabilities().detectsStaleAcknowledge()) {
                    assertThat(succeeded.get()).as("acknowledges of %s that succeeded", msg.body()).isEqualTo(1);
                    assertThat(refused.get()).isEqualTo(racers - 1);
                } else {
                    assertThat(succeeded.get() + refused.get()).isEqualTo(racers);
                    assertThat(succeeded.get()).isPositive();
                }
            }
            assertCount(m, 0);
        }

        @Test
        @DisplayName("with concurrent producers and consumers every message is acknowledged exactly once")
        void producersAndConsumers() throws Exception {
            Mailbox<String> m = newTextMailbox();
            int producers = 4;
            int perProducer = 250;
            int consumers = 4;
            int total = producers * perProducer;
            Set<String> acked = ConcurrentHashMap.newKeySet();
            Set<String> handles = ConcurrentHashMap.newKeySet();
            List<String> problems = new CopyOnWriteArrayList<>();
            AtomicInteger deliveries = new AtomicInteger();
            CountDownLatch allAcked = new CountDownLatch(total);
            List<Thread> threads = new ArrayList<>();

            for (int c = 0; c < consumers; c++) {
                threads.add(new Thread(() -> {
                    while (allAcked.getCount() > 0) {
                        List<Message<String>> batch;
                        try {
                            batch = m.receive(ReceiveOptions.defaults().withMaxMessages(10)
                                    .withVisibilityTimeout(LONG).withWaitTime(LONG_WAIT));
                        } catch (MailboxClosedException closed) {
                            return;
                        }
                        for (Message<String> msg : batch) {
                            deliveries.incrementAndGet();
                            if (!handles.add(msg.receiptHandle())) {
                                problems.add("handle reused: " + msg.receiptHandle());
                            }
                            msg.acknowledge();
                            if (!acked.add(msg.body())) {
                                problems.add("acknowledged twice: " + msg.body());
                            }
                            allAcked.countDown();
                        }
                    }
                }, "tck-consumer-" + c));
            }
            for (int p = 0; p < producers; p++) {
                int producer = p;
                threads.add(new Thread(() -> {
                    for (int i = 0; i < perProducer; i += 5) {
                        if (i % 10 == 0) {
                            m.sendBatch(List.of(body(producer, i), body(producer, i + 1), body(producer, i + 2),
                                    body(producer, i + 3), body(producer, i + 4)));
                        } else {
                            for (int j = i; j < i + 5; j++) {
                                m.send(body(producer, j));
                            }
                        }
                    }
                }, "tck-producer-" + p));
            }
            threads.forEach(Thread::start);

            assertThat(allAcked.await(REAL_TIMEOUT.toSeconds() * 4, TimeUnit.SECONDS))
                    .as("all %d messages acknowledged (got %d)", total, acked.size()).isTrue();
            assertCount(m, 0);
            m.close();
            for (Thread t : threads) {
                t.join(REAL_TIMEOUT.toMillis());
                assertThat(t.isAlive()).as("%s finished", t.getName()).isFalse();
            }
            assertThat(problems).isEmpty();
            assertThat(acked).hasSize(total);
            assertThat(deliveries.get()).isEqualTo(total);
        }

        private String body(int producer, int i) {
            return "p" + producer + "-" + i;
        }

        @Test
        @DisplayName("concurrent receivers never hold the same message at the same time")
        void noSharedDeliveries() throws Exception {
            Mailbox<String> m = newTextMailbox();
            int total = 200;
            for (int i = 0; i < total; i += 10) {
                int from = i;
                m.sendBatch(IntStream.range(from, from + 10).mapToObj(j -> "m" + j).toList());
            }
            assertCount(m, total);
            Map<String, Integer> holders = new ConcurrentHashMap<>();
            List<Thread> threads = new ArrayList<>();
            AtomicInteger received = new AtomicInteger();
            for (int t = 0; t < 8; t++) {
                threads.add(new Thread(() -> {
                    while (true) {
                        List<Message<String>> got = m.receive(ReceiveOptions.defaults().withMaxMessages(10)
                                .withVisibilityTimeout(LONG).withWaitTime(patience()));
                        if (got.isEmpty()) {
                            return;
                        }
                        for (Message<String> msg : got) {
                            holders.merge(msg.body(), 1, Integer::sum);
                            received.incrementAndGet();
                        }
                    }
                }));
            }
            threads.forEach(Thread::start);
            for (Thread t : threads) {
                t.join(REAL_TIMEOUT.toMillis() * 2);
            }

            assertThat(received.get()).isEqualTo(total);
            assertThat(holders).hasSize(total);
            assertThat(holders.values()).containsOnly(1);
        }
    }

    @Nested
    @DisplayName("lifecycle")
    class Lifecycle {

        @Test
        @DisplayName("name() is the name the mailbox was created with")
        void name() {
            String name = uniqueName("named");
            assertThat(newMailbox(MailboxSpec.of(name, TEXT)).name()).isEqualTo(name);
        }

        @Test
        @DisplayName("after close every call, including on received messages, throws MailboxClosedException")
        void closed() {
            Mailbox<String> m = newTextMailbox();
            m.send("x");
            Message<String> got = receiveOne(m);
            m.close();
            m.close(); // idempotent

            assertThatThrownBy(() -> m.send("y")).isInstanceOf(MailboxClosedException.class);
            assertThatThrownBy(() -> m.sendBatch(List.of("y"))).isInstanceOf(MailboxClosedException.class);
            assertThatThrownBy(m::receive).isInstanceOf(MailboxClosedException.class);
            assertThatThrownBy(m::approximateCount).isInstanceOf(MailboxClosedException.class);
            assertThatThrownBy(m::purge).isInstanceOf(MailboxClosedException.class);
            assertThatThrownBy(got::acknowledge).isInstanceOf(MailboxClosedException.class)
                    .matches(e -> !((MailboxClosedException) e).isRetryable());
        }
    }

    @Nested
    @DisplayName("acting by receipt handle")
    class ByHandle {

        @Test
        @DisplayName("acknowledge(handle) deletes the delivery: the count drops and it is never delivered again")
        void acknowledge() {
            Mailbox<String> m = newTextMailbox();
            m.send("x");
            Message<String> got = receiveOne(m, ticks(2));

            m.acknowledge(got.receiptHandle());

            assertCount(m, 0);
            elapse(ticks(2));
            assertNothingVisible(m);
            assertStaleAcknowledge(m, got);
            assertCount(m, 0);
        }

        @Test
        @DisplayName("the handle of a deleted delivery (acknowledged or purged) is stale, not unknown")
        void staleAfterDelete() {
            Mailbox<String> m = newTextMailbox();
            m.sendBatch(List.of("acked", "purged"));
            Map<String, String> handles = receiveAll(m, 2, LONG).stream()
                    .collect(Collectors.toMap(Message::body, Message::receiptHandle));
            m.acknowledge(handles.get("acked"));
            m.purge();

            for (String handle : handles.values()) {
                assertThatThrownBy(() -> m.nack(handle, Duration.ZERO)).as("nack(%s)", handle)
                        .isInstanceOf(ReceiptHandleExpiredException.class);
                assertThatThrownBy(() -> m.extendVisibility(handle, LONG)).as("extendVisibility(%s)", handle)
                        .isInstanceOf(ReceiptHandleExpiredException.class);
                if (m.capabilities().detectsStaleAcknowledge()) {
                    assertThatThrownBy(() -> m.acknowledge(handle)).as("acknowledge(%s)", handle)
                            .isInstanceOf(ReceiptHandleExpiredException.class);
                }
            }
            assertCount(m, 0);
            assertNothingVisible(m);
        }

        @Test
        @DisplayName("nack(handle, 0) makes the message visible again at once, its delivery count kept, the handle stale")
        void nackNow() {
            Mailbox<String> m = newTextMailbox();
            String id = m.send("x");
            Message<String> got = receiveOne(m);

            m.nack(got.receiptHandle(), Duration.ZERO);

            Message<String> again = receiveOne(m);
            assertThat(again.id()).isEqualTo(id);
            assertThat(again.body()).isEqualTo("x");
            assertThat(again.deliveryCount()).isEqualTo(2);
            assertThatThrownBy(() -> m.extendVisibility(got.receiptHandle(), LONG))
                    .isInstanceOf(ReceiptHandleExpiredException.class);
        }

        @Test
        @DisplayName("nack(handle, t) hides the message for t")
        void nackLater() {
            Mailbox<String> m = newTextMailbox();
            m.send("x");
            Message<String> got = receiveOne(m);

            m.nack(got.receiptHandle(), ticks(3));

            elapse(tick());
            assertNothingVisible(m);
            elapse(ticks(2));
            assertThat(receiveOne(m).deliveryCount()).isEqualTo(2);
        }

        @Test
        @DisplayName("extendVisibility(handle, t) keeps the message invisible past its original timeout, the handle current")
        void extend() {
            Mailbox<String> m = newTextMailbox();
            m.send("x");
            Message<String> got = receiveOne(m, ticks(2));

            m.extendVisibility(got.receiptHandle(), ticks(8));

            elapse(ticks(3));
            assertNothingVisible(m);
            assertThatCode(() -> m.acknowledge(got.receiptHandle())).doesNotThrowAnyException();
            assertCount(m, 0);
        }

        @Test
        @DisplayName("the handle of a redelivered message is stale: nack and extend are refused, acknowledge where the backend can tell, and nothing changes")
        void staleAfterRedelivery() {
            Mailbox<String> m = newTextMailbox();
            m.send("x");
            Message<String> first = receiveOne(m, tick());
            elapse(tick());
            Message<String> second = receiveOne(m);
            String stale = first.receiptHandle();

            if (m.capabilities().detectsStaleAcknowledge()) {
                assertThatThrownBy(() -> m.acknowledge(stale)).isInstanceOf(ReceiptHandleExpiredException.class)
                        .hasMessageContaining(stale)
                        .satisfies(e -> assertThat(((ReceiptHandleExpiredException) e).receiptHandle()).isEqualTo(stale));
            } else {
                try {
                    m.acknowledge(stale);
                } catch (ReceiptHandleExpiredException refused) {
                    // detected this time; allowed
                }
            }
            assertThatThrownBy(() -> m.nack(stale, Duration.ZERO)).isInstanceOf(ReceiptHandleExpiredException.class);
            assertThatThrownBy(() -> m.extendVisibility(stale, LONG)).isInstanceOf(ReceiptHandleExpiredException.class);

            assertCount(m, 1);
            assertNothingVisible(m);
            assertThatCode(() -> m.acknowledge(second.receiptHandle())).doesNotThrowAnyException();
            assertCount(m, 0);
        }

        @Test
        @DisplayName("once the visibility timeout ends a handle cannot nack or extend, nor acknowledge without late acknowledgement")
        void staleAfterExpiry() {
            Mailbox<String> m = newTextMailbox();
            m.send("x");
            String handle = receiveOne(m, tick()).receiptHandle();
            elapse(tick());

            assertThatThrownBy(() -> m.extendVisibility(handle, LONG)).isInstanceOf(ReceiptHandleExpiredException.class);
            assertThatThrownBy(() -> m.nack(handle, LONG)).isInstanceOf(ReceiptHandleExpiredException.class);
            // with late acknowledgement the handle still deletes it: see LateAcknowledgementContract
            if (m.capabilities().detectsStaleAcknowledge() && !m.capabilities().lateAcknowledge()) {
                assertThatThrownBy(() -> m.acknowledge(handle)).isInstanceOf(ReceiptHandleExpiredException.class);
                assertCount(m, 1);
            }
            assertThat(receiveOne(m).deliveryCount()).isEqualTo(2);
        }

        @Test
        @DisplayName("a string that is not a handle of this backend is refused with IllegalArgumentException, null with NullPointerException")
        void notAHandle() {
            Mailbox<String> m = newTextMailbox();
            m.send("x");
            Message<String> got = receiveOne(m);

            for (String bad : List.of("", "not a receipt handle")) {
                assertThatThrownBy(() -> m.acknowledge(bad)).as("acknowledge('%s')", bad)
                        .isInstanceOf(IllegalArgumentException.class);
                assertThatThrownBy(() -> m.nack(bad, Duration.ZERO)).as("nack('%s')", bad)
                        .isInstanceOf(IllegalArgumentException.class);
                assertThatThrownBy(() -> m.extendVisibility(bad, LONG)).as("extendVisibility('%s')", bad)
                        .isInstanceOf(IllegalArgumentException.class);
            }
            assertThatThrownBy(() -> m.acknowledge(null)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> m.nack(null, Duration.ZERO)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> m.extendVisibility(null, LONG)).isInstanceOf(NullPointerException.class);

            // the refused calls changed nothing
            assertNothingVisible(m);
            assertThatCode(got::acknowledge).doesNotThrowAnyException();
        }

        @Test
        @DisplayName("timeouts outside 0 to 12 hours are refused, naming the range, and change nothing")
        void timeoutRange() {
            Mailbox<String> m = newTextMailbox();
            m.send("x");
            Message<String> got = receiveOne(m);
            String handle = got.receiptHandle();

            assertThatThrownBy(() -> m.nack(handle, Duration.ofHours(13)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("12 hours");
            assertThatThrownBy(() -> m.extendVisibility(handle, Duration.ofMillis(-1)))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("12 hours");

            assertNothingVisible(m);
            assertThatCode(() -> m.acknowledge(handle)).doesNotThrowAnyException();
        }

        @Test
        @DisplayName("after close the handle calls throw MailboxClosedException")
        void closedHandles() {
            Mailbox<String> m = newTextMailbox();
            m.send("x");
            String handle = receiveOne(m).receiptHandle();
            m.close();

            assertThatThrownBy(() -> m.acknowledge(handle)).isInstanceOf(MailboxClosedException.class);
            assertThatThrownBy(() -> m.nack(handle, Duration.ZERO)).isInstanceOf(MailboxClosedException.class);
            assertThatThrownBy(() -> m.extendVisibility(handle, LONG)).isInstanceOf(MailboxClosedException.class);
        }

        @Test
        @DisplayName("a handle works from a second mailbox object on the same queue, both ways")
        void fromAnotherObject() {
            MailboxSpec<String> spec = MailboxSpec.of(uniqueName("shared"), TEXT);
            Mailbox<String> m = newMailbox(spec);
            Mailbox<String> other = secondObject(spec);
            m.sendBatch(List.of("ack", "nack", "extend"));
            Map<String, Message<String>> got = receiveAll(m, 3, ticks(2)).stream()
                    .collect(Collectors.toMap(Message::body, msg -> msg));
            assertThat(got).containsOnlyKeys("ack", "nack", "extend");

            other.acknowledge(got.get("ack").receiptHandle());
            other.nack(got.get("nack").receiptHandle(), Duration.ZERO);
            other.extendVisibility(got.get("extend").receiptHandle(), LONG);

            Message<String> again = receiveOne(other);
            assertThat(again.body()).isEqualTo("nack");
            assertThat(again.deliveryCount()).isEqualTo(2);
            elapse(ticks(2));
            assertNothingVisible(m);
            m.acknowledge(again.receiptHandle());
            m.acknowledge(got.get("extend").receiptHandle());
            assertCount(m, 0);
            assertCount(other, 0);
        }
    }

    @Nested
    @DisplayName("fencing")
    class Fencing {

        @Test
        @DisplayName("once fenced(2) has received, fenced(1) is refused with FencedException(1, 2) and receives nothing")
        void lowerEpochRefused() {
            Mailbox<String> m = newTextMailbox();
            m.sendBatch(List.of("a", "b"));
            Mailbox<String> first = m.fenced(1);
            Mailbox<String> second = m.fenced(2);
            receiveOne(first);
            receiveOne(second);
            m.send("c");
            assertCount(m, 3);

            assertFenced(() -> first.receive(visibility(LONG).withMaxMessages(10).withWaitTime(patience())), m, 1, 2);

            Message<String> c = receiveOne(second);
            assertThat(c.body()).isEqualTo("c");
            assertThat(c.deliveryCount()).as("the refused receive did not take it").isEqualTo(1);
            assertCount(m, 3);
        }

        @Test
        @DisplayName("a receive that finds nothing still raises the fence")
        void emptyReceiveRaises() {
            Mailbox<String> m = newTextMailbox();
            assertThat(m.fenced(3).receive()).isEmpty();
            assertThat(m.fenced(5).receive()).isEmpty();

            assertFenced(() -> m.fenced(3).receive(), m, 3, 5);
            assertFenced(() -> m.fenced(4).receive(), m, 4, 5);
        }

        @Test
        @DisplayName("the same epoch again, from a new view too, and any higher epoch are accepted")
        void sameAndHigherAccepted() {
            Mailbox<String> m = newTextMailbox();
            m.sendBatch(List.of("a", "b", "c", "d"));
            Mailbox<String> three = m.fenced(3);

            receiveOne(three);
            receiveOne(three);
            receiveOne(m.fenced(3));
            Message<String> byTen = receiveOne(m.fenced(10));

            assertFenced(() -> three.receive(), m, 3, 10);
            assertThat(m.fenced(10).acknowledgeBatch(List.of(byTen))).as("stale in the batch").isEmpty();
            assertCount(m, 3);
            assertThatCode(() -> m.fenced(10).receive()).doesNotThrowAnyException();
            assertThat(m.fenced(11).receive()).isEmpty();
            assertFenced(() -> m.fenced(10).receive(), m, 10, 11);
        }

        @Test
        @DisplayName("a message received under an overtaken epoch cannot be acknowledged, nacked or extended, itself or by handle, and nothing changes")
        void overtakenDeliveryRefused() {
            Mailbox<String> m = newTextMailbox();
            m.send("x");
            Mailbox<String> old = m.fenced(1);
            Message<String> held = receiveOne(old, ticks(4));
            Mailbox<String> current = m.fenced(2);
            assertNothingVisible(current); // an accepted receive under epoch 2 raises the fence
            String handle = held.receiptHandle();

            assertFenced(held::acknowledge, m, 1, 2);
            assertFenced(() -> old.acknowledge(handle), m, 1, 2);
            assertFenced(() -> old.acknowledgeBatch(List.of(held)), m, 1, 2);
            assertFenced(held::nack, m, 1, 2);
            assertFenced(() -> old.nack(handle, Duration.ZERO), m, 1, 2);
            assertFenced(() -> held.extendVisibility(LONG), m, 1, 2);
            assertFenced(() -> old.extendVisibility(handle, LONG), m, 1, 2);

            assertCount(m, 1);             // not acknowledged
            assertNothingVisible(current); // not nacked: still in flight
            elapse(ticks(4));              // not extended: it comes back when its own timeout ends
            Message<String> again = receiveOne(current);
            assertThat(again.body()).isEqualTo("x");
            assertThat(again.deliveryCount()).isEqualTo(2);
        }

        @Test
        @DisplayName("calls refused by the fence leave the delivery current: the new holder can settle it by handle")
        void refusedLeavesDeliveryCurrent() {
            Mailbox<String> m = newTextMailbox();
            m.send("x");
            Message<String> held = receiveOne(m.fenced(1));
            Mailbox<String> current = m.fenced(2);
            assertNothingVisible(current);
            assertFenced(held::acknowledge, m, 1, 2);
            assertFenced(() -> held.extendVisibility(Duration.ZERO), m, 1, 2);

            assertThatCode(() -> current.extendVisibility(held.receiptHandle(), LONG)).doesNotThrowAnyException();
            assertThatCode(() -> current.acknowledge(held.receiptHandle())).doesNotThrowAnyException();
            assertCount(m, 0);
        }

        @Test
        @DisplayName("a batch acknowledge on the mailbox itself holding one delivery of an overtaken epoch is refused whole: nothing is acknowledged")
        void batchWithOvertakenDeliveryRefusedWhole() {
            Mailbox<String> m = newTextMailbox();
            m.sendBatch(List.of("a", "b"));
            Message<String> plain = receiveOne(m);
            Message<String> old = receiveOne(m.fenced(1));
            Mailbox<String> current = m.fenced(2);
            assertNothingVisible(current); // raises the fence to 2

            assertFenced(() -> m.acknowledgeBatch(List.of(plain, old)), m, 1, 2);
            assertCount(m, 2); // the plain delivery before it was not acknowledged either
            assertThat(m.acknowledgeBatch(List.of(plain))).as("alone, it is current").isEmpty();
            assertCount(m, 1);
        }

        @Test
        @DisplayName("the current holder's view settles an overtaken holder's deliveries in a batch: the view's epoch applies to every message")
        void currentViewBatchSettlesOvertakenDeliveries() {
            Mailbox<String> m = newTextMailbox();
            m.sendBatch(List.of("a", "b"));
            Mailbox<String> old = m.fenced(1);
            List<Message<String>> held = List.of(receiveOne(old), receiveOne(old));
            Mailbox<String> current = m.fenced(2);
            assertNothingVisible(current);

            assertThat(current.acknowledgeBatch(held)).isEmpty();
            assertCount(m, 0);
        }

        @Test
        @DisplayName("sends, batch sends, counts and purges through an overtaken view are not fenced")
        void sendsNotFenced() {
            Mailbox<String> m = newTextMailbox();
            Mailbox<String> old = m.fenced(1);
            assertThat(m.fenced(2).receive()).isEmpty();

            String id = old.send("one");
            List<String> ids = old.sendBatch(List.of("two", "three"));
            assertCount(old, 3);
            Message<String> got = receiveOne(m.fenced(2));
            assertThat(List.of(id, ids.get(0), ids.get(1))).contains(got.id());

            long purged = old.purge();
            assertThat(purged).isBetween(0L, 3L);
            if (m.capabilities().exactCount()) {
                assertThat(purged).isEqualTo(3);
            }
            assertCount(m, 0);
        }

        @Test
        @DisplayName("calls on the mailbox itself are never fenced, even on a delivery received through an overtaken view")
        void mailboxItselfNotFenced() {
            Mailbox<String> m = newTextMailbox();
            m.send("a");
            Message<String> held = receiveOne(m.fenced(1));
            assertNothingVisible(m.fenced(2));
            m.send("b");

            Message<String> b = receiveOne(m);
            assertThat(b.body()).isEqualTo("b");
            assertThatCode(b::acknowledge).doesNotThrowAnyException();
            assertThatCode(() -> m.extendVisibility(held.receiptHandle(), LONG)).doesNotThrowAnyException();
            assertThatCode(() -> m.acknowledge(held.receiptHandle())).doesNotThrowAnyException();
            assertCount(m, 0);
        }

        @Test
        @DisplayName("fenced(0) and negative epochs are refused with IllegalArgumentException")
        void epochRange() {
            Mailbox<String> m = newTextMailbox();
            for (long bad : new long[] {0, -1, Long.MIN_VALUE}) {
                assertThatThrownBy(() -> m.fenced(bad)).as("fenced(%d)", bad).isInstanceOf(IllegalArgumentException.class);
            }
            assertThat(m.fenced(1).receive()).isEmpty();
        }

        @Test
        @DisplayName("a view has the mailbox's name and capabilities, and closing it closes nothing")
        void viewClose() {
            Mailbox<String> m = newTextMailbox();
            Mailbox<String> view = m.fenced(1);
            assertThat(view.name()).isEqualTo(m.name());
            assertThat(view.capabilities().toString()).isEqualTo(m.capabilities().toString());

            view.close();

            m.send("x");
            Message<String> got = receiveOne(view);
            assertThat(got.body()).isEqualTo("x");
            got.acknowledge();
            assertCount(m, 0);
        }

        @Test
        @DisplayName("a view of a closed mailbox throws MailboxClosedException")
        void viewOfClosed() {
            Mailbox<String> m = newTextMailbox();
            Mailbox<String> view = m.fenced(1);
            m.close();

            assertThatThrownBy(() -> view.receive()).isInstanceOf(MailboxClosedException.class);
            assertThatThrownBy(() -> view.send("x")).isInstanceOf(MailboxClosedException.class);
        }

        @Test
        @DisplayName("a receive waiting under an epoch that is overtaken meanwhile does not take the next message"
                + " (with a per-object fence: is refused when the message arrives, or returns it to a holder that"
                + " cannot acknowledge it; a receive started after the overtake is refused)")
        void waitingReceiveFenced() throws Exception {
            Mailbox<String> m = newTextMailbox();
            if (!m.capabilities().atomicFencing()) {
                waitingReceiveFencedPerObject(m);
                return;
            }
            Pending<String> pending = receiveInBackground(m.fenced(1), visibility(LONG).withWaitTime(LONG_WAIT));

            assertNothingVisible(m.fenced(2));
            m.send("x");

            try {
                assertThat(pending.result().get(REAL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS))
                        .as("what the overtaken receive returned").isEmpty();
            } catch (ExecutionException e) {
                assertFenced(() -> {
                    throw e.getCause();
                }, m, 1, 2);
            }
            Message<String> x = receiveOne(m.fenced(2));
            assertThat(x.body()).isEqualTo("x");
            assertThat(x.deliveryCount()).isEqualTo(1);
        }

        /**
         * The weaker rule of {@code atomicFencing() == false}: the fence is the object's and a receive already
         * waiting cannot be stopped, but one that starts after the object learned the later epoch is refused, the
         * waiting one either is refused when its message arrives (and the message comes back) or returns it to a
         * holder whose acknowledge is refused, and the message is neither lost nor deleted by the stale holder.
         */
        private void waitingReceiveFencedPerObject(Mailbox<String> m) throws Exception {
            Pending<String> pending = receiveInBackground(m.fenced(1), visibility(LONG).withWaitTime(LONG_WAIT));

            assertNothingVisible(m.fenced(2));
            assertFenced(() -> m.fenced(1).receive(), m, 1, 2);
            m.send("x");

            List<Message<String>> early;
            try {
                early = pending.result().get(REAL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                assertFenced(() -> {
                    throw e.getCause();
                }, m, 1, 2);
                early = List.of();
            }
            if (early.isEmpty()) {
                Message<String> x = receiveOne(m.fenced(2));
                assertThat(x.body()).isEqualTo("x");
                x.acknowledge();
                assertCount(m, 0);
            } else {
                assertThat(early).extracting(Message::body).containsExactly("x");
                Message<String> stale = early.get(0);
                assertFenced(stale::acknowledge, m, 1, 2);
                assertNothingVisible(m.fenced(2));
                assertCount(m, 1);
            }
        }

        @Test
        @DisplayName("a fence raised through one mailbox object refuses calls through another on the same queue"
                + " (with a per-object fence: each object refuses epochs below the highest it has seen)")
        void fenceAcrossObjects() {
            MailboxSpec<String> spec = MailboxSpec.of(uniqueName("fenced"), TEXT);
            Mailbox<String> m = newMailbox(spec);
            Mailbox<String> other = secondObject(spec);
            if (!m.capabilities().atomicFencing()) {
                // the fence is each object's: what one object learned fences every view of it, whichever view
                // the later epoch came through, and nothing is lost
                m.sendBatch(List.of("a", "b"));
                Message<String> held = receiveOne(m.fenced(1));
                receiveOne(other.fenced(2));

                assertFenced(() -> other.fenced(1).receive(), other, 1, 2);
                assertThat(m.fenced(3).receive()).as("both messages are in flight").isEmpty();
                assertFenced(held::acknowledge, m, 1, 3);
                assertFenced(() -> m.fenced(1).acknowledge(held.receiptHandle()), m, 1, 3);
                assertFenced(() -> m.fenced(2).receive(), m, 2, 3);
                assertCount(m, 2);
                return;
            }
            m.sendBatch(List.of("a", "b"));
            Message<String> held = receiveOne(m.fenced(1));

            receiveOne(other.fenced(2));

            assertFenced(() -> m.fenced(1).receive(), m, 1, 2);
            assertFenced(held::acknowledge, m, 1, 2);
            assertFenced(() -> m.fenced(1).acknowledge(held.receiptHandle()), m, 1, 2);
            assertCount(m, 2);

            assertThat(m.fenced(3).receive()).isEmpty();
            assertFenced(() -> other.fenced(2).receive(), other, 2, 3);
        }

        @Test
        @DisplayName("racing receivers under different epochs: once a call under an epoch has returned, no later call under a lower one is accepted")
        void racingEpochs() throws Exception {
            Mailbox<String> m = newTextMailbox();
            for (int i = 0; i < 30; i += 10) {
                int from = i;
                m.sendBatch(IntStream.range(from, from + 10).mapToObj(j -> "m" + j).toList());
            }
            assertCount(m, 30);
            record Call(long epoch, long start, long end, boolean accepted, List<String> bodies) {
            }
            int epochs = 6;
            int callsEach = 15;
            AtomicLong order = new AtomicLong(); // a logical clock: start and end of every call
            List<Call> calls = new CopyOnWriteArrayList<>();
            List<String> problems = new CopyOnWriteArrayList<>();
            CountDownLatch go = new CountDownLatch(1);
            List<Thread> threads = new ArrayList<>();
            for (int e = 1; e <= epochs; e++) {
                long epoch = e;
                Mailbox<String> view = m.fenced(epoch);
                threads.add(new Thread(() -> {
                    try {
                        go.await();
                    } catch (InterruptedException ie) {
                        return;
                    }
                    for (int i = 0; i < callsEach; i++) {
                        long start = order.incrementAndGet();
                        try {
                            List<String> bodies = view.receive(visibility(LONG)).stream().map(Message::body).toList();
                            calls.add(new Call(epoch, start, order.incrementAndGet(), true, bodies));
                        } catch (FencedException f) {
                            calls.add(new Call(epoch, start, order.incrementAndGet(), false, List.of()));
                            if (f.epoch() != epoch || f.fence() <= epoch) {
                                problems.add("epoch " + epoch + " refused with " + f.getMessage());
                            }
                        } catch (RuntimeException other) {
                            problems.add("epoch " + epoch + ": " + other);
                        }
                    }
                }, "tck-epoch-" + epoch));
            }
            threads.forEach(Thread::start);
            go.countDown();
            for (Thread t : threads) {
                t.join(REAL_TIMEOUT.toMillis() * 2);
                assertThat(t.isAlive()).as("%s finished", t.getName()).isFalse();
            }

            assertThat(problems).isEmpty();
            assertThat(calls).hasSize(epochs * callsEach);
            for (Call done : calls) {
                for (Call later : calls) {
                    if (done.accepted() && later.accepted() && later.epoch() < done.epoch() && later.start() > done.end()) {
                        problems.add("epoch " + later.epoch() + " was accepted at " + later.start()
                                + " after epoch " + done.epoch() + " returned at " + done.end());
                    }
                }
            }
            assertThat(problems).as("calls accepted after a higher epoch had been").isEmpty();
            assertThat(calls).filteredOn(c -> c.epoch() == epochs).allMatch(Call::accepted);
            List<String> received = calls.stream().flatMap(c -> c.bodies().stream()).toList();
            assertThat(received).doesNotHaveDuplicates();
            assertFenced(() -> m.fenced(epochs - 1).receive(), m, epochs - 1, epochs);
        }
    }

    @Nested
    @DisplayName("deduplication")
    class Deduplication {

        @Test
        @DisplayName("a second send with the same id stores nothing and returns the first send's message id")
        void sameIdOnce() {
            Mailbox<String> m = newTextMailbox();
            String id = m.send("first", deduplicated("order-1"));

            assertThat(m.send("second", deduplicated("order-1"))).isEqualTo(id);

            assertCount(m, 1);
            Message<String> got = receiveOne(m);
            assertThat(got.id()).isEqualTo(id);
            assertThat(got.body()).as("the first send's body").isEqualTo("first");
            assertNothingVisible(m);
        }

        @Test
        @DisplayName("different ids, and sends without one, are stored separately")
        void differentIds() {
            Mailbox<String> m = newTextMailbox();
            String a = m.send("x", deduplicated("a"));
            String b = m.send("x", deduplicated("b"));
            String plain1 = m.send("x");
            String plain2 = m.send("x");

            assertThat(List.of(a, b, plain1, plain2)).doesNotHaveDuplicates();
            assertCount(m, 4);
            assertThat(receiveAll(m, 4, LONG)).hasSize(4);
        }

        @Test
        @DisplayName("an id is remembered after its message was acknowledged")
        void rememberedAfterAcknowledge() {
            Mailbox<String> m = newTextMailbox();
            String id = m.send("x", deduplicated("done-1"));
            receiveOne(m).acknowledge();
            assertCount(m, 0);

            assertThat(m.send("x", deduplicated("done-1"))).isEqualTo(id);

            assertCount(m, 0);
            assertNothingVisible(m);
        }

        @Test
        @DisplayName("in a batch, message i is deduplicated under id/i: a repeated batch stores nothing and returns the same ids")
        void batch() {
            Mailbox<String> m = newTextMailbox();
            List<String> ids = m.sendBatch(List.of("a", "b", "c"), deduplicated("batch-1"));
            assertThat(ids).hasSize(3).doesNotHaveDuplicates();

            assertThat(m.sendBatch(List.of("a", "b", "c"), deduplicated("batch-1"))).isEqualTo(ids);
            assertThat(m.send("b again", deduplicated("batch-1/1"))).isEqualTo(ids.get(1));
            assertCount(m, 3);

            List<String> longer = m.sendBatch(List.of("a", "b", "c", "d"), deduplicated("batch-1"));
            assertThat(longer.subList(0, 3)).isEqualTo(ids);
            assertThat(ids).doesNotContain(longer.get(3));
            assertCount(m, 4);
            assertThat(receiveAll(m, 4, LONG)).extracting(Message::body).containsExactlyInAnyOrder("a", "b", "c", "d");
        }

        @Test
        @DisplayName("a single send deduplicates a batch's message under id/i, and a batch a single send's id")
        void singleAndBatchShareKeys() {
            Mailbox<String> m = newTextMailbox();
            String single = m.send("zero", deduplicated("k/0"));

            List<String> ids = m.sendBatch(List.of("a", "b"), deduplicated("k"));

            assertThat(ids.get(0)).isEqualTo(single);
            assertThat(ids.get(1)).isNotEqualTo(single);
            assertCount(m, 2);
            assertThat(receiveAll(m, 2, LONG)).extracting(Message::body).containsExactlyInAnyOrder("zero", "b");
        }

        @Test
        @DisplayName("ids belong to one mailbox: the same id in another mailbox stores a message there")
        void perMailbox() {
            Mailbox<String> one = newTextMailbox();
            Mailbox<String> two = newTextMailbox();

            one.send("x", deduplicated("shared-id"));
            two.send("x", deduplicated("shared-id"));

            // message ids need not differ across mailboxes (Redis counts per mailbox): each stored its own
            assertCount(one, 1);
            assertCount(two, 1);
        }

        @Test
        @DisplayName("threads racing to send with the same id store one message and all get its id")
        void racingSends() throws Exception {
            Mailbox<String> m = newTextMailbox();
            int racers = 8;
            int rounds = 20;
            CyclicBarrier together = new CyclicBarrier(racers);
            Map<Integer, Set<String>> idsByRound = new ConcurrentHashMap<>();
            List<String> problems = new CopyOnWriteArrayList<>();
            List<Thread> threads = new ArrayList<>();
            for (int r = 0; r < racers; r++) {
                String racer = "racer-" + r;
                threads.add(new Thread(() -> {
                    for (int round = 0; round < rounds; round++) {
                        try {
                            together.await(REAL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS); // every round starts at once
                            String id = m.send(racer, deduplicated("race-" + round));
                            idsByRound.computeIfAbsent(round, k -> ConcurrentHashMap.newKeySet()).add(id);
                        } catch (Exception e) {
                            problems.add(racer + " in round " + round + ": " + e);
                            return;
                        }
                    }
                }, "tck-" + racer));
            }
            threads.forEach(Thread::start);
            for (Thread t : threads) {
                t.join(REAL_TIMEOUT.toMillis() * 2);
                assertThat(t.isAlive()).as("%s finished", t.getName()).isFalse();
            }

            assertThat(problems).isEmpty();
            assertThat(idsByRound).hasSize(rounds);
            idsByRound.forEach((round, ids) -> assertThat(ids).as("ids returned in round %d", round).hasSize(1));
            assertCount(m, rounds);
            Set<String> stored = receiveAll(m, rounds, LONG).stream().map(Message::id).collect(Collectors.toSet());
            assertThat(stored).isEqualTo(idsByRound.values().stream().flatMap(Set::stream).collect(Collectors.toSet()));
            assertNothingVisible(m);
        }

        @Test
        @DisplayName("a duplicate send to a full mailbox returns the first id: it needs no room (without capacities:"
                + " a capacity is refused when the mailbox is made, and sends beyond any count are stored)")
        void duplicateNeedsNoRoom() {
            Mailbox<String> unbounded = newTextMailbox();
            if (!unbounded.capabilities().capacity()) {
                assertThatThrownBy(() -> newMailbox(MailboxSpec.of(uniqueName("bounded"), TEXT).withCapacity(2)))
                        .as("a capacity, where the backend has none").isInstanceOf(IllegalArgumentException.class);
                String id = unbounded.send("a", deduplicated("full-1"));
                unbounded.sendBatch(List.of("b", "c", "d"));
                assertThat(unbounded.send("a", deduplicated("full-1"))).isEqualTo(id);
                assertThat(unbounded.send("e", deduplicated("full-2"))).isNotEqualTo(id);
                assertCount(unbounded, 5);
                assertThat(receiveAll(unbounded, 5, LONG)).extracting(Message::body)
                        .containsExactlyInAnyOrder("a", "b", "c", "d", "e");
                return;
            }
            Mailbox<String> m = newMailbox(MailboxSpec.of(uniqueName("bounded"), TEXT).withCapacity(2));
            String id = m.send("a", deduplicated("full-1"));
            m.send("b");
            assertThatThrownBy(() -> m.send("c")).isInstanceOf(MailboxFullException.class);

            assertThat(m.send("a", deduplicated("full-1"))).isEqualTo(id);
            assertThatThrownBy(() -> m.send("c", deduplicated("full-2"))).isInstanceOf(MailboxFullException.class);
            assertCount(m, 2);
            // a refused send is not remembered: once there is room the id stores its message
            receiveOne(m).acknowledge();
            assertThat(m.send("c", deduplicated("full-2"))).isNotEqualTo(id);
            assertCount(m, 2);
        }

        @Test
        @DisplayName("an id is remembered for the deduplication window from the first send, then forgotten (without"
                + " a manual clock: remembered across real time, by single sends and batches)")
        void window() {
            Mailbox<String> m = newTextMailbox();
            if (!hasManualClock()) {
                // the window is DEDUPLICATION_WINDOW (5 min) of real time: waiting it out would cost 5 min per
                // backend, so without a manual clock only its first part runs, over a few ticks of real time
                String id = m.send("first", deduplicated("windowed"));
                List<String> ids = m.sendBatch(List.of("a", "b"), deduplicated("windowed-batch"));
                for (int i = 0; i < 3; i++) {
                    elapse(tick());
                    assertThat(m.send("again " + i, deduplicated("windowed"))).as("after %d ticks", i + 1).isEqualTo(id);
                    assertThat(m.sendBatch(List.of("a", "b"), deduplicated("windowed-batch"))).isEqualTo(ids);
                }
                assertCount(m, 3);
                assertThat(receiveAll(m, 3, LONG)).extracting(Message::body).containsExactlyInAnyOrder("first", "a", "b");
                return;
            }
            String id = m.send("first", deduplicated("windowed"));

            elapse(Limits.DEDUPLICATION_WINDOW.minus(tick()));
            assertThat(m.send("second", deduplicated("windowed"))).as("within the window").isEqualTo(id);
            assertCount(m, 1);

            elapse(tick());
            String later = m.send("third", deduplicated("windowed"));
            assertThat(later).as("after the window").isNotEqualTo(id);
            assertCount(m, 2);
            assertThat(m.send("fourth", deduplicated("windowed"))).as("remembered again").isEqualTo(later);
            assertThat(receiveAll(m, 2, LONG)).extracting(Message::body).containsExactlyInAnyOrder("first", "third");
        }

        @Test
        @DisplayName("an id sent through one mailbox object is remembered by another on the same queue (with"
                + " per-object deduplication: each object remembers the ids sent through it)")
        void idsAcrossObjects() {
            MailboxSpec<String> spec = MailboxSpec.of(uniqueName("dedup"), TEXT);
            Mailbox<String> m = newMailbox(spec);
            Mailbox<String> other = secondObject(spec);
            if (!m.capabilities().durableDeduplication()) {
                // each object remembers the ids sent through it: the sender still deduplicates its retries, and
                // another object deduplicates its own
                String id = m.send("x", deduplicated("retried-here"));
                List<String> ids = m.sendBatch(List.of("a", "b"), deduplicated("batch-here"));
                assertThat(m.send("x", deduplicated("retried-here"))).isEqualTo(id);
                assertThat(m.sendBatch(List.of("a", "b"), deduplicated("batch-here"))).isEqualTo(ids);
                String elsewhere = other.send("y", deduplicated("retried-elsewhere"));
                assertThat(other.send("y", deduplicated("retried-elsewhere"))).isEqualTo(elsewhere);
                assertCount(m, 4);
                assertThat(receiveAll(other, 4, LONG)).extracting(Message::body)
                        .containsExactlyInAnyOrder("x", "a", "b", "y");
                return;
            }

            String id = m.send("x", deduplicated("retried-elsewhere"));
            List<String> ids = m.sendBatch(List.of("a", "b"), deduplicated("batch-elsewhere"));

            assertThat(other.send("x", deduplicated("retried-elsewhere"))).isEqualTo(id);
            assertThat(other.sendBatch(List.of("a", "b"), deduplicated("batch-elsewhere"))).isEqualTo(ids);
            assertCount(other, 3);
        }
    }

    @Nested
    @DisplayName("waiting without a thread (AsyncReceiver)")
    class WaitingWithoutAThread {

        private <T> dev.mailbox.api.spi.AsyncReceiver<T> parkable(Mailbox<T> m) {
            dev.mailbox.api.spi.AsyncReceiver<T> a = dev.mailbox.api.spi.AsyncReceiver.of(m);
            Assumptions.assumeTrue(a != null, "this backend's receives wait on a thread");
            return a;
        }

        private <T> List<Message<T>> result(CompletableFuture<List<Message<T>>> f) {
            try {
                return f.get(REAL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (Exception e) {
                throw new AssertionError("the parked receive did not complete: " + e, e);
            }
        }

        @Test
        @DisplayName("a parked receive completes when a message is sent, and empty when its wait ends")
        void wakesOnSendAndEnds() {
            Mailbox<String> m = newTextMailbox();
            CompletableFuture<List<Message<String>>> woken =
                    parkable(m).receiveAsync(ReceiveOptions.defaults().withWaitTime(LONG_WAIT));
            assertThat(woken).isNotDone();
            m.send("wake");
            assertThat(result(woken)).extracting(Message::body).containsExactly("wake");

            CompletableFuture<List<Message<String>>> idle =
                    parkable(m).receiveAsync(ReceiveOptions.defaults().withWaitTime(ticks(2)));
            elapse(ticks(2));
            assertThat(result(idle)).isEmpty();
        }

        @Test
        @DisplayName("a parked receive wakes when a delay it did not know of ends")
        void wakesOnNewDelay() {
            Mailbox<String> m = newTextMailbox();
            CompletableFuture<List<Message<String>>> f =
                    parkable(m).receiveAsync(ReceiveOptions.defaults().withWaitTime(LONG_WAIT));
            m.send("later", SendOptions.defaults().withDelay(tick()));
            elapse(tick());
            assertThat(result(f)).extracting(Message::body).containsExactly("later");
        }

        @Test
        @DisplayName("twenty parked receives and twenty sends: every message reaches one of them, none is missed")
        void noWakeUpMissed() {
            Mailbox<String> m = newTextMailbox();
            List<CompletableFuture<List<Message<String>>>> parked = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                parked.add(parkable(m).receiveAsync(ReceiveOptions.defaults().withWaitTime(LONG_WAIT)
                        .withVisibilityTimeout(LONG)));
            }
            for (int i = 0; i < 20; i++) {
                m.send("m" + i);
            }
            Set<String> got = new HashSet<>();
            for (CompletableFuture<List<Message<String>>> f : parked) {
                result(f).forEach(msg -> got.add(msg.body()));
            }
            assertThat(got).hasSize(20);
        }

        @Test
        @DisplayName("a cancelled parked receive takes nothing: the next message goes to one still waiting, on its "
                + "first delivery")
        void cancelledTakesNothing() {
            Mailbox<String> m = newTextMailbox();
            CompletableFuture<List<Message<String>>> gaveUp =
                    parkable(m).receiveAsync(ReceiveOptions.defaults().withWaitTime(LONG_WAIT));
            CompletableFuture<List<Message<String>>> waiting =
                    parkable(m).receiveAsync(ReceiveOptions.defaults().withWaitTime(LONG_WAIT));
            gaveUp.cancel(false);
            m.send("x");
            List<Message<String>> got = result(waiting);
            assertThat(got).extracting(Message::body).containsExactly("x");
            assertThat(got.get(0).deliveryCount()).isEqualTo(1);
        }

        @Test
        @DisplayName("closing the mailbox completes its parked receives, empty")
        void closeEndsTheWait() {
            Mailbox<String> m = newTextMailbox();
            CompletableFuture<List<Message<String>>> f =
                    parkable(m).receiveAsync(ReceiveOptions.defaults().withWaitTime(LONG_WAIT));
            m.close();
            assertThat(result(f)).isEmpty();
        }

        @Test
        @DisplayName("a parked receive through a fenced view under an overtaken epoch fails with FencedException")
        void fencedViewParks() {
            Mailbox<String> m = newTextMailbox();
            m.fenced(2).receive(ReceiveOptions.defaults());
            Throwable thrown;
            try {
                CompletableFuture<List<Message<String>>> f =
                        parkable(m.fenced(1)).receiveAsync(ReceiveOptions.defaults().withWaitTime(LONG_WAIT));
                thrown = org.assertj.core.api.Assertions.catchThrowable(() -> f.get(REAL_TIMEOUT.toMillis(),
                        TimeUnit.MILLISECONDS));
                thrown = thrown instanceof ExecutionException ? thrown.getCause() : thrown;
            } catch (FencedException e) {
                thrown = e;
            }
            assertThat(thrown).isInstanceOf(FencedException.class);

            CompletableFuture<List<Message<String>>> current =
                    parkable(m.fenced(2)).receiveAsync(ReceiveOptions.defaults().withWaitTime(LONG_WAIT));
            m.send("for the holder");
            assertThat(result(current)).extracting(Message::body).containsExactly("for the holder");
        }
    }

    // ------------------------------------------------------------------ groups kept in files of their own

    @Nested
    @DisplayName("FIFO mailboxes")
    class Fifo extends FifoContract {
        Fifo() {
            super(MailboxContract.this);
        }
    }

    @Nested
    @DisplayName("fairness between tenants")
    class Fairness extends FairnessContract {
        Fairness() {
            super(MailboxContract.this);
        }
    }

    @Nested
    @DisplayName("late acknowledgement")
    class LateAcknowledgement extends LateAcknowledgementContract {
        LateAcknowledgement() {
            super(MailboxContract.this);
        }
    }
}
