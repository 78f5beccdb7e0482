/**
 * Hostile HTTP clients for tests of the servers' edges: {@link dev.mailbox.testkit.http.HostileHttp} opens raw
 * (plaintext or TLS) connections from any loopback address, reads raw answers, and keeps many slow connections
 * trickling headers ({@link dev.mailbox.testkit.http.HostileHttp.SlowClients}), the way a slowloris attack does.
 */
@NullMarked
package dev.mailbox.testkit.http;

import org.jspecify.annotations.NullMarked;
