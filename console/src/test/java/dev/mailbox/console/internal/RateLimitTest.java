package dev.mailbox.console.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.UnknownHostException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("The console's rate limit per client")
class RateLimitTest {

    private static InetAddress v4(int n) throws UnknownHostException {
        return InetAddress.getByAddress(new byte[] {10, (byte) (n >> 16), (byte) (n >> 8), (byte) n});
    }

    private static InetAddress v6(long host) throws UnknownHostException {
        byte[] a = new byte[16];
        a[0] = 0x20;
        a[1] = 0x01;
        a[2] = 0x0d;
        a[3] = (byte) 0xb8;
        for (int i = 0; i < 8; i++) {
            a[15 - i] = (byte) (host >> (8 * i));
        }
        return InetAddress.getByAddress(a);
    }

    @Test
    @DisplayName("a client seen for the first time is served even after ten thousand others made a request this"
            + " window (past its table the limit refused every new address, so one host with many addresses locked"
            + " everyone else out of the console)")
    void newClientsAfterAFullTable() throws Exception {
        RateLimit limit = new RateLimit();
        for (int i = 0; i < RateLimit.MAX_ADDRESSES; i++) {
            limit.tryAcquire(v4(i));
        }
        assertThat(limit.tryAcquire(InetAddress.getByName("192.0.2.1"))).as("a new client").isTrue();
    }

    @Test
    @DisplayName("the addresses of one IPv6 /64 share one allowance (a host given a /64 had one per address)")
    void oneAllowancePerSlash64() throws Exception {
        RateLimit limit = new RateLimit();
        int allowed = 0;
        for (int i = 0; i < RateLimit.REQUESTS + 50; i++) {
            if (limit.tryAcquire(v6(i + 1))) {
                allowed++;
            }
        }
        assertThat(allowed).isLessThanOrEqualTo(RateLimit.REQUESTS);
    }
}
