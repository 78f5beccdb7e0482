package dev.mailbox.benchmarks;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Limits;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.redis.RedisMailbox;
import dev.mailbox.sqsendpoint.QueueDirectory;
import dev.mailbox.sqsendpoint.SqsEndpoint;
import dev.mailbox.testkit.redis.RedisServerProcess;
import java.net.URI;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.IntStream;
import org.elasticmq.rest.sqs.SQSRestServer;
import org.elasticmq.rest.sqs.SQSRestServerBuilder;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;

/**
 * The SQS endpoint (over in-memory mailboxes, and over Redis when a redis-server is found) side by side with
 * embedded ElasticMQ, both driven by the same AWS SDK v2 client code (URLConnection HTTP client, one thread),
 * alternating in blocks inside each round. Three workloads on each, with issue 32's targets (endpoint / ElasticMQ:
 * at least 1.5 over memory, 1.0 over Redis): a standard queue's send, receive, delete; the same on a FIFO queue
 * with 100 message groups (each send to the next group, with its own deduplication id); and batches of ten on a
 * standard queue. A backend without FIFO mailboxes would have its FIFO row skipped; memory and Redis both have them.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.mailbox.benchmarks.SqsEndpointHarness [--quick]
 * </pre>
 */
public final class SqsEndpointHarness {

    private static final String BODY = "hello, mailbox";
    private static final int BLOCK = 20;

    private final long roundNanos;
    private final int rounds;

    private SqsEndpointHarness(boolean quick) {
        this.roundNanos = (quick ? 1_000L : 3_000L) * 1_000_000;
        this.rounds = quick ? 3 : 5;
    }

    /**
     * @param args {@code --quick} for a short run
     * @throws Exception if a benchmark fails
     */
    public static void main(String[] args) throws Exception {
        LibraryLog.toFile("sqs-endpoint");
        SqsEndpointHarness h = new SqsEndpointHarness(Arrays.asList(args).contains("--quick"));
        SQSRestServer elasticMq = SQSRestServerBuilder.withInterface("127.0.0.1").withDynamicPort().start();
        int port = elasticMq.waitUntilStarted().localAddress().getPort();
        RedisServerProcess redis = RedisServerProcess.available() ? RedisServerProcess.start() : null;
        try (SqsEndpoint memory = SqsEndpoint.builder().authenticationOff().queues(QueueDirectory.inMemory(
                     (name, fifo) -> {
                         InMemoryMailbox.Builder<byte[]> b = InMemoryMailbox.builder(name, Codec.bytes())
                                 .maxMessageBytes(Limits.MAX_MESSAGE_BYTES);
                         if (fifo != null) {
                             b.fifo(fifo);
                         }
                         return b.build();
                     })).start();
             SqsClient toElasticMq = client(URI.create("http://127.0.0.1:" + port));
             SqsClient toMemory = client(memory.url())) {
            System.out.printf(Locale.ROOT, "Mailbox SQS endpoint harness: endpoint on %s vs embedded ElasticMQ on"
                            + " 127.0.0.1:%d, JDK %s, %d cores, %d rounds of %d ms, one client thread each%n%n",
                    memory.url(), port, System.getProperty("java.version"), Runtime.getRuntime().availableProcessors(),
                    h.rounds, h.roundNanos / 1_000_000);
            h.compare("memory", toElasticMq, toMemory, 1.5);
            if (redis != null) {
                try (SqsEndpoint onRedis = SqsEndpoint.builder().authenticationOff().queues(QueueDirectory.inMemory(
                             (name, fifo) -> {
                                 RedisMailbox.Builder<byte[]> b = RedisMailbox.builder(name, Codec.bytes())
                                         .uri(redis.uri()).maxMessageBytes(Limits.MAX_MESSAGE_BYTES);
                                 if (fifo != null) {
                                     b.fifo(fifo);
                                 }
                                 return b.build();
                             })).start();
                     SqsClient toRedis = client(onRedis.url())) {
                    System.out.println();
                    h.compare("Redis " + redis.uri(), toElasticMq, toRedis, 1.0);
                }
            } else {
                System.out.println("\n(no redis-server found: the Redis rows are left out)");
            }
        } finally {
            if (redis != null) {
                redis.close();
            }
            elasticMq.stopAndWait();
        }
    }

