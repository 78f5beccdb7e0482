/**
 * Test support for code that uses mailboxes, and for backends that implement them.
 *
 * <ul>
 *   <li>{@link dev.mailbox.testkit.NullMailbox} and {@link dev.mailbox.testkit.CollectingMailbox}:
 *       test doubles for code that sends.</li>
 *   <li>{@link dev.mailbox.testkit.FaultInjectingMailbox}: wraps any mailbox to make calls fail,
 *       handles expire, deliveries repeat, or undecodable messages appear.</li>
 *   <li>{@link dev.mailbox.testkit.ManualClock}: time that moves only when a test says so.</li>
 *   <li>{@link dev.mailbox.testkit.MailboxContract}: the compatibility kit every backend runs.</li>
 * </ul>
 */
@NullMarked
package dev.mailbox.testkit;

import org.jspecify.annotations.NullMarked;
