package dev.mailbox.sqs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.api.Codec;
import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.MailboxCapabilities;
import dev.mailbox.api.MailboxException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.api.SendOptions;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.services.sqs.model.CreateQueueRequest;
import software.amazon.awssdk.services.sqs.model.GetQueueAttributesResponse;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueDoesNotExistException;
import software.amazon.awssdk.services.sqs.model.ReceiveMessageRequest;
import software.amazon.awssdk.services.sqs.model.ReceiveMessageResponse;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequest;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.SendMessageRequest;

/**
 * What {@link SqsMailbox} itself does for FIFO queues, beyond the kit's FIFO group (which {@code ElasticMqContractTest}
 * runs): the queue it makes, the deduplication ids it sends (and which it leaves to SQS), how it reads an existing
 * queue, ReceiveRequestAttemptId, and group ids on standard queues. Requests are looked at as they leave, on the
 * shared ElasticMQ.
 */
class SqsFifoTest {

    private static final ReceiveOptions NOW = ReceiveOptions.defaults().withMaxMessages(10)
            .withVisibilityTimeout(Duration.ofMinutes(5));

    private final InterceptedClient sqs = new InterceptedClient();
    /** Every request that left, in order. */
    private final List<SdkRequest> sent = new CopyOnWriteArrayList<>();
    private final List<String> queues = new ArrayList<>();
    private final List<SqsMailbox<?>> made = new ArrayList<>();

    SqsFifoTest() {
        sqs.beforeSending(sent::add);
    }

    @AfterEach
    void cleanUp() {
        made.forEach(SqsMailbox::close);
        for (String url : queues) {
            try {
                sqs.client().deleteQueue(r -> r.queueUrl(url));
            } catch (RuntimeException ignored) {
                // deleted already
            }
        }
        sqs.close();
    }

