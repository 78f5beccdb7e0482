package dev.mailbox.coordination.server;

import java.net.InetSocketAddress;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The start-up check of a server's security: loopback may run open; anything else should not. */
final class Security {

    private static final Logger LOG = LoggerFactory.getLogger(Security.class);

    private Security() {
    }

    /**
     * @param what      the server, for the message
     * @param tls       whether it has TLS
     * @param access    whether it has access rules
     * @param require   refuse rather than warn
     * @param addresses where it listens
     * @throws IllegalStateException if {@code require} and it listens beyond loopback without both
     */
    static void check(String what, boolean tls, boolean access, boolean require, @Nullable InetSocketAddress... addresses) {
        if (tls && access) {
            return;
        }
        for (InetSocketAddress a : addresses) {
            if (a != null && !(a.getAddress() != null ? a.getAddress().isLoopbackAddress()
                    : a.getHostString().equals("localhost"))) {
                String message = what + " listens on " + a + " without " + (tls ? "" : "TLS") + (tls || access ? "" : " and ")
                        + (access ? "" : "access rules") + ": anyone who can reach it can "
                        + "read every message and revoke any lease (see docs/how-to/secure-a-cluster.md)";
                if (require) {
                    throw new IllegalStateException(message);
                }
                LOG.warn("UNSECURED: {}", message);
                return;
            }
        }
    }
}
