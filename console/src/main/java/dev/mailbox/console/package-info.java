/**
 * The web console of Mailbox's processes: {@link dev.mailbox.console.Console}, an HTTP handler every coordinator and
 * mailbox node mounts at {@code /ui} on its metrics listener, fed by a {@link dev.mailbox.console.ConsoleSource}
 * (a coordinator's own state, or {@link dev.mailbox.console.NodeConsoleSource} on a node) and guarded by a
 * {@link dev.mailbox.console.ConsoleAccess}. Types in this package are non-null unless annotated otherwise;
 * {@code internal} is not API.
 */
@NullMarked
package dev.mailbox.console;

import org.jspecify.annotations.NullMarked;
