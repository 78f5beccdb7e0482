package dev.mailbox.coordination;

import java.util.Objects;
import java.util.UUID;

/**
 * Who asks for a lease: the runner, the node it runs on, where it can be reached (the routing table sends
 * requests for the mailbox there), and the secret that proves it is that holder.
 *
 * <p>A runner id is only a name: anyone can say it, and two processes may be started with the same one by
 * mistake. The coordinator takes an acquire as coming from the lease's current holder (keeping the lease
 * under a new epoch) only when it names the holder's runner id <em>and</em> presents the holder's secret;
 * otherwise the caller is another runner and waits like one. The three-argument constructor draws a new
 * random secret, so every {@code LeaseHolder} made that way is a distinct holder; keep the object (or its
 * secret) to act as the same holder again. The secret is never printed and is stored by the coordinator
 * only as a hash.
 *
 * @param runnerId a stable id of the runner
 * @param nodeId   the node the runner runs on
 * @param address  where the runner (or its node) serves the mailbox, such as {@code 127.0.0.1:7100}
 * @param secret   proof of being this holder, 1 to {@link CoordinationLimits#MAX_SECRET_LENGTH} printable
 *                 characters
 */
public record LeaseHolder(String runnerId, String nodeId, String address, String secret) {

    /**
     * Checks the fields against {@link CoordinationLimits#holderProblem} and the secret's rule.
     *
     * @throws IllegalArgumentException naming the field that is refused
     */
    public LeaseHolder {
        Objects.requireNonNull(runnerId, "runnerId");
        Objects.requireNonNull(nodeId, "nodeId");
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(secret, "secret");
        CoordinationLimits.require(CoordinationLimits.holderProblem(runnerId, nodeId, address));
        CoordinationLimits.require(CoordinationLimits.secretProblem(secret));
    }

    /**
     * A holder with a new random secret.
     *
     * @param runnerId a stable id of the runner
     * @param nodeId   the node the runner runs on
     * @param address  where it serves the mailbox
     * @throws IllegalArgumentException naming the field that is refused
     */
    public LeaseHolder(String runnerId, String nodeId, String address) {
        this(runnerId, nodeId, address, UUID.randomUUID().toString());
    }

    /** @return the holder without its secret */
    @Override
    public String toString() {
        return "LeaseHolder[runnerId=" + runnerId + ", nodeId=" + nodeId + ", address=" + address + "]";
    }
}
