package dev.mailbox.benchmarks;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.sqs.SqsMailbox;
import org.elasticmq.rest.sqs.SQSRestServer;
import org.elasticmq.rest.sqs.SQSRestServerBuilder;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;

import java.net.URI;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * SqsMailbox side by side with the same calls made with the raw SDK, against one embedded ElasticMQ:
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar dev.mailbox.benchmarks.SqsHarness [--quick]
 * </pre>
 */
public final class SqsHarness {

    private static final String BODY = "hello, mailbox";

    private final long roundNanos;
    private final int rounds;

    private SqsHarness(boolean quick) {
        this.roundNanos = (quick ? 1_000L : 3_000L) * 1_000_000;
        this.rounds = quick ? 3 : 5;
    }

    /**
     * @param args {@code --quick} for a short run
     * @throws Exception if a benchmark fails
     */
    public static void main(String[] args) throws Exception {
        LibraryLog.toFile("sqs");
        SQSRestServer server = SQSRestServerBuilder.withInterface("127.0.0.1").withDynamicPort().start();
        int port = server.waitUntilStarted().localAddress().getPort();
        try (SqsClient sqs = SqsClient.builder().endpointOverride(URI.create("http://127.0.0.1:" + port))
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("bench", "bench")))
                .httpClientBuilder(UrlConnectionHttpClient.builder()).build()) {
            new SqsHarness(Arrays.asList(args).contains("--quick")).run(sqs, port);
        } finally {
            server.stopAndWait();
        }
    }

    private void run(SqsClient sqs, int port) throws Exception {
        System.out.printf(Locale.ROOT, "Mailbox SQS harness: embedded ElasticMQ on 127.0.0.1:%d, JDK %s, %d cores, %d rounds of %d ms%n%n",
                port, System.getProperty("java.version"), Runtime.getRuntime().availableProcessors(), rounds,
                roundNanos / 1_000_000);
        String rawUrl = sqs.createQueue(r -> r.queueName("bench-raw")).queueUrl();
        try (SqsMailbox<String> mailbox = SqsMailbox.builder("bench-mailbox", Codec.utf8()).client(sqs)
                .createIfMissing(true).build()) {
            double[] pair = Rounds.medianPair(rounds, () -> interleavedRound(sqs, rawUrl, mailbox));
            System.out.println("1. one client thread, send -> receive -> delete/ack, 3 requests per cycle;");
            System.out.println("   raw SDK and mailbox alternate in blocks of 20 cycles within each round (median round)");
            Rounds.row("raw SDK SendMessage + ReceiveMessage + DeleteMessage (baseline)", pair[0], "cycles/s", 1.0);
            Rounds.row("SqsMailbox send + receive + acknowledge", pair[1], "cycles/s", pair[1] / pair[0]);
            Rounds.verdict("overhead: ratio >= 0.95", pair[1] / pair[0], 0.95);

            double batched = Rounds.median(rounds, 1, () -> batchRound(mailbox));
            System.out.println();
            System.out.println("2. batches of 10: sendBatch(10) + receive(10) + acknowledgeBatch(10)");
            Rounds.row("SqsMailbox, unbatched (from 1.)", pair[1], "msgs/s", 1.0);
            Rounds.row("SqsMailbox, batches of 10", batched, "msgs/s", batched / pair[1]);
            Rounds.verdict("batched / unbatched >= 4", batched / pair[1], 4);
        }
    }

    private double[] interleavedRound(SqsClient sqs, String url, SqsMailbox<String> m) {
        ReceiveOptions one = ReceiveOptions.defaults();
        long rawNanos = 0;
        long mailboxNanos = 0;
        long cycles = 0;
        long end = System.nanoTime() + roundNanos;
        while (System.nanoTime() < end) {
            long t0 = System.nanoTime();
            for (int i = 0; i < 20; i++) {
                sqs.sendMessage(r -> r.queueUrl(url).messageBody(BODY));
                var got = sqs.receiveMessage(r -> r.queueUrl(url).maxNumberOfMessages(1).visibilityTimeout(30)
                        .waitTimeSeconds(0).messageAttributeNames("All")
                        .messageSystemAttributeNames(MessageSystemAttributeName.APPROXIMATE_RECEIVE_COUNT,
                                MessageSystemAttributeName.SENT_TIMESTAMP)).messages().get(0);
                sqs.deleteMessage(r -> r.queueUrl(url).receiptHandle(got.receiptHandle()));
            }
            long t1 = System.nanoTime();
            for (int i = 0; i < 20; i++) {
                m.send(BODY);
                m.receive(one).get(0).acknowledge();
            }
            long t2 = System.nanoTime();
            rawNanos += t1 - t0;
            mailboxNanos += t2 - t1;
            cycles += 20;
        }
        return new double[] {cycles / (rawNanos / 1e9), cycles / (mailboxNanos / 1e9)};
    }

    private double batchRound(SqsMailbox<String> m) {
        List<String> ten = List.of(BODY, BODY, BODY, BODY, BODY, BODY, BODY, BODY, BODY, BODY);
        ReceiveOptions tenAtOnce = ReceiveOptions.defaults().withMaxMessages(10);
        long n = 0;
        long start = System.nanoTime();
        while (System.nanoTime() - start < roundNanos) {
            m.sendBatch(ten);
            int got = 0;
            while (got < 10) { // SQS may return fewer than asked
                List<Message<String>> batch = m.receive(tenAtOnce);
                if (!batch.isEmpty()) {
                    m.acknowledgeBatch(batch);
                    got += batch.size();
                }
            }
            n += got;
        }
        return n / ((System.nanoTime() - start) / 1e9);
    }
}
