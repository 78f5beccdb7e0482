/** Coordinated runners and mailboxes through nodes (docs/tutorials/run-a-cluster.md, docs/explanation). */
@NullMarked
package dev.mailbox.samples.cluster;

import org.jspecify.annotations.NullMarked;
