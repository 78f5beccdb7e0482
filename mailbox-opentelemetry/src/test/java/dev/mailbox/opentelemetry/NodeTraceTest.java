package dev.mailbox.opentelemetry;

import static dev.mailbox.opentelemetry.Traces.oneTree;
import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.RemoteMailbox;
import dev.mailbox.coordination.server.MailboxNode;
import dev.mailbox.coordination.server.TestingCluster;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.mainloop.MainLoop;
import dev.mailbox.mainloop.MainLoopClient;
import dev.mailbox.mainloop.MainLoopCodecs;
import dev.mailbox.mainloop.MainLoopRequest;
import dev.mailbox.mainloop.MainLoopResult;
import io.grpc.ClientInterceptor;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The caller's trace through mailbox nodes: the caller and the runner use different nodes, so every request and
 * reply is forwarded once, and the trace still is one tree, with the forwarded hop in it.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class NodeTraceTest {

    private static final String REQUESTS = "orders@node-a";
    private static final String REPLIES = "replies@node-a";
    private static final String SEND_RPC = "mailbox.data.v1.MailboxService/Send";

    @Test
    @DisplayName("caller → send → forwarded hop (client, node B, client, node A) → receive and process → handler →"
            + " reply → the caller's process of the reply: one tree; coordinator calls are spans too")
    void throughANode() throws Exception {
        try (Traces traces = new Traces()) {
            MailboxTracing tracing = MailboxTracing.create(traces.sdk);
            GrpcTracing grpc = GrpcTracing.create(traces.sdk);
            ClientInterceptor rpc = grpc.clientInterceptor();
            List<AutoCloseable> open = new ArrayList<>();
            try (TestingCluster cluster = TestingCluster.builder().size(1)
                    .configure(b -> b.interceptor(grpc.serverInterceptor())).start();
                 CoordinationClient coordinator = CoordinationClient.builder().endpoints(cluster.endpoints())
                         .interceptor(rpc).build();
                 MailboxNode a = MailboxNode.builder("node-a").coordinator(coordinator)
                         .interceptor(grpc.serverInterceptor()).peerInterceptor(rpc).start();
                 MailboxNode b = MailboxNode.builder("node-b").coordinator(coordinator)
                         .interceptor(grpc.serverInterceptor()).peerInterceptor(rpc).start()) {
                Mailbox<byte[]> hostedRequests = InMemoryMailbox.builder(REQUESTS, Codec.bytes()).build();
                Mailbox<byte[]> hostedReplies = InMemoryMailbox.builder(REPLIES, Codec.bytes()).build();
                open.add(hostedRequests);
                open.add(hostedReplies);
                a.publish(hostedRequests);
                a.publish(hostedReplies);
                assertThat(b.routingTable().orElseThrow().await(t -> t.route(REQUESTS).isPresent()
                        && t.route(REPLIES).isPresent(), Duration.ofSeconds(10))).as("node B has the routes").isTrue();

                Codec<MainLoopRequest<String>> requestCodec = MainLoopCodecs.requests(String.class);
                Codec<MainLoopResult<String>> resultCodec = MainLoopCodecs.results(String.class);
                // the runner talks to node A, which hosts the mailboxes; the caller to node B, which forwards
                Mailbox<MainLoopRequest<String>> runnerRequests = tracing.wrap(RemoteMailbox.builder(REQUESTS,
                        requestCodec).node(a.address()).interceptor(rpc).build());
                open.add(runnerRequests);
                MainLoop<String, String> loop = MainLoop.<String, String>builder(runnerRequests, r -> {
                            Span handler = traces.tracer().spanBuilder("handler").startSpan();
                            try (Scope ignored = handler.makeCurrent()) {
                                return r.body().toUpperCase();
                            } finally {
                                handler.end();
                            }
                        })
                        .replyTo(name -> tracing.wrap(RemoteMailbox.builder(name, resultCodec).node(a.address())
                                .interceptor(rpc).build()))
                        .waitTime(Duration.ofSeconds(5)).interceptor(tracing.interceptor()).build();
                MainLoopClient<String, String> client = MainLoopClient.<String, String>builder(
                                tracing.wrap(RemoteMailbox.builder(REQUESTS, requestCodec).node(b.address())
                                        .interceptor(rpc).build()),
                                name -> tracing.wrap(RemoteMailbox.builder(name, resultCodec).node(b.address())
                                        .interceptor(rpc).build()))
                        .responseMailboxName(REPLIES).receiveWait(Duration.ofSeconds(1)).cleanup(m -> { })
                        .interceptor(tracing.interceptor()).build();

                Span caller = traces.tracer().spanBuilder("caller").startSpan();
                CompletableFuture<String> answer;
                try (Scope ignored = caller.makeCurrent()) {
                    answer = client.call("hello");
                }
                assertThat(loop.run(1)).isEqualTo(1);
                assertThat(answer.get(30, TimeUnit.SECONDS)).isEqualTo("HELLO");
                client.close();
                loop.close();
                caller.end();

                List<SpanData> spans = traces.await(s -> Traces.names(s).contains("caller"), Duration.ofSeconds(10));
                SpanData root = spans.stream().filter(s -> s.getName().equals("caller")).findFirst().orElseThrow();
                Traces.Tree tree = oneTree(spans, root);
                String send = "send " + REQUESTS;
                String reply = "send " + REPLIES;
                tree.parentOf("caller", send);
                tree.parentOf(send, "receive " + REQUESTS, "process " + REQUESTS, "ack " + REQUESTS);
                tree.parentOf("process " + REQUESTS, "handler", reply);
                tree.parentOf(reply, "receive " + REPLIES, "process " + REPLIES);
                assertThat(tree.one(send).getAttributes().get(SemConv.MAILBOX_BACKEND)).isEqualTo(MailboxTracing.NODE);

                // the forwarded hop: the caller's call to node B, B's call to node A, each a client and a server span
                List<SpanKind> hop = new ArrayList<>();
                SpanData at = tree.one(send);
                while (true) {
                    List<SpanData> next = tree.childrenOf(at).stream().filter(s -> s.getName().equals(SEND_RPC)).toList();
                    if (next.isEmpty()) {
                        break;
                    }
                    assertThat(next).as("one Send call under %s", at.getName()).hasSize(1);
                    at = next.get(0);
                    hop.add(at.getKind());
                    assertThat(at.getAttributes().get(SemConv.RPC_SYSTEM)).isEqualTo("grpc");
                }
                assertThat(hop).containsExactly(SpanKind.CLIENT, SpanKind.SERVER, SpanKind.CLIENT, SpanKind.SERVER);
                assertThat(at.getAttributes().get(SemConv.RPC_GRPC_STATUS_CODE)).isEqualTo(0L);

                // the coordinators' calls: the nodes' client spans, each with the coordinator's server span under it
                List<SpanData> controlClients = spans.stream().filter(s -> s.getKind() == SpanKind.CLIENT
                        && "mailbox.coordination.v1.ControlPlane".equals(s.getAttributes().get(SemConv.RPC_SERVICE)))
                        .toList();
                assertThat(controlClients).isNotEmpty();
                assertThat(spans).anySatisfy(s -> {
                    assertThat(s.getKind()).isEqualTo(SpanKind.SERVER);
                    assertThat(controlClients).extracting(SpanData::getSpanId).contains(s.getParentSpanId());
                });
                assertThat(tracing.skippedInjections()).isZero();
            } finally {
                for (AutoCloseable c : open) {
                    c.close();
                }
            }
        }
    }
}
