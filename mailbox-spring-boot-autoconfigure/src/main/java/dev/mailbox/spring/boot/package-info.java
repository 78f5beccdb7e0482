/**
 * Mailbox on Spring Boot: {@link dev.mailbox.spring.boot.MailboxListener} and
 * {@link dev.mailbox.spring.boot.MainLoopHandler} put a bean method on a mailbox declared in the
 * application's properties ({@code mailbox.mailboxes.<name>}); the auto-configuration in
 * {@code dev.mailbox.spring.boot.autoconfigure} makes the mailboxes, runs the methods with the
 * application's lifecycle and reports their health.
 *
 * <p>Types in this package are non-null unless annotated otherwise.
 */
@NullMarked
package dev.mailbox.spring.boot;

import org.jspecify.annotations.NullMarked;
