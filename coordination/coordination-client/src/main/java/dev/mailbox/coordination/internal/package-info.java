/**
 * The implementation of the coordination client (grpc-java channels, failover, renewal batching) and the
 * conversions between records and protobuf messages. Not API: it may change in any release.
 */
@NullMarked
package dev.mailbox.coordination.internal;

import org.jspecify.annotations.NullMarked;
