package dev.mailbox.sqs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.api.Codec;
import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.MailboxUnavailableException;
import dev.mailbox.api.SendOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequest;
import software.amazon.awssdk.services.sqs.model.SendMessageRequest;

/** Send deduplication on SQS: this object's on a standard queue, SQS's own on a FIFO queue. */
class SqsDeduplicationTest {

    private final InterceptedClient sqs = new InterceptedClient();
    /** Every send request that left, by type. */
    private final List<String> sends = new CopyOnWriteArrayList<>();
    private final List<SqsMailbox<?>> made = new ArrayList<>();

    SqsDeduplicationTest() {
        sqs.beforeSending(r -> {
            if (r instanceof SendMessageRequest || r instanceof SendMessageBatchRequest) {
                sends.add(r.getClass().getSimpleName());
            }
        });
    }

    @AfterEach
    void cleanUp() {
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

    private static SendOptions id(String id) {
        return SendOptions.defaults().withDeduplicationId(id);
    }

    private SqsMailbox<String> standard(String name) {
        SqsMailbox<String> m = SqsMailbox.builder(name, Codec.utf8()).client(sqs.client()).createIfMissing(true).build();
        made.add(m);
        return m;
    }

    private SqsMailbox<String> fifo(String name) {
        SqsMailbox<String> m = SqsMailbox.builder(name, Codec.utf8()).client(sqs.client()).createIfMissing(true)
                .fifo(FifoOptions.defaults()).build();
        made.add(m);
        return m;
    }

    private static String unique(String hint) {
        return hint + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @Test
    @DisplayName("standard queue: a retry through the same object sends nothing; through another object it is stored again")
    void standardQueueRemembersPerObject() {
        SqsMailbox<String> m = standard(unique("std"));
        SqsMailbox<String> other = standard(m.name());
        assertThat(m.capabilities().durableDeduplication()).isFalse();
        String first = m.send("x", id("order-1"));
        List<String> batch = m.sendBatch(List.of("a", "b"), id("batch-1"));
        sends.clear();

        assertThat(m.send("x", id("order-1"))).isEqualTo(first);
        assertThat(m.sendBatch(List.of("a", "b"), id("batch-1"))).isEqualTo(batch);
        assertThat(sends).as("requests for the duplicates").isEmpty();

        assertThat(other.send("x", id("order-1"))).as("another object does not know the id").isNotEqualTo(first);
        assertThat(m.approximateCount()).isEqualTo(4);
    }

    @Test
    @DisplayName("standard queue: a send that failed is not remembered, so its retry is stored")
    void failedSendForgotten() {
        SqsMailbox<String> m = standard(unique("fail"));
        AtomicBoolean failOnce = new AtomicBoolean(true);
        sqs.beforeSending(r -> {
            if (r instanceof SendMessageRequest && failOnce.getAndSet(false)) {
                throw SdkClientException.create("the network dropped the request");
            }
        });

        assertThatThrownBy(() -> m.send("x", id("retried"))).isInstanceOf(MailboxUnavailableException.class);
        String stored = m.send("x", id("retried"));

        assertThat(m.send("x", id("retried"))).isEqualTo(stored);
        assertThat(m.approximateCount()).isEqualTo(1);
    }

    @Test
    @DisplayName("FIFO queue: SQS remembers the ids, so a retry through another object returns the first ids, 128-character ids in a batch too")
    void fifoAcrossObjects() {
        String name = unique("fifo");
        SqsMailbox<String> m = fifo(name);
        SqsMailbox<String> other = fifo(name);
        assertThat(m.queueUrl()).endsWith(name + ".fifo");
        assertThat(m.capabilities().durableDeduplication()).isTrue();
        assertThat(m.capabilities().atomicFencing()).isFalse();
        assertThat(m.capabilities().fifo()).isTrue();
        String longest = "L".repeat(128); // in a batch, longest + "/0" is over SQS's 128 characters

        String first = m.send("x", id(longest).withGroupId("g"));
        List<String> batch = m.sendBatch(List.of("a", "b"), id(longest).withGroupId("g"));

        assertThat(other.send("x again", id(longest).withGroupId("h"))).isEqualTo(first);
        assertThat(other.sendBatch(List.of("a", "b", "c"), id(longest).withGroupId("g")).subList(0, 2)).isEqualTo(batch);
        assertThat(List.of(first, batch.get(0), batch.get(1))).doesNotHaveDuplicates();
        assertThat(m.approximateCount()).isEqualTo(4);
    }

    @Test
    @DisplayName("FIFO queue: a delay or a missing group id is refused before anything is sent, and names over 75 characters are refused")
    void fifoRefusals() {
        SqsMailbox<String> m = fifo(unique("delay"));
        sends.clear();

        assertThatThrownBy(() -> m.send("x", SendOptions.defaults().withGroupId("g").withDelay(Duration.ofSeconds(1))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("FIFO").hasMessageContaining("delay");
        assertThatThrownBy(() -> m.sendBatch(List.of("x"), SendOptions.defaults().withGroupId("g")
                .withDelay(Duration.ofSeconds(1))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("FIFO");
        assertThatThrownBy(() -> m.send("x", id("d"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("group id");
        assertThat(sends).isEmpty();

        assertThatThrownBy(() -> fifo("n".repeat(76)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most 75");
    }
}
