/**
 * The samples the documentation shows. Each package is one page's code: {@code firsttest} (the first tutorial),
 * {@code redis}, {@code mainloop}, {@code sqs}, {@code deadletters} and {@code cluster}. The tests beside them
 * run each one against a real server.
 */
@NullMarked
package dev.mailbox.samples;

import org.jspecify.annotations.NullMarked;