    private static String unique(String hint) {
        return hint + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static SendOptions group(String group) {
        return SendOptions.defaults().withGroupId(group);
    }

    private SqsMailbox.Builder<String> builder(String name) {
        return SqsMailbox.builder(name, Codec.utf8()).client(sqs.client()).createIfMissing(true);
    }

    private SqsMailbox<String> keep(SqsMailbox<String> m) {
        made.add(m);
        queues.add(m.queueUrl());
        return m;
    }

    private SqsMailbox<String> fifo(String name, FifoOptions options) {
        return keep(builder(name).fifo(options).build());
    }

    /** A FIFO queue made by another tool, with these attributes. */
    private String foreignFifoQueue(String name, Map<QueueAttributeName, String> attributes) {
        Map<QueueAttributeName, String> all = new java.util.EnumMap<>(attributes);
        all.put(QueueAttributeName.FIFO_QUEUE, "true");
        String url = sqs.client().createQueue(r -> r.queueName(name + ".fifo").attributes(all)).queueUrl();
        queues.add(url);
        return url;
    }

    private <R extends SdkRequest> List<R> sentOf(Class<R> type) {
        return sent.stream().filter(type::isInstance).map(type::cast).toList();
    }

    private List<String> deduplicationIdsSent() {
        List<String> ids = new ArrayList<>();
        for (SdkRequest r : sent) {
            if (r instanceof SendMessageRequest s) {
                ids.add(s.messageDeduplicationId());
            } else if (r instanceof SendMessageBatchRequest b) {
                b.entries().forEach(e -> ids.add(e.messageDeduplicationId()));
            }
        }
        return ids;
    }

    private static List<String> bodies(List<Message<String>> messages) {
        return messages.stream().map(Message::body).toList();
    }

    @Test
    @DisplayName("fifo(options) makes a .fifo queue whose attributes do what the options ask, and declares what SQS keeps")
    void createsTheQueue() {
        String name = unique("made");
        SqsMailbox<String> m = fifo(name, FifoOptions.defaults().withContentBasedDeduplication(true)
                .withDeduplicationScope(FifoOptions.DeduplicationScope.GROUP));

        assertThat(m.queueUrl()).endsWith(name + ".fifo");
        CreateQueueRequest create = sentOf(CreateQueueRequest.class).get(0);
        assertThat(create.queueName()).isEqualTo(name + ".fifo");
        assertThat(create.attributes()).containsEntry(QueueAttributeName.FIFO_QUEUE, "true")
                .containsEntry(QueueAttributeName.CONTENT_BASED_DEDUPLICATION, "true")
                .containsEntry(QueueAttributeName.DEDUPLICATION_SCOPE, "messageGroup")
                .containsEntry(QueueAttributeName.FIFO_THROUGHPUT_LIMIT, "perMessageGroupId");
        assertThat(sqs.client().getQueueAttributes(r -> r.queueUrl(m.queueUrl())
                .attributeNames(QueueAttributeName.CONTENT_BASED_DEDUPLICATION)).attributes())
                .containsEntry(QueueAttributeName.CONTENT_BASED_DEDUPLICATION, "true");

        MailboxCapabilities c = m.capabilities();
        assertThat(c.fifo()).isTrue();
        assertThat(c.durableDeduplication()).as("SQS keeps the ids").isTrue();
        assertThat(c.lateAcknowledge()).as("SQS expires a FIFO queue's handles with the visibility").isFalse();
        assertThat(c.holdsRuns()).as("ElasticMQ does not, AWS does: no promise").isFalse();
        assertThat(c.sharedDeliveryState()).isFalse();
        assertThat(c.fairness()).isFalse();

        SqsMailbox<String> queueScope = fifo(unique("made"), FifoOptions.defaults());
        assertThat(sentOf(CreateQueueRequest.class).get(1).attributes())
                .containsEntry(QueueAttributeName.CONTENT_BASED_DEDUPLICATION, "false")
                .containsEntry(QueueAttributeName.DEDUPLICATION_SCOPE, "queue")
                .containsEntry(QueueAttributeName.FIFO_THROUGHPUT_LIMIT, "perQueue");
        assertThat(queueScope.capabilities().fifo()).isTrue();
    }

    @Test
    @DisplayName("content-based deduplication is left to SQS where the queue does it: a send without an id carries none")
    void contentLeftToSqs() {
        SqsMailbox<String> m = fifo(unique("content"), FifoOptions.defaults().withContentBasedDeduplication(true));
        sent.clear();

        String first = m.send("same", group("a"));
        assertThat(m.send("same", group("b"))).isEqualTo(first);
        List<String> batch = m.sendBatch(List.of("p", "p"), group("c"));

        assertThat(deduplicationIdsSent()).containsOnlyNulls().hasSize(4);
        assertThat(batch.get(1)).isEqualTo(batch.get(0));
        assertThat(bodies(m.receive(NOW))).containsExactlyInAnyOrder("same", "p");
    }

    @Test
    @DisplayName("where the queue does not deduplicate by content, the id sent is the body's SHA-256, the same id another producer would send")
    void contentHashedHere() {
        String name = unique("hashed");
        String url = foreignFifoQueue(name, Map.of(QueueAttributeName.CONTENT_BASED_DEDUPLICATION, "false"));
        SqsMailbox<String> m = keep(builder(name).fifo(FifoOptions.defaults().withContentBasedDeduplication(true))
                .build());
        sent.clear();

        String id = m.send("same", group("a"));
        String sha = FifoOptions.contentDeduplicationId("same".getBytes(StandardCharsets.UTF_8));
        assertThat(deduplicationIdsSent()).containsExactly(sha);
        String foreign = sqs.client().sendMessage(r -> r.queueUrl(url).messageBody("same").messageGroupId("x")
                .messageDeduplicationId(sha)).messageId();
        assertThat(foreign).as("a producer sending the body's SHA-256 sends a duplicate").isEqualTo(id);
        assertThat(m.send("other", group("a"))).isNotEqualTo(id);
        assertThat(m.send("same", group("a").withDeduplicationId("explicit"))).isNotEqualTo(id);
    }

    @Test
    @DisplayName("without content-based deduplication a send without an id gets a random one, so a queue that deduplicates by content keeps both")
    void randomIdOnContentQueue() {
        String name = unique("random");
        foreignFifoQueue(name, Map.of(QueueAttributeName.CONTENT_BASED_DEDUPLICATION, "true"));
        SqsMailbox<String> m = keep(builder(name).fifo(FifoOptions.defaults()).build());
        sent.clear();

        String one = m.send("same", group("a"));
        String two = m.send("same", group("a"));
        List<String> batch = m.sendBatch(List.of("same", "same"), group("a"));

        assertThat(List.of(one, two, batch.get(0), batch.get(1))).doesNotHaveDuplicates();
        assertThat(deduplicationIdsSent()).doesNotContainNull().doesNotHaveDuplicates();
        assertThat(bodies(m.receive(NOW))).containsExactly("same", "same", "same", "same");
    }

    @Test
    @DisplayName("the group scope: the group goes into the id where the queue does not report DeduplicationScope messageGroup (ElasticMQ), and stays out where it does (AWS)")
    void groupScope() {
        FifoOptions perGroup = FifoOptions.defaults().withDeduplicationScope(FifoOptions.DeduplicationScope.GROUP);
        SqsMailbox<String> here = fifo(unique("scope"), perGroup);
        sent.clear();
        String a = here.send("x", group("a").withDeduplicationId("d1"));
        assertThat(here.send("y", group("b").withDeduplicationId("d1"))).isNotEqualTo(a);
        assertThat(here.send("z", group("a").withDeduplicationId("d1"))).isEqualTo(a);
        here.sendBatch(List.of("p"), group("a:b").withDeduplicationId("c"));
        here.sendBatch(List.of("q"), group("a").withDeduplicationId("b:c"));
        assertThat(deduplicationIdsSent()).containsExactly("1:a:d1", "1:b:d1", "1:a:d1", "3:a:b:c/0", "1:a:b:c/0");

        // as AWS answers for a queue made with DeduplicationScope messageGroup
        sqs.rewriteAnswer(r -> r instanceof GetQueueAttributesResponse g ? g.toBuilder().attributes(withScope(g))
                .build() : r);
        SqsMailbox<String> aws = keep(builder(unique("aws")).fifo(perGroup).build());
        sent.clear();
        aws.send("x", group("a").withDeduplicationId("d1"));
        assertThat(deduplicationIdsSent()).containsExactly("d1");
        assertThatThrownBy(() -> builder(aws.name()).fifo(FifoOptions.defaults()).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("DeduplicationScope")
                .hasMessageContaining("messageGroup");
    }

    private static Map<QueueAttributeName, String> withScope(GetQueueAttributesResponse response) {
        Map<QueueAttributeName, String> a = new java.util.EnumMap<>(QueueAttributeName.class);
        a.putAll(response.attributes());
        a.put(QueueAttributeName.DEDUPLICATION_SCOPE, "messageGroup");
        return a;
    }

    @Test
    @DisplayName("a FIFO queue given by URL, without options, is a FIFO mailbox with the queue's own deduplication")
    void existingQueueByUrl() {
        String name = unique("byurl");
        String url = foreignFifoQueue(name, Map.of(QueueAttributeName.CONTENT_BASED_DEDUPLICATION, "true"));
        SqsMailbox<String> m = SqsMailbox.builder(name, Codec.utf8()).client(sqs.client()).queueUrl(url).build();
        made.add(m);
        SqsMailbox<String> byName = SqsMailbox.builder(name, Codec.utf8()).client(sqs.client())
                .queueAttribute(QueueAttributeName.FIFO_QUEUE, "true").build();
        made.add(byName);

        assertThat(m.capabilities().fifo()).isTrue();
        String first = m.send("same", group("a"));
        assertThat(byName.send("same", group("b"))).as("the queue deduplicates by content").isEqualTo(first);
        assertThatThrownBy(() -> m.send("no group")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("group id");
        Message<String> got = m.receive(NOW).get(0);
        assertThat(got.groupId()).isEqualTo("a");
        assertThat(got.sequenceNumber()).matches("[0-9]+");
    }

    @Test
    @DisplayName("the builder refuses contradictions and a dead-letter mailbox of the other kind, before it creates anything")
    void builderRefusals() {
        String name = unique("refused");
        assertThatThrownBy(() -> builder(name).fifo(FifoOptions.defaults())
                .queueAttribute(QueueAttributeName.FIFO_QUEUE, "false").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("FifoQueue");
        assertThatThrownBy(() -> builder(name).fifo(FifoOptions.defaults())
                .queueAttribute(QueueAttributeName.CONTENT_BASED_DEDUPLICATION, "true").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ContentBasedDeduplication");
        SqsMailbox<String> standardDlq = keep(builder(unique("dlq")).build());
        assertThatThrownBy(() -> builder(name).fifo(FifoOptions.defaults())
                .redrivePolicy(RedrivePolicy.of(3, standardDlq)).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("FIFO");
        assertThatThrownBy(() -> builder("n".repeat(76)).fifo(FifoOptions.defaults()).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most 75");
        assertThatThrownBy(() -> sqs.client().getQueueUrl(r -> r.queueName(name + ".fifo")))
                .as("nothing was created").isInstanceOf(QueueDoesNotExistException.class);

        SqsMailbox<String> fifoQueue = fifo(unique("kind"), FifoOptions.defaults());
        assertThatThrownBy(() -> SqsMailbox.builder(name, Codec.utf8()).client(sqs.client())
                .queueUrl(standardDlq.queueUrl()).fifo(FifoOptions.defaults()).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("a standard queue");
        assertThatThrownBy(() -> SqsMailbox.builder(name, Codec.utf8()).client(sqs.client())
                .queueUrl(fifoQueue.queueUrl()).queueAttribute(QueueAttributeName.FIFO_QUEUE, "false").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("a FIFO queue");
        assertThatThrownBy(() -> SqsMailbox.builder(name, Codec.utf8()).client(sqs.client())
                .queueUrl(standardDlq.queueUrl()).redrivePolicy(RedrivePolicy.of(3, fifoQueue)).build())
                .as("the kind of a queue given by URL is known once it is read")
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("standard");
        assertThat(sqs.client().getQueueAttributes(r -> r.queueUrl(standardDlq.queueUrl())
                .attributeNames(QueueAttributeName.REDRIVE_POLICY)).attributes())
                .as("no redrive policy was set").doesNotContainKey(QueueAttributeName.REDRIVE_POLICY);
        assertThatThrownBy(() -> SqsMailbox.builder(unique("missing"), Codec.utf8()).client(sqs.client())
                .fifo(FifoOptions.defaults()).build())
                .isInstanceOf(MailboxException.class).hasMessageContaining(".fifo");
    }

    @Test
    @DisplayName("each receive of a FIFO queue carries a ReceiveRequestAttemptId of its own; a standard queue's carries none")
    void attemptIds() {
        SqsMailbox<String> m = fifo(unique("attempts"), FifoOptions.defaults());
        SqsMailbox<String> standard = keep(builder(unique("standard")).build());
        m.send("a1", group("a"));
        sent.clear();

        assertThat(bodies(m.receive(NOW))).containsExactly("a1");
        assertThat(m.receive(NOW)).isEmpty();
        standard.receive(NOW);

        List<ReceiveMessageRequest> receives = sentOf(ReceiveMessageRequest.class);
        assertThat(receives).hasSize(3);
        assertThat(receives.get(0).receiveRequestAttemptId()).isNotNull()
                .isNotEqualTo(receives.get(1).receiveRequestAttemptId());
        assertThat(receives.get(2).receiveRequestAttemptId()).isNull();
    }

    @Test
    @DisplayName("a receive whose answer is lost is sent again by the SDK with the same attempt id and gets the same messages, not an empty group")
    void lostAnswerRetried() {
        SqsMailbox<String> m = fifo(unique("lost"), FifoOptions.defaults());
        m.sendBatch(List.of("a1", "a2"), group("a"));
        sent.clear();
        AtomicBoolean lose = new AtomicBoolean(true);
        sqs.afterAnswer(r -> {
            if (r instanceof ReceiveMessageResponse answer && answer.hasMessages() && lose.getAndSet(false)) {
                throw new UncheckedIOException(new java.io.IOException("connection reset while reading the answer"));
            }
        });

        List<Message<String>> got = m.receive(NOW);

        List<ReceiveMessageRequest> receives = sentOf(ReceiveMessageRequest.class);
        assertThat(receives).as("the SDK sent it again").hasSize(2);
        assertThat(receives.get(1).receiveRequestAttemptId()).isEqualTo(receives.get(0).receiveRequestAttemptId());
        assertThat(bodies(got)).containsExactly("a1", "a2");
        // SQS hands out the same receipt handles again; ElasticMQ makes new ones and counts a second receive
        assertThat(got).allSatisfy(x -> assertThat(x.deliveryCount()).isBetween(1, 2));
        got.forEach(Message::acknowledge);
        assertThat(m.approximateCount()).isZero();
    }

    @Test
    @DisplayName("a standard queue gets the group id as MessageGroupId; a server that refuses it (ElasticMQ 1.6.11) gets the message without, once")
    void groupIdOnStandardQueue() {
        SqsMailbox<String> m = keep(builder(unique("tenant")).build());
        sent.clear();

        m.send("t1", group("tenant-1"));
        m.send("t2", group("tenant-1"));
        m.sendBatch(List.of("b1", "b2"), group("tenant-2"));
        m.send("plain");

        List<String> groups = new ArrayList<>();
        for (SdkRequest r : sent) {
            if (r instanceof SendMessageRequest s) {
                groups.add(s.messageBody() + "=" + s.messageGroupId());
            } else if (r instanceof SendMessageBatchRequest b) {
                b.entries().forEach(e -> groups.add(e.messageBody() + "=" + e.messageGroupId()));
            }
        }
        // the first send with the group is refused and made again without it; after that none carries it
        assertThat(groups).containsExactly("t1=tenant-1", "t1=null", "t2=null", "b1=null", "b2=null", "plain=null");
        List<Message<String>> got = new ArrayList<>();
        for (int i = 0; i < 5 && got.size() < 5; i++) {
            got.addAll(m.receive(NOW.withWaitTime(Duration.ofSeconds(1))));
        }
        assertThat(bodies(got)).containsExactlyInAnyOrder("t1", "t2", "b1", "b2", "plain");
        assertThat(got).allSatisfy(x -> assertThat(x.groupId()).isNull());
        assertThat(m.capabilities().fairness()).isFalse();
    }

    @Test
    @DisplayName("a batch to a standard queue whose entries are refused for the group id alone is sent again without it")
    void groupIdRefusedInBatch() {
        SqsMailbox<String> m = keep(builder(unique("tenants")).build());
        sent.clear();

        List<String> ids = m.sendBatch(List.of("b1", "b2", "b3"), group("tenant"));

        List<SendMessageBatchRequest> batches = sentOf(SendMessageBatchRequest.class);
        assertThat(batches).hasSize(2);
        assertThat(batches.get(0).entries()).extracting(SendMessageBatchRequestEntry::messageGroupId)
                .containsOnly("tenant");
        assertThat(batches.get(1).entries()).extracting(SendMessageBatchRequestEntry::messageGroupId).containsOnlyNulls();
        assertThat(ids).doesNotContainNull().doesNotHaveDuplicates();
        assertThat(m.approximateCount()).isEqualTo(3);
    }
}
