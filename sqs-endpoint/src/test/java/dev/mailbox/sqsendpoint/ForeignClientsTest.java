package dev.mailbox.sqsendpoint;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SQS clients not written in Java, run as processes against a signed endpoint: the AWS CLI and Python's boto3.
 * Each test is skipped, saying why, when its client is not on the PATH.
 */
@DisplayName("Foreign SQS clients")
class ForeignClientsTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path home;
    private SqsEndpoint endpoint;

    @BeforeEach
    void start() {
        endpoint = TestEndpoints.signedInMemory();
    }

    @AfterEach
    void stop() {
        endpoint.close();
    }

    record Run(int exit, String out, String err) {
    }

    private static boolean onPath(String program) {
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String dir : path.split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(dir, program))) {
                return true;
            }
        }
        return false;
    }

    /** Runs a client with the test key, no user configuration and the endpoint's region. */
    private Run run(List<String> command) {
        ProcessBuilder pb = new ProcessBuilder(command);
        Map<String, String> env = pb.environment();
        env.put("AWS_ACCESS_KEY_ID", TestEndpoints.KEY_ID);
        env.put("AWS_SECRET_ACCESS_KEY", TestEndpoints.SECRET);
        env.put("AWS_DEFAULT_REGION", "us-east-1");
        env.put("AWS_CONFIG_FILE", home.resolve("config").toString());
        env.put("AWS_SHARED_CREDENTIALS_FILE", home.resolve("credentials").toString());
        env.put("AWS_PAGER", "");
        env.put("PYTHONIOENCODING", "utf-8");
        try {
            Path out = home.resolve("out-" + System.nanoTime());
            Path err = home.resolve("err-" + System.nanoTime());
            Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("timed out: " + command);
            }
            return new Run(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private JsonNode aws(String... args) {
        List<String> command = new ArrayList<>(List.of("aws", "--endpoint-url", endpoint.url().toString(),
                "--output", "json", "sqs"));
        command.addAll(List.of(args));
        Run r = run(command);
        assertThat(r.exit()).as("aws sqs %s: %s", String.join(" ", args), r.err()).isZero();
        try {
            return r.out().isBlank() ? JSON.createObjectNode() : JSON.readTree(r.out());
        } catch (IOException e) {
            throw new AssertionError("not JSON: " + r.out(), e);
        }
    }

    @Test
    @DisplayName("the AWS CLI creates, sends with attributes, receives, changes visibility, deletes, batches and"
            + " gets SQS's error for a missing queue")
    void awsCli() {
        Assumptions.assumeTrue(onPath("aws"), "the AWS CLI (aws) is not on the PATH");
        String url = aws("create-queue", "--queue-name", "cli-orders").get("QueueUrl").asText();
        assertThat(url).endsWith("/000000000000/cli-orders");
        JsonNode sent = aws("send-message", "--queue-url", url, "--message-body", "hello from the CLI",
                "--message-attributes", "{\"kind\":{\"DataType\":\"String\",\"StringValue\":\"greeting\"},"
                        + "\"n\":{\"DataType\":\"Number\",\"StringValue\":\"3\"}}");
        assertThat(sent.get("MD5OfMessageBody").asText()).isEqualTo(SqsConformanceScenarios.md5(
                "hello from the CLI".getBytes(StandardCharsets.UTF_8)));
        JsonNode m = aws("receive-message", "--queue-url", url, "--attribute-names", "All",
                "--message-attribute-names", "All", "--wait-time-seconds", "2").get("Messages").get(0);
        assertThat(m.get("Body").asText()).isEqualTo("hello from the CLI");
        assertThat(m.get("MessageAttributes").get("n").get("StringValue").asText()).isEqualTo("3");
        assertThat(m.get("Attributes").get("ApproximateReceiveCount").asText()).isEqualTo("1");
        String handle = m.get("ReceiptHandle").asText();
        aws("change-message-visibility", "--queue-url", url, "--receipt-handle", handle, "--visibility-timeout", "60");
        aws("delete-message", "--queue-url", url, "--receipt-handle", handle);
        JsonNode batch = aws("send-message-batch", "--queue-url", url, "--entries",
                "[{\"Id\":\"a\",\"MessageBody\":\"one\"},{\"Id\":\"b\",\"MessageBody\":\"two\",\"DelaySeconds\":901}]");
        assertThat(batch.get("Successful")).hasSize(1);
        assertThat(batch.get("Failed").get(0).get("Code").asText()).isEqualTo("InvalidParameterValue");
        JsonNode attributes = aws("get-queue-attributes", "--queue-url", url, "--attribute-names",
                "ApproximateNumberOfMessages").get("Attributes");
        assertThat(attributes.get("ApproximateNumberOfMessages").asText()).isEqualTo("1");

        Run missing = run(List.of("aws", "--endpoint-url", endpoint.url().toString(), "sqs", "get-queue-url",
                "--queue-name", "no-such-queue"));
        assertThat(missing.exit()).isNotZero();
        assertThat(missing.err()).containsAnyOf("AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist");
    }

    @Test
    @DisplayName("boto3 runs a whole scenario: typed attributes, visibility, batches, redrive to a DLQ, an error")
    void boto3() throws IOException, URISyntaxException {
        Assumptions.assumeTrue(onPath("python3"), "python3 is not on the PATH");
        Run probe = run(List.of("python3", "-c", "import boto3"));
        Assumptions.assumeTrue(probe.exit() == 0, "python3 has no boto3 module");
        Path script = Path.of(getClass().getResource("/foreign/boto3_scenario.py").toURI());
        Run r = run(List.of("python3", script.toString(), endpoint.url().toString(), TestEndpoints.KEY_ID,
                TestEndpoints.SECRET));
        assertThat(r.exit()).as("boto3 scenario: %s%s", r.out(), r.err()).isZero();
        assertThat(r.out().strip()).isEqualTo("OK");
    }

    @Test
    @DisplayName("boto3 through FIFO and fair queues, late delete, system attributes and selectors, permissions and a"
            + " message move task")
    void boto3Fidelity() throws IOException, URISyntaxException {
        Assumptions.assumeTrue(onPath("python3"), "python3 is not on the PATH");
        Run probe = run(List.of("python3", "-c", "import boto3"));
        Assumptions.assumeTrue(probe.exit() == 0, "python3 has no boto3 module");
        Path script = Path.of(getClass().getResource("/foreign/boto3_fidelity.py").toURI());
        Run r = run(List.of("python3", script.toString(), endpoint.url().toString(), TestEndpoints.KEY_ID,
                TestEndpoints.SECRET, TestEndpoints.PRINCIPAL));
        assertThat(r.exit()).as("boto3 fidelity scenario: %s%s", r.out(), r.err()).isZero();
        assertThat(r.out().strip()).isEqualTo("OK");
    }

    @Test
    @DisplayName("the AWS CLI: a FIFO queue (group, deduplication, SequenceNumber, order, an error), a fair queue's"
            + " group id, a late delete, AddPermission/RemovePermission and a message move task")
    void awsCliFidelity() throws InterruptedException {
        Assumptions.assumeTrue(onPath("aws"), "the AWS CLI (aws) is not on the PATH");
        String fifo = aws("create-queue", "--queue-name", "cli-events.fifo", "--attributes",
                "FifoQueue=true,ContentBasedDeduplication=true").get("QueueUrl").asText();
        JsonNode first = aws("send-message", "--queue-url", fifo, "--message-body", "e1", "--message-group-id", "c-1");
        JsonNode second = aws("send-message", "--queue-url", fifo, "--message-body", "e2", "--message-group-id", "c-1");
        assertThat(new java.math.BigInteger(second.get("SequenceNumber").asText()))
                .isGreaterThan(new java.math.BigInteger(first.get("SequenceNumber").asText()));
        JsonNode dup = aws("send-message", "--queue-url", fifo, "--message-body", "e1", "--message-group-id", "c-1");
        assertThat(dup.get("MessageId").asText()).isEqualTo(first.get("MessageId").asText());
        JsonNode got = aws("receive-message", "--queue-url", fifo, "--max-number-of-messages", "10",
                "--attribute-names", "All").get("Messages");
        assertThat(got).hasSize(2);
        assertThat(got.get(0).get("Body").asText()).isEqualTo("e1");
        assertThat(got.get(1).get("Body").asText()).isEqualTo("e2");
        assertThat(got.get(0).get("Attributes").get("MessageGroupId").asText()).isEqualTo("c-1");
        assertThat(got.get(0).get("Attributes").get("SequenceNumber").asText())
                .isEqualTo(first.get("SequenceNumber").asText());
        assertThat(got.get(0).get("Attributes").get("SenderId").asText()).isEqualTo(TestEndpoints.PRINCIPAL);
        Run noGroup = run(List.of("aws", "--endpoint-url", endpoint.url().toString(), "sqs", "send-message",
                "--queue-url", fifo, "--message-body", "x"));
        assertThat(noGroup.exit()).isNotZero();
        assertThat(noGroup.err()).contains("MissingParameter");

        String fair = aws("create-queue", "--queue-name", "cli-fair").get("QueueUrl").asText();
        aws("send-message", "--queue-url", fair, "--message-body", "t", "--message-group-id", "tenant-3");
        JsonNode tenant = aws("receive-message", "--queue-url", fair, "--attribute-names", "MessageGroupId",
                "--visibility-timeout", "1").get("Messages").get(0);
        assertThat(tenant.get("Attributes").get("MessageGroupId").asText()).isEqualTo("tenant-3");
        Thread.sleep(1600); // the visibility timeout ends on the endpoint's clock
        aws("delete-message", "--queue-url", fair, "--receipt-handle", tenant.get("ReceiptHandle").asText());
        assertThat(aws("get-queue-attributes", "--queue-url", fair, "--attribute-names", "ApproximateNumberOfMessages")
                .get("Attributes").get("ApproximateNumberOfMessages").asText()).as("deleted late").isEqualTo("0");

        aws("add-permission", "--queue-url", fair, "--label", "CarolReads", "--aws-account-ids", "carol",
                "--actions", "ReceiveMessage", "DeleteMessage");
        String policy = aws("get-queue-attributes", "--queue-url", fair, "--attribute-names", "Policy")
                .get("Attributes").get("Policy").asText();
        assertThat(policy).contains("CarolReads", "arn:aws:iam::carol:root", "SQS:DeleteMessage");
        aws("remove-permission", "--queue-url", fair, "--label", "CarolReads");

        String dlq = aws("create-queue", "--queue-name", "cli-dlq").get("QueueUrl").asText();
        String dlqArn = aws("get-queue-attributes", "--queue-url", dlq, "--attribute-names", "QueueArn")
                .get("Attributes").get("QueueArn").asText();
        String source = aws("create-queue", "--queue-name", "cli-source", "--attributes",
                "{\"RedrivePolicy\":\"{\\\"deadLetterTargetArn\\\":\\\"" + dlqArn
                        + "\\\",\\\"maxReceiveCount\\\":\\\"1\\\"}\"}").get("QueueUrl").asText();
        aws("send-message", "--queue-url", source, "--message-body", "poison");
        aws("receive-message", "--queue-url", source, "--visibility-timeout", "0");
        aws("receive-message", "--queue-url", source, "--visibility-timeout", "0");
        String handle = aws("start-message-move-task", "--source-arn", dlqArn).get("TaskHandle").asText();
        assertThat(handle).isNotEmpty();
        JsonNode tasks = aws("list-message-move-tasks", "--source-arn", dlqArn, "--max-results", "10").get("Results");
        assertThat(tasks).hasSize(1);
        assertThat(tasks.get(0).get("SourceArn").asText()).isEqualTo(dlqArn);
    }
}
