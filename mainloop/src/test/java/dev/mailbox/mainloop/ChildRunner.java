package dev.mailbox.mainloop;

import dev.mailbox.api.Mailbox;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

/**
 * A MainLoop runner in a JVM of its own, for the kill test. Arguments: the backend's
 * {@link Backend#childArgs()}, then {@code --}, the request mailbox's name and the visibility timeout in
 * milliseconds. Its handler reports {@code STARTED <request id>} and then never finishes, so the parent
 * knows exactly which request the runner held when it SIGKILLs it.
 */
public final class ChildRunner {

    private ChildRunner() {
    }

    public static void main(String[] args) throws Exception {
        List<String> all = Arrays.asList(args);
        int split = all.indexOf("--");
        Backend backend = Backend.fromArgs(all.subList(0, split));
        String name = all.get(split + 1);
        Duration visibility = Duration.ofMillis(Long.parseLong(all.get(split + 2)));
        Mailbox<MainLoopRequest<Shop.Order>> requests = backend.open(name, Shop.REQUESTS);
        MainLoop<Shop.Order, Shop.Quote> loop = MainLoop.<Shop.Order, Shop.Quote>builder(requests, request -> {
                    System.out.println("STARTED " + request.requestId());
                    System.out.flush();
                    while (true) {
                        Thread.sleep(60_000); // busy until killed
                    }
                })
                .replyTo(n -> backend.open(n, Shop.RESULTS))
                .receiveBatch(1)
                .visibilityTimeout(visibility)
                .waitTime(Duration.ofSeconds(1))
                .build();
        System.out.println("READY");
        System.out.flush();
        loop.run();
    }
}
