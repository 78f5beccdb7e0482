package dev.mailbox.opentelemetry;

import static dev.mailbox.opentelemetry.Traces.oneTree;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mailbox.api.Codec;
import dev.mailbox.api.Limits;
import dev.mailbox.api.Mailbox;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.mainloop.MainLoop;
import dev.mailbox.mainloop.MainLoopCodecs;
import dev.mailbox.mainloop.MainLoopRequest;
import dev.mailbox.mainloop.MainLoopResult;
import dev.mailbox.sqs.SqsMailbox;
import dev.mailbox.sqsendpoint.QueueDirectory;
import dev.mailbox.sqsendpoint.SqsEndpoint;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * A caller in Python (boto3) sends a MainLoop request through the SQS endpoint with an X-Ray trace header; a
 * runner in Java takes it through SqsMailbox, and the reply goes back to boto3 with the trace header of the
 * runner's send: the runner's spans continue the caller's trace, and the caller can continue it from the reply.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class SqsEndpointTraceTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private static boolean onPath(String program) {
        String path = System.getenv("PATH");
        return path != null && java.util.Arrays.stream(path.split(File.pathSeparator))
                .anyMatch(d -> Files.isExecutable(Path.of(d, program)));
    }

    @Test
    @DisplayName("boto3 → endpoint (AWSTraceHeader kept) → SqsMailbox → handler → reply with AWSTraceHeader → boto3:"
            + " one tree")
    void boto3CallerThroughTheEndpoint() throws Exception {
        Assumptions.assumeTrue(onPath("python3"), "python3 is not on the PATH (apt-get install python3)");
        Process probe = new ProcessBuilder("python3", "-c", "import boto3").redirectErrorStream(true).start();
        Assumptions.assumeTrue(probe.waitFor(60, TimeUnit.SECONDS) && probe.exitValue() == 0,
                "python3 has no boto3 module (apt-get install python3-boto3, or pip install boto3)");

        QueueDirectory queues = QueueDirectory.inMemory(name -> InMemoryMailbox.builder(name, Codec.bytes())
                .maxMessageBytes(Limits.MAX_MESSAGE_BYTES).build());
        try (Traces traces = new Traces();
             SqsEndpoint endpoint = SqsEndpoint.builder().queues(queues).authenticationOff().start();
             SqsClient sqs = SqsClient.builder().endpointOverride(endpoint.url()).region(Region.US_EAST_1)
                     .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("AKIDTRACING", "x")))
                     .httpClientBuilder(UrlConnectionHttpClient.builder()).build()) {
            MailboxTracing tracing = MailboxTracing.create(traces.sdk);
            sqs.createQueue(r -> r.queueName("traced-orders"));
            sqs.createQueue(r -> r.queueName("traced-replies"));
            Mailbox<MainLoopRequest<String>> requests = tracing.wrap(SqsMailbox.builder("traced-orders",
                    MainLoopCodecs.requests(String.class)).client(sqs).build());
            MainLoop<String, String> loop = MainLoop.<String, String>builder(requests, r -> {
                        Span handler = traces.tracer().spanBuilder("handler").startSpan();
                        try (Scope ignored = handler.makeCurrent()) {
                            return r.body().toUpperCase();
                        } finally {
                            handler.end();
                        }
                    })
                    .replyTo(name -> tracing.wrap(SqsMailbox.builder(name, MainLoopCodecs.results(String.class))
                            .client(sqs).build()))
                    .waitTime(Duration.ofSeconds(20)).interceptor(tracing.interceptor()).build();

            // the Python caller's trace: what an instrumented boto3 would make, its send span's context in the header
            Span caller = traces.tracer().spanBuilder("caller").startSpan();
            Span boto3Send = traces.tracer().spanBuilder("send traced-orders (boto3)").setSpanKind(SpanKind.PRODUCER)
                    .setParent(Context.root().with(caller)).startSpan();
            String header = XRayTraceHeader.format(boto3Send.getSpanContext());
            boto3Send.end();
            String body = new String(MainLoopCodecs.requests(String.class).encode(
                    MainLoopRequest.of("hello").withReplyTo("traced-replies")), StandardCharsets.UTF_8);
            Path script = Path.of(getClass().getResource("/foreign/boto3_traced_call.py").toURI());
            Path out = dir.resolve("out");
            Path err = dir.resolve("err");
            Process python = new ProcessBuilder("python3", script.toString(), endpoint.url().toString(),
                    "traced-orders", "traced-replies", body, header)
                    .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            try {
                assertThat(loop.run(1)).isEqualTo(1);
                assertThat(python.waitFor(60, TimeUnit.SECONDS)).as("boto3 caller finished").isTrue();
            } finally {
                python.destroyForcibly();
                loop.close();
                requests.close();
            }
            assertThat(python.exitValue()).as("boto3: %s%s", Files.readString(out), Files.readString(err)).isZero();
            JsonNode reply = JSON.readTree(Files.readString(out));
            assertThat(reply.get("body").asText()).contains("HELLO");

            // the caller continues its trace from the reply's AWSTraceHeader, as the X-Ray SDK would
            SpanContext replyContext = XRayTraceHeader.parse(reply.get("AWSTraceHeader").asText());
            assertThat(replyContext.isValid()).as("reply header %s", reply).isTrue();
            assertThat(reply.get("traceparent").asText()).contains(replyContext.getTraceId(), replyContext.getSpanId());
            traces.tracer().spanBuilder("caller handles the reply").setParent(Context.root().with(Span.wrap(replyContext)))
                    .startSpan().end();
            caller.end();

            List<SpanData> spans = traces.await(s -> Traces.names(s).contains("caller"), Duration.ofSeconds(10));
            SpanData root = spans.stream().filter(s -> s.getName().equals("caller")).findFirst().orElseThrow();
            Traces.Tree tree = oneTree(spans, root);
            tree.parentOf("caller", "send traced-orders (boto3)");
            tree.parentOf("send traced-orders (boto3)", "receive traced-orders", "process traced-orders",
                    "ack traced-orders");
            tree.parentOf("process traced-orders", "handler", "send traced-replies");
            tree.parentOf("send traced-replies", "caller handles the reply");
            assertThat(tree.one("process traced-orders").getAttributes().get(SemConv.MAILBOX_BACKEND))
                    .isEqualTo(MailboxTracing.SQS);
        }
    }
}
