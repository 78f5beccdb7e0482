package dev.mailbox.sqsendpoint;

import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The access keys an {@link SqsEndpoint} accepts in AWS Signature Version 4 signatures. A deployment backs it
 * with its own store of keys (the coordinator's principals, a secrets manager); {@link #of(AccessKey...)} is a
 * fixed set. Called once per request, by many threads at once; it should answer from memory.
 */
@FunctionalInterface
public interface AccessKeyStore {

    /**
     * @param accessKeyId the key id a request was signed with
     * @return the key, or empty if the id is unknown (the request is refused with {@code InvalidClientTokenId})
     */
    Optional<AccessKey> find(String accessKeyId);

    /**
     * @param keys the accepted keys, with distinct ids
     * @return a store of exactly these keys
     * @throws IllegalArgumentException if two keys share an id
     */
    static AccessKeyStore of(AccessKey... keys) {
        Map<String, AccessKey> byId = Arrays.stream(keys).map(k -> Objects.requireNonNull(k, "key"))
                .collect(Collectors.toUnmodifiableMap(AccessKey::accessKeyId, Function.identity()));
        return id -> Optional.ofNullable(byId.get(id));
    }
}
