package dev.mailbox.mainloop;

import dev.mailbox.api.Mailbox;
import dev.mailbox.testkit.FaultInjectingMailbox;
import java.nio.charset.StandardCharsets;

/** The MainLoop suite on in-memory mailboxes. */
class InMemoryMainLoopTest extends MainLoopSuite {

    private final Backend backend = new Backend.InMemory();

    @Override
    protected Backend backend() {
        return backend;
    }

    /** An in-memory mailbox has one codec per object, so the bad body is injected instead of stored. */
    @Override
    protected Mailbox<MainLoopRequest<Shop.Order>> withUndecodable(String name, String text) {
        FaultInjectingMailbox<MainLoopRequest<Shop.Order>> m = FaultInjectingMailbox.wrap(backend.open(name, Shop.REQUESTS));
        m.injectUndecodable("not a request", text.getBytes(StandardCharsets.UTF_8));
        return m;
    }
}
