package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxUnavailableException;
import dev.mailbox.coordination.server.MailboxNode;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.testkit.ForwardingMailbox;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code mailboxctl receive}: what it deletes, it has shown. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ReceiveCommandTest {

    private static CliRun run(String... args) {
        return CliRun.of(args);
    }

    @Test
    @DisplayName("when an acknowledgement fails part way, the messages already acknowledged (deleted) were printed")
    void acknowledgedMessagesArePrinted() {
        InMemoryMailbox<byte[]> inner = InMemoryMailbox.builder("flaky", Codec.bytes()).build();
        AtomicInteger acks = new AtomicInteger();
        Mailbox<byte[]> flaky = new ForwardingMailbox<>(inner) {
            @Override
            public void acknowledge(String receiptHandle) {
                if (acks.incrementAndGet() == 2) { // the backend goes away after the first
                    throw new MailboxUnavailableException("backend went away", true, null);
                }
                super.acknowledge(receiptHandle);
            }

            @Override
            public Mailbox<byte[]> fenced(long epoch) {
                throw new UnsupportedOperationException("not fenced in this test");
            }
        };
        try (MailboxNode node = MailboxNode.builder("node-r").start()) {
            node.host("flaky", flaky);
            String uri = "node://" + node.address() + "/flaky";
            assertThat(run("send", uri, "first", "second").exitCode()).isZero();

            CliRun got = run("receive", uri, "-n", "2", "--wait-ms", "1000");

            assertThat(inner.approximateCount()).as("the first was acknowledged: deleted").isEqualTo(1);
            assertThat(got.exitCode()).as("an acknowledgement failed").isNotZero();
            assertThat(got.out()).as("a deleted message that no one saw is lost: stdout " + got.out() + ", stderr "
                    + got.err()).contains("first");
        }
    }

    @Test
    @DisplayName("a body that is not UTF-8 text is shown as base64, so the bytes it deletes are not lost to U+FFFD")
    void binaryBodyShownExactly() {
        InMemoryMailbox<byte[]> bin = InMemoryMailbox.builder("bin", Codec.bytes()).build();
        byte[] body = {(byte) 0xff, 0, 1, (byte) 0xfe};
        bin.send(body);
        bin.send("plain text".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        try (MailboxNode node = MailboxNode.builder("node-b").start()) {
            node.host("bin", bin);
            String uri = "node://" + node.address() + "/bin";

            CliRun json = run("receive", uri, "-n", "2", "--wait-ms", "1000", "-o", "json");

            assertThat(json.exitCode()).as(json.err()).isZero();
            assertThat(json.out()).contains("\"bodyBase64\" : \"" + java.util.Base64.getEncoder().encodeToString(body)
                    + "\"").contains("\"body\" : \"plain text\"").doesNotContain("\uFFFD");
            assertThat(bin.approximateCount()).isZero();
        }
    }
}
