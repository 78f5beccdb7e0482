/**
 * An SQS-compatible HTTP endpoint over mailboxes: {@link dev.mailbox.sqsendpoint.SqsEndpoint} serves Amazon SQS's
 * API (both wire protocols, SigV4) for the queues of a {@link dev.mailbox.sqsendpoint.QueueDirectory}, the seam a
 * mailbox node implements. Types in this package are non-null unless annotated otherwise; {@code internal} is not
 * API.
 */
@NullMarked
package dev.mailbox.sqsendpoint;

import org.jspecify.annotations.NullMarked;
