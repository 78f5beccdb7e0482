/**
 * The auto-configuration behind the Mailbox starter: {@link MailboxAutoConfiguration} turns
 * {@link MailboxProperties} into {@code Mailbox<T>} beans and runs the application's
 * {@link dev.mailbox.spring.boot.MailboxListener} and {@link dev.mailbox.spring.boot.MainLoopHandler}
 * methods; {@link MailboxHealthAutoConfiguration} adds health indicators when Actuator is present.
 * Everything else in this package is internal.
 *
 * <p>Types in this package are non-null unless annotated otherwise.
 */
@NullMarked
package dev.mailbox.spring.boot.autoconfigure;

import org.jspecify.annotations.NullMarked;
