/**
 * Conventions of the coordination wire protocols that a {@code .proto} cannot express (headers, trailers,
 * limits), shared by clients and servers. Not for applications.
 */
@NullMarked
package dev.mailbox.coordination.wire;

import org.jspecify.annotations.NullMarked;
