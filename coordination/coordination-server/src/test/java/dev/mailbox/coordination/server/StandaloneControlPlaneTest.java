package dev.mailbox.coordination.server;


import org.junit.jupiter.api.DisplayName;

/** The control plane on one node. */
@DisplayName("the control plane on one node")
class StandaloneControlPlaneTest extends ControlPlaneContract {

    StandaloneControlPlaneTest() {
        super(1);
    }
}
