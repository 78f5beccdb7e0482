package dev.mailbox.spring.boot.autoconfigure;

import java.time.Duration;
import java.util.Map;
import java.util.function.LongConsumer;

/** Decides when the runners run: always (no coordination), or while a lease is held. */
interface Gate {

    /**
     * @param startAll starts every runner under the given fencing epoch (0 for none)
     * @param stopAll  stops every runner within the given grace
     */
    void open(LongConsumer startAll, java.util.function.Consumer<Duration> stopAll);

    /**
     * Stops the runners (within the grace) and gives up whatever the gate holds.
     *
     * @param grace how long running methods may take
     */
    void close(Duration grace);

    /** @return for health details */
    Map<String, Object> details();

    /** The gate of an application that is not coordinated. */
    final class Open implements Gate {
        private java.util.function.Consumer<Duration> stopAll = g -> { };

        @Override
        public void open(LongConsumer startAll, java.util.function.Consumer<Duration> stopAll) {
            this.stopAll = stopAll;
            startAll.accept(0);
        }

        @Override
        public void close(Duration grace) {
            stopAll.accept(grace);
        }

        @Override
        public Map<String, Object> details() {
            return Map.of();
        }
    }
}
