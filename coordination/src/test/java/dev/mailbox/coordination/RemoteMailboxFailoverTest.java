package dev.mailbox.coordination;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxUnavailableException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.inmemory.InMemoryMailbox;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class RemoteMailboxFailoverTest {

    @Test
    @DisplayName("a RemoteMailbox given several nodes moves on when one dies; with one node the failure is retryable")
    void failover() throws Exception {
        try (TestCluster cluster = new TestCluster(1, 10_000)) {
            CoordinationClient client = cluster.coordinationClient();
            try (MailboxNode owner = MailboxNode.builder("owner").coordinator(client).start();
                 MailboxNode b = MailboxNode.builder("b").coordinator(client).start();
                 MailboxNode c = MailboxNode.builder("c").coordinator(client).start()) {
                Mailbox<byte[]> hosted = InMemoryMailbox.builder("jobs@owner", Codec.bytes()).build();
                owner.publish(hosted);
                for (MailboxNode n : List.of(b, c)) {
                    assertThat(n.routingTable().orElseThrow().await(t -> t.route("jobs@owner").isPresent(),
                            Duration.ofSeconds(10))).isTrue();
                }
                RemoteMailbox<String> viaBoth = RemoteMailbox.builder("jobs@owner", Codec.utf8())
                        .nodes(List.of(b.address(), c.address())).build();
                RemoteMailbox<String> viaB = RemoteMailbox.builder("jobs@owner", Codec.utf8()).node(b.address()).build();
                viaBoth.send("before");
                Message<String> first = viaBoth.receive(ReceiveOptions.defaults()).get(0);

                b.close();

                viaBoth.send("after");
                first.acknowledge(); // the handle travels through the other node to the same owner
                List<Message<String>> got = viaBoth.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(5)));
                assertThat(got).extracting(Message::body).containsExactly("after");
                got.get(0).acknowledge();
                assertThat(viaBoth.approximateCount()).isZero();
                assertThatThrownBy(() -> viaB.send("lost")).isInstanceOf(MailboxUnavailableException.class)
                        .matches(e -> ((MailboxUnavailableException) e).isRetryable());
                assertThat(hosted.approximateCount()).as("nothing stored by the failed call").isZero();
                assertThatThrownBy(() -> RemoteMailbox.builder("x", Codec.utf8()).nodes(List.of()))
                        .isInstanceOf(IllegalArgumentException.class);
                viaBoth.close();
                viaB.close();
                hosted.close();
            }
        }
    }
}
