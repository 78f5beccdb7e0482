/**
 * The coordinator's machinery; not a public API. {@link dev.mailbox.coordination.server.internal.LeaseTable}
 * is the deterministic state every replica applies the log to, {@link dev.mailbox.coordination.server.internal.Command}
 * is what one log entry asks, and {@link dev.mailbox.coordination.server.internal.StateCodec} reads and writes
 * the stored formats (with {@link dev.mailbox.coordination.server.internal.LegacyFormat} for format 0).
 */
@NullMarked
package dev.mailbox.coordination.server.internal;

import org.jspecify.annotations.NullMarked;
