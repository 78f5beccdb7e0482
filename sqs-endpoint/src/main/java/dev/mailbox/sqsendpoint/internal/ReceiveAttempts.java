package dev.mailbox.sqsendpoint.internal;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The ReceiveRequestAttemptIds of FIFO receives, for five minutes: a receive retried with the same id (by the same
 * principal, on the same queue) gets the same messages with the same receipt handles, their visibility timeout
 * started again, as long as none of them was deleted or had its visibility changed since (which forgets the
 * attempt) and every handle is still current. Bounded: the last {@value #MAX_ATTEMPTS} attempts.
 */
final class ReceiveAttempts {

    static final int MAX_ATTEMPTS = 10_000;
    static final long WINDOW_MILLIS = 5 * 60_000L;

    /** What an attempt answered: its messages as rendered, their handles, and their visibility timeout. */
    record Attempt(List<ObjectNode> messages, List<String> handles, int visibilitySeconds, long expiresAtMillis) {
    }

    private final Map<String, Attempt> attempts = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Attempt> eldest) {
            if (size() > MAX_ATTEMPTS) {
                eldest.getValue().handles().forEach(byHandle::remove);
                return true;
            }
            return false;
        }
    };
    private final Map<String, String> byHandle = new HashMap<>();

    static String key(String queue, String principal, String attemptId) {
        return queue + '\n' + principal + '\n' + attemptId;
    }

    synchronized @Nullable Attempt get(String key, long nowMillis) {
        Attempt a = attempts.get(key);
        if (a != null && a.expiresAtMillis() <= nowMillis) {
            forget(key);
            return null;
        }
        return a;
    }

    synchronized void put(String key, Attempt attempt) {
        forget(key);
        attempts.put(key, attempt);
        attempt.handles().forEach(h -> byHandle.put(h, key));
    }

    /** Forgets the attempt a handle was answered by: the message was deleted or its visibility changed. */
    synchronized void touched(String handle) {
        String key = byHandle.get(handle);
        if (key != null) {
            forget(key);
        }
    }

    synchronized void forget(String key) {
        Attempt a = attempts.remove(key);
        if (a != null) {
            a.handles().forEach(byHandle::remove);
        }
    }
}
