/** A FIFO mailbox of customer events on each backend: README's FIFO section and docs/fifo-and-fairness.md. */
package dev.mailbox.samples.fifo;
