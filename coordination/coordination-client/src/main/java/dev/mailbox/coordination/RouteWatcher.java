package dev.mailbox.coordination;

import java.util.List;

/**
 * Receives one WatchRoutes stream (see {@link Routes#watch}): first a snapshot or the changes missed since
 * the revision the watch resumed from, then every change in revision order. Called on the stream's
 * thread; must not block, or the coordinator ends a watch that falls too far behind.
 */
public interface RouteWatcher {

    /**
     * The whole table.
     *
     * @param revision its revision
     * @param routes   every route
     */
    void snapshot(long revision, List<Route> routes);

    /**
     * One change.
     *
     * @param revision the table's revision after it
     * @param changed  routes that are new or moved
     * @param removed  mailboxes that no longer have a route
     */
    void change(long revision, List<Route> changed, List<String> removed);

    /**
     * The stream ended; no more calls follow. Watch again (from the last revision seen) to resume.
     *
     * @param failure why, or null if the coordinator ended it cleanly
     */
    void ended(@org.jspecify.annotations.Nullable CoordinationException failure);
}
