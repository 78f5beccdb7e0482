/**
 * {@link dev.mailbox.inmemory.InMemoryMailbox}: the whole Mailbox contract in one process, for unit
 * tests and single-process programs.
 */
@NullMarked
package dev.mailbox.inmemory;

import org.jspecify.annotations.NullMarked;
