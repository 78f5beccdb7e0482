/** Dead letters: the redrive policy and moving messages back (docs/how-to/dead-letters.md). */
@NullMarked
package dev.mailbox.samples.deadletters;

import org.jspecify.annotations.NullMarked;
