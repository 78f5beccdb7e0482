/**
 * Test support: {@link dev.mailbox.spring.boot.test.MailboxTest} starts the application with every mailbox
 * in memory and recorded by the testkit's {@code CollectingMailbox}.
 *
 * <p>Types in this package are non-null unless annotated otherwise.
 */
@NullMarked
package dev.mailbox.spring.boot.test;

import org.jspecify.annotations.NullMarked;
