/**
 * The endpoint's implementation: HTTP serving, the two wire protocols, SigV4 verification, the actions and the
 * in-memory directory. Not API: anything here may change without notice.
 */
@NullMarked
package dev.mailbox.sqsendpoint.internal;

import org.jspecify.annotations.NullMarked;
