package dev.mailbox.sqs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Limits;
import dev.mailbox.api.MailboxUnavailableException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The standard queue's deduplication ids, on a clock the test moves. */
class RecentSendsTest {

    private final AtomicLong now = new AtomicLong(1_000);
    private final RecentSends recent = new RecentSends(now::get);

    @Test
    @DisplayName("an id counts for the window from its first send, then is forgotten")
    void window() {
        RecentSends.Claim first = recent.claim("a");
        assertThat(first.mine()).isTrue();
        recent.stored(first.send(), "m-1");

        now.addAndGet(Limits.DEDUPLICATION_WINDOW.toNanos() - 1);
        RecentSends.Claim within = recent.claim("a");
        assertThat(within.mine()).isFalse();
        assertThat(RecentSends.await(within.send(), "q")).isEqualTo("m-1");

        now.addAndGet(1);
        RecentSends.Claim after = recent.claim("a");
        assertThat(after.mine()).as("after the window").isTrue();
        recent.stored(after.send(), "m-2");
        assertThat(RecentSends.await(recent.claim("a").send(), "q")).isEqualTo("m-2");
    }

    @Test
    @DisplayName("an id in flight never expires, and a duplicate waits for its message id")
    void inFlight() throws Exception {
        RecentSends.Claim first = recent.claim("a");
        now.addAndGet(Limits.DEDUPLICATION_WINDOW.multipliedBy(2).toNanos());
        RecentSends.Claim second = recent.claim("a");
        assertThat(second.mine()).isFalse();

        CompletableFuture<String> waiting = CompletableFuture.supplyAsync(() -> RecentSends.await(second.send(), "q"));
        recent.stored(first.send(), "m-1");

        assertThat(waiting.get(30, TimeUnit.SECONDS)).isEqualTo("m-1");
    }

    @Test
    @DisplayName("a failed send releases its id: the duplicate that waited learns it must send, and can claim it")
    void failureReleases() throws Exception {
        RecentSends.Claim first = recent.claim("a");
        RecentSends.Claim second = recent.claim("a");
        CompletableFuture<String> waiting = CompletableFuture.supplyAsync(() -> RecentSends.await(second.send(), "q"));

        recent.failed("a", first.send(), new MailboxUnavailableException("lost", true, null));

        assertThat(waiting.get(30, TimeUnit.SECONDS)).as("null: send it yourself").isNull();
        assertThat(recent.claim("a").mine()).isTrue();
    }

    @Test
    @DisplayName("ids are per key: a batch's id/i differ from id and from each other")
    void keys() {
        recent.stored(recent.claim("k").send(), "m");
        assertThat(recent.claim("k/0").mine()).isTrue();
        assertThat(recent.claim("k/1").mine()).isTrue();
        assertThat(recent.claim("k").mine()).isFalse();
    }
}
