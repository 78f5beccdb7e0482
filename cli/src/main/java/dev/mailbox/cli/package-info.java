/** The {@code mailboxctl} command line. */
@NullMarked
package dev.mailbox.cli;

import org.jspecify.annotations.NullMarked;
