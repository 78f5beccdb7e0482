package dev.mailbox.coordination.server.internal;

/**
 * A fingerprint of a coordinator's replicated state: replicas at the same index must have the same
 * digest, so comparing digests finds a divergence without shipping the state.
 *
 * @param index  the last command index the state includes
 * @param sha256 SHA-256 of the state's snapshot bytes, in hex
 */
public record StateDigest(long index, String sha256) {
}
