package dev.mailbox.coordination.server.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.apache.ratis.server.impl.MailboxFollowerProbe.Silence;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The election watch's decisions, on a follower whose silence the test sets (no Ratis, no clock). */
class ElectionWatchTest {

    /** A follower whose silence the test sets; records every stand it is asked for. */
    private static final class FakeFollower implements ElectionWatch.Follower {
        Silence now;
        boolean accept = true;
        final List<Silence> stands = new ArrayList<>();

        @Override
        public Silence silence() {
            return now;
        }

        @Override
        public boolean stand(Silence read) {
            stands.add(read);
            return accept;
        }
    }

    @Test
    @DisplayName("members draw in turns: each rank from the first half of its own slice of [min + min/16, max]")
    void drawsInTurns() {
        ElectionWatch low = new ElectionWatch("n", 150, 300, () -> 0.0);
        ElectionWatch high = new ElectionWatch("n", 150, 300, () -> 0.999_999);
        assertThat(List.of(low.draw(0, 3), low.draw(1, 3), low.draw(2, 3))).containsExactly(159L, 206L, 253L);
        assertThat(List.of(high.draw(0, 3), high.draw(1, 3), high.draw(2, 3))).containsExactly(182L, 229L, 276L);
        // never below the minimum (the leader lease relies on it), never above the maximum
        assertThat(low.draw(0, 1)).isEqualTo(159L);
        assertThat(high.draw(0, 1)).isEqualTo(229L);
        assertThat(high.draw(7, 3)).isEqualTo(276L);
        assertThat(new ElectionWatch("n", 200, 200, () -> 0.5).draw(2, 3)).isEqualTo(200L);
    }

    @Test
    @DisplayName("a follower stands once its silence reaches its timeout, once per contact, and again after a new one")
    void standsOncePerSilence() {
        ElectionWatch watch = new ElectionWatch("n", 150, 300, () -> 0.5); // rank 1 of 3: 159 + 47 * 1.25 = 217 ms
        FakeFollower f = new FakeFollower();
        Object contact = new Object();
        f.now = new Silence(contact, 216, 1, 3);
        watch.tick(f);
        assertThat(f.stands).isEmpty();
        f.now = new Silence(contact, 217, 1, 3);
        watch.tick(f);
        assertThat(f.stands).containsExactly(f.now);
        assertThat(watch.electionsStarted()).isEqualTo(1);
        f.now = new Silence(contact, 400, 1, 3);
        watch.tick(f);
        assertThat(f.stands).hasSize(1); // the same silence is acted on once

        Object next = new Object(); // a leader spoke: the silence starts over with a new draw
        f.now = new Silence(next, 100, 1, 3);
        watch.tick(f);
        assertThat(f.stands).hasSize(1);
        f.now = new Silence(next, 217, 1, 3);
        watch.tick(f);
        assertThat(f.stands).hasSize(2);
        assertThat(watch.electionsStarted()).isEqualTo(2);
    }

    @Test
    @DisplayName("a leader or candidate (no silence) is left alone, and the next silence is a new one")
    void notAFollower() {
        ElectionWatch watch = new ElectionWatch("n", 150, 300, () -> 0.0);
        FakeFollower f = new FakeFollower();
        Object contact = new Object();
        f.now = new Silence(contact, 159, 0, 3);
        watch.tick(f);
        assertThat(f.stands).hasSize(1);
        f.now = null;
        watch.tick(f);
        // the same contact object again after a spell as candidate: Ratis made a new follower timer, act again
        f.now = new Silence(contact, 160, 0, 3);
        watch.tick(f);
        assertThat(f.stands).hasSize(2);
    }

    @Test
    @DisplayName("a refused stand is not counted and not retried for the same silence")
    void refused() {
        ElectionWatch watch = new ElectionWatch("n", 150, 300, () -> 0.0);
        FakeFollower f = new FakeFollower();
        f.accept = false;
        Object contact = new Object();
        f.now = new Silence(contact, 159, 0, 3);
        watch.tick(f);
        f.now = new Silence(contact, 500, 0, 3);
        watch.tick(f);
        assertThat(f.stands).hasSize(1);
        assertThat(watch.electionsStarted()).isZero();
    }

    @Test
    @DisplayName("timeouts must satisfy 0 < min <= max")
    void badTimeouts() {
        assertThatThrownBy(() -> new ElectionWatch("n", 0, 10)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("0 < min <= max");
        assertThatThrownBy(() -> new ElectionWatch("n", 300, 150)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("got 300 and 150");
    }
}
