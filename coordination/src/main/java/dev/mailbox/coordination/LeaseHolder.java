package dev.mailbox.coordination;

import java.util.Objects;

/**
 * Who asks for a lease: the runner, the node it runs on, and where it can be reached (the routing
 * table sends requests for the mailbox there).
 *
 * @param runnerId a stable id of the runner; the same runner acquiring again keeps its live lease
 *                 (under a new epoch, which fences off what its earlier incarnation had in flight)
 * @param nodeId   the node the runner runs on
 * @param address  where the runner (or its node) serves the mailbox, such as {@code 127.0.0.1:7100}
 */
public record LeaseHolder(String runnerId, String nodeId, String address) {

    /**
     * Checks the fields.
     *
     * @throws IllegalArgumentException if one is blank
     */
    public LeaseHolder {
        for (String[] f : new String[][] {{"runnerId", runnerId}, {"nodeId", nodeId}, {"address", address}}) {
            Objects.requireNonNull(f[1], f[0]);
            if (f[1].isBlank()) {
                throw new IllegalArgumentException(f[0] + " must not be blank");
            }
        }
    }
}