    private static SqsClient client(URI endpoint) {
        return SqsClient.builder().endpointOverride(endpoint).region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("bench", "bench")))
                .httpClientBuilder(UrlConnectionHttpClient.builder()).build();
    }

    private void compare(String backend, SqsClient baseline, SqsClient candidate, double target) throws Exception {
        String queue = "bench-" + backend.replaceAll("[^a-z]", "").substring(0, Math.min(5, backend.length()));
        String baseUrl = baseline.createQueue(r -> r.queueName(queue)).queueUrl();
        String candUrl = candidate.createQueue(r -> r.queueName(queue)).queueUrl();
        String verdict = String.format(Locale.ROOT, "endpoint / ElasticMQ >= %.1f", target);
        double[] cycles = Rounds.medianPair(rounds, () -> interleaved(baseline, baseUrl, candidate, candUrl,
                Workload.STANDARD));
        System.out.println("endpoint over " + backend + ":");
        System.out.println("  1. SendMessage -> ReceiveMessage -> DeleteMessage, 3 requests per cycle (median round)");
        Rounds.row("ElasticMQ (baseline)", cycles[0], "cycles/s", 1.0);
        Rounds.row("endpoint", cycles[1], "cycles/s", cycles[1] / cycles[0]);
        Rounds.verdict(verdict, cycles[1] / cycles[0], target);

        System.out.println("  2. the same on a FIFO queue, 100 message groups (median round)");
        String fifoUrl = fifoQueue(candidate, queue + ".fifo");
        if (fifoUrl == null) {
            System.out.println("     skipped: this backend has no FIFO mailboxes yet");
        } else {
            String baseFifo = fifoQueue(baseline, queue + ".fifo");
            double[] fifo = Rounds.medianPair(rounds, () -> interleaved(baseline, baseFifo, candidate, fifoUrl,
                    Workload.FIFO));
            Rounds.row("ElasticMQ (baseline)", fifo[0], "cycles/s", 1.0);
            Rounds.row("endpoint", fifo[1], "cycles/s", fifo[1] / fifo[0]);
            Rounds.verdict(verdict, fifo[1] / fifo[0], target);
        }

        double[] batches = Rounds.medianPair(rounds, () -> interleaved(baseline, baseUrl, candidate, candUrl,
                Workload.BATCH));
        System.out.println("  3. SendMessageBatch(10) -> ReceiveMessage(10) -> DeleteMessageBatch(10) (median round)");
        Rounds.row("ElasticMQ (baseline)", batches[0], "msgs/s", 1.0);
        Rounds.row("endpoint", batches[1], "msgs/s", batches[1] / batches[0]);
        Rounds.verdict(verdict, batches[1] / batches[0], target);
    }

    /** @return the queue's URL, or null where the endpoint's backend refuses FIFO queues */
    private static String fifoQueue(SqsClient sqs, String name) {
        try {
            return sqs.createQueue(r -> r.queueName(name).attributes(java.util.Map.of(
                    software.amazon.awssdk.services.sqs.model.QueueAttributeName.FIFO_QUEUE, "true"))).queueUrl();
        } catch (software.amazon.awssdk.services.sqs.model.SqsException e) {
            if (e.awsErrorDetails().errorCode().endsWith("UnsupportedOperation")) {
                return null;
            }
            throw e;
        }
    }

    private enum Workload { STANDARD, FIFO, BATCH }

    private static final java.util.concurrent.atomic.AtomicLong SENT = new java.util.concurrent.atomic.AtomicLong();

    /** Baseline and candidate alternate in blocks; returns cycles/s (or msgs/s for batches) of each. */
    private double[] interleaved(SqsClient a, String aUrl, SqsClient b, String bUrl, Workload workload) {
        long aNanos = 0;
        long bNanos = 0;
        long aCount = 0;
        long bCount = 0;
        long end = System.nanoTime() + roundNanos;
        while (System.nanoTime() < end) {
            long t0 = System.nanoTime();
            aCount += run(workload, a, aUrl);
            long t1 = System.nanoTime();
            bCount += run(workload, b, bUrl);
            long t2 = System.nanoTime();
            aNanos += t1 - t0;
            bNanos += t2 - t1;
        }
        return new double[] {aCount / (aNanos / 1e9), bCount / (bNanos / 1e9)};
    }

    private static long run(Workload workload, SqsClient sqs, String url) {
        return switch (workload) {
            case STANDARD -> cycles(sqs, url, false);
            case FIFO -> cycles(sqs, url, true);
            case BATCH -> batches(sqs, url);
        };
    }

    private static long cycles(SqsClient sqs, String url, boolean fifo) {
        for (int i = 0; i < BLOCK; i++) {
            if (fifo) {
                long n = SENT.incrementAndGet();
                sqs.sendMessage(r -> r.queueUrl(url).messageBody(BODY).messageGroupId("g" + (n % 100))
                        .messageDeduplicationId("d" + n));
            } else {
                sqs.sendMessage(r -> r.queueUrl(url).messageBody(BODY));
            }
            List<Message> got = List.of();
            while (got.isEmpty()) {
                got = sqs.receiveMessage(r -> r.queueUrl(url).maxNumberOfMessages(1).waitTimeSeconds(0)).messages();
            }
            String handle = got.get(0).receiptHandle();
            sqs.deleteMessage(r -> r.queueUrl(url).receiptHandle(handle));
        }
        return BLOCK;
    }

    private static final List<SendMessageBatchRequestEntry> TEN = IntStream.range(0, 10).mapToObj(i ->
            SendMessageBatchRequestEntry.builder().id("e" + i).messageBody(BODY).build()).toList();

    private static long batches(SqsClient sqs, String url) {
        long n = 0;
        for (int i = 0; i < 2; i++) {
            sqs.sendMessageBatch(r -> r.queueUrl(url).entries(TEN));
            int got = 0;
            while (got < 10) { // SQS may return fewer than asked
                List<Message> batch = sqs.receiveMessage(r -> r.queueUrl(url).maxNumberOfMessages(10)
                        .waitTimeSeconds(0)).messages();
                if (!batch.isEmpty()) {
                    sqs.deleteMessageBatch(r -> r.queueUrl(url).entries(IntStream.range(0, batch.size()).mapToObj(k ->
                            DeleteMessageBatchRequestEntry.builder().id("d" + k)
                                    .receiptHandle(batch.get(k).receiptHandle()).build()).toList()));
                    got += batch.size();
                }
            }
            n += got;
        }
        return n;
    }
}
