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
}
