/** The listener's implementation on Jetty. Not API: anything here may change without notice. */
@NullMarked
package dev.mailbox.http.internal;

import org.jspecify.annotations.NullMarked;
