package dev.mailbox.sqsendpoint;

import java.util.Objects;

/**
 * An AWS-style access key: the id a client sends in its signature, the secret it signs with, and the principal
 * the endpoint then acts for (the name the deployment's roles and audit lines use). Immutable.
 *
 * <p>{@link #toString()} never shows the secret.
 *
 * @param accessKeyId the key id, as clients configure it ({@code aws_access_key_id}); 1 to 128 characters of
 *                    {@code A-Z a-z 0-9}
 * @param secretKey   the secret ({@code aws_secret_access_key}), not empty
 * @param principal   who calls with this key, not empty
 */
public record AccessKey(String accessKeyId, String secretKey, String principal) {

    /**
     * @param accessKeyId the key id
     * @param secretKey   the secret
     * @param principal   the principal
     * @throws IllegalArgumentException if the id is not 1 to 128 letters and digits, or the secret or principal is
     *                                  empty
     */
    public AccessKey {
        Objects.requireNonNull(accessKeyId, "accessKeyId");
        Objects.requireNonNull(secretKey, "secretKey");
        Objects.requireNonNull(principal, "principal");
        if (!accessKeyId.matches("[A-Za-z0-9]{1,128}")) {
            throw new IllegalArgumentException("an access key id is 1 to 128 letters and digits, was '"
                    + accessKeyId + "'");
        }
        if (secretKey.isEmpty() || principal.isEmpty()) {
            throw new IllegalArgumentException("the secret and the principal of access key " + accessKeyId
                    + " must not be empty");
        }
    }

    @Override
    public String toString() {
        return "AccessKey[" + accessKeyId + " -> " + principal + ", secret hidden]";
    }
}
