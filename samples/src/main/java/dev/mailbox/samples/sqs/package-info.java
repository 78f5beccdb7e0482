/** The SQS backend (docs/how-to/sqs-backend.md). */
@NullMarked
package dev.mailbox.samples.sqs;

import org.jspecify.annotations.NullMarked;
