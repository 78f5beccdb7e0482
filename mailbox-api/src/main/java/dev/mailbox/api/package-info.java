/**
 * The Mailbox contract: a typed, point-to-point queue with SQS semantics.
 *
 * <p>Start with {@link dev.mailbox.api.Mailbox} and {@link dev.mailbox.api.Message}. Every backend
 * (in-memory, Redis, SQS) implements the same contract and runs the same compatibility kit, so code
 * written against these interfaces behaves the same on each. Where backends must differ, the
 * difference is declared in {@link dev.mailbox.api.MailboxCapabilities}.
 *
 * <p>All exceptions are unchecked and extend {@link dev.mailbox.api.MailboxException}.
 * Types in this package are non-null unless annotated otherwise.
 */
@NullMarked
package dev.mailbox.api;

import org.jspecify.annotations.NullMarked;
