package dev.mailbox.sqsendpoint.internal;

import org.jspecify.annotations.Nullable;

/**
 * Queue ARNs ({@code arn:aws:sqs:REGION:ACCOUNT:NAME}) of this endpoint's region and account. An ARN of another
 * account names no queue here; the region is not checked, since a client may know this endpoint by any region.
 */
final class Arns {

    private final String region;
    private final String account;

    Arns(String region, String account) {
        this.region = region;
        this.account = account;
    }

    String arn(String queue) {
        return "arn:aws:sqs:" + region + ":" + account + ":" + queue;
    }

    /** @return the queue an ARN names here, or null if it names none */
    @Nullable String queueName(String arn) {
        String[] parts = arn.split(":", -1);
        if (parts.length != 6 || !parts[0].equals("arn") || !parts[2].equals("sqs") || !parts[4].equals(account)
                || parts[5].isEmpty()) {
            return null;
        }
        return parts[5];
    }
}
