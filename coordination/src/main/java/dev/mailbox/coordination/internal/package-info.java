/**
 * The coordinator's machinery; not a public API. {@link dev.mailbox.coordination.internal.LeaseTable}
 * is the deterministic lease state every replica applies the log to, and
 * {@link dev.mailbox.coordination.internal.Command} is what the log carries.
 */
@NullMarked
package dev.mailbox.coordination.internal;

import org.jspecify.annotations.NullMarked;
