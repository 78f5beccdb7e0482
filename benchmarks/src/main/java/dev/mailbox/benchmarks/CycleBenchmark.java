package dev.mailbox.benchmarks;

import dev.mailbox.api.Codec;
import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import dev.mailbox.inmemory.InMemoryMailbox;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One send→receive→ack cycle on one thread, per implementation, next to the
 * {@link LinkedBlockingQueue} offer+poll baseline:
 * {@code java -jar benchmarks/target/benchmarks.jar CycleBenchmark}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class CycleBenchmark {

    /** Which queue. */
    @Param({"LinkedBlockingQueue", "InMemoryMailbox-utf8", "InMemoryMailbox-reference", "InMemoryMailbox-fifo"})
    public String impl;

    private static final String BODY = "hello, mailbox";
    private static final ReceiveOptions ONE = ReceiveOptions.defaults();

    private static final SendOptions[] GROUPS = java.util.stream.IntStream.range(0, 1000)
            .mapToObj(i -> SendOptions.defaults().withGroupId("g" + i)).toArray(SendOptions[]::new);

    private LinkedBlockingQueue<String> queue;
    private Mailbox<String> mailbox;
    private boolean grouped;
    private int next;

    /** Builds the queue under test. */
    @Setup(Level.Trial)
    public void setUp() {
        switch (impl) {
            case "LinkedBlockingQueue" -> queue = new LinkedBlockingQueue<>();
            case "InMemoryMailbox-utf8" -> mailbox = InMemoryMailbox.builder("bench", Codec.utf8()).build();
            case "InMemoryMailbox-reference" -> mailbox = new InMemoryMailbox<>("bench");
            case "InMemoryMailbox-fifo" -> {
                mailbox = InMemoryMailbox.builder("bench", Codec.utf8()).fifo(FifoOptions.defaults()).build();
                grouped = true; // 1,000 groups in turn
            }
            default -> throw new IllegalArgumentException("unknown impl " + impl);
        }
    }

    /** Closes the mailbox. */
    @TearDown(Level.Trial)
    public void tearDown() {
        if (mailbox != null) {
            mailbox.close();
        }
    }

    /** @return the received body, so the JIT cannot drop the work */
    @Benchmark
    public Object cycle() {
        if (queue != null) {
            queue.offer(BODY);
            return queue.poll();
        }
        if (grouped) {
            mailbox.send(BODY, GROUPS[next++ % GROUPS.length]);
        } else {
            mailbox.send(BODY);
        }
        Message<String> m = mailbox.receive(ONE).get(0);
        m.acknowledge();
        return m.body();
    }
}
