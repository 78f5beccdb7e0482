package dev.mailbox.sqsendpoint;

import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * An SQS endpoint as a process of its own, for tests that need its heap to be small and separate: signed with
 * {@link TestEndpoints#KEY_ID}, in-memory queues, on a free loopback port it prints as {@code PORT n}; it stops when
 * its standard input ends (the test closing it, or dying).
 */
public final class EndpointChild {

    private EndpointChild() {
    }

    public static void main(String[] args) throws IOException {
        try (SqsEndpoint endpoint = SqsEndpoint.builder().queues(TestEndpoints.inMemoryDirectory())
                .credentials(AccessKeyStore.of(new AccessKey(TestEndpoints.KEY_ID, TestEndpoints.SECRET,
                        TestEndpoints.PRINCIPAL)))
                .listen(new InetSocketAddress("127.0.0.1", 0)).start()) {
            System.out.println("PORT " + endpoint.address().getPort());
            System.out.flush();
            while (System.in.read() >= 0) {
                // wait for the parent to close our input
            }
        }
    }
}
