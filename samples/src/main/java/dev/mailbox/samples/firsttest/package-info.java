/** The code the first tutorial (docs/tutorials/first-mailbox-in-a-test.md) tests. */
@NullMarked
package dev.mailbox.samples.firsttest;

import org.jspecify.annotations.NullMarked;
