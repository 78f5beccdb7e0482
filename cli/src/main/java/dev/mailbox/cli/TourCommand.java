package dev.mailbox.cli;

import dev.mailbox.api.Mailbox;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.api.SendOptions;
import dev.mailbox.inmemory.InMemoryMailbox;
import dev.mailbox.json.JsonCodec;
import dev.mailbox.mainloop.MainLoop;
import dev.mailbox.mainloop.MainLoopClient;
import dev.mailbox.mainloop.MainLoopCodecs;
import dev.mailbox.mainloop.MainLoopRequest;
import dev.mailbox.mainloop.MainLoopResult;
import dev.mailbox.mainloop.RequestHandler;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Walks through the message lifecycle on an in-memory mailbox: send, receive, a visibility timeout
 * that lapses and redelivers, a stale handle refused, an acknowledge, and a poison message that ends
 * in the dead-letter mailbox; then a MainLoop runner answering a MainLoopClient.
 */
@Command(name = "tour", mixinStandardHelpOptions = true,
        description = "Show the message lifecycle and a MainLoop request/response exchange on in-memory mailboxes.",
        footer = {"  mailboxctl tour", "  mailboxctl tour --visibility-ms 500 --max-receives 3"})
final class TourCommand implements Callable<Integer> {

    /** The demo's message body. */
    record Order(String id, String item, int quantity) {
    }

    /** The MainLoop runner's answer. */
    record Quote(String orderId, long cents) {
    }

    @Spec
    CommandSpec spec;

    @Option(names = "--visibility-ms", defaultValue = "1000",
            description = "Visibility timeout of the first receive, in milliseconds (default: ${DEFAULT-VALUE}).")
    long visibilityMillis;

    @Option(names = "--max-receives", defaultValue = "2",
            description = "Deliveries before a message is dead-lettered (default: ${DEFAULT-VALUE}).")
    int maxReceives;

    private PrintWriter out;
    private long start;

    @Override
    public Integer call() {
        out = spec.commandLine().getOut();
        if (visibilityMillis < 1 || visibilityMillis > 60_000) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                    "--visibility-ms must be between 1 and 60000, was " + visibilityMillis);
        }
        start = System.nanoTime();
        Duration visibility = Duration.ofMillis(visibilityMillis);
        try (InMemoryMailbox<Order> deadLetters = InMemoryMailbox.builder("orders-dlq", JsonCodec.of(Order.class)).build();
             InMemoryMailbox<Order> orders = InMemoryMailbox.builder("orders", JsonCodec.of(Order.class))
                     .redrivePolicy(RedrivePolicy.of(maxReceives, deadLetters))
                     .build()) {

            step("Send an order to mailbox 'orders' (dead letters go to 'orders-dlq' after "
                    + maxReceives + " deliveries)");
            String id = orders.send(new Order("o-1", "coffee beans", 2),
                    SendOptions.defaults().withAttribute("tenant", "acme"));
            say("sent message %s; count is now %d", id, orders.approximateCount());

            step("Receive it with a " + visibility.toMillis() + " ms visibility timeout, and do not acknowledge");
            Message<Order> first = orders.receive(ReceiveOptions.defaults().withVisibilityTimeout(visibility)).get(0);
            describe(first);
            say("while it is in flight, another receive gets: %s", orders.receive());

            step("Wait for it with a long poll: it comes back when the visibility timeout ends");
            long before = System.nanoTime();
            Message<Order> second = orders.receive(ReceiveOptions.defaults()
                    .withWaitTime(Duration.ofSeconds(30)).withVisibilityTimeout(Duration.ofSeconds(30))).get(0);
            say("the long poll returned after %d ms with a redelivery:", (System.nanoTime() - before) / 1_000_000);
            describe(second);

            step("The first delivery's handle is stale now");
            try {
                first.acknowledge();
                say("UNEXPECTED: the stale handle was accepted");
                return 1;
            } catch (ReceiptHandleExpiredException e) {
                say("refused: %s", e.getMessage());
            }

            step("Acknowledge with the current handle");
            second.acknowledge();
            say("acknowledged; count is now %d", orders.approximateCount());

            step("A poison order fails every time; after " + maxReceives + " deliveries it is dead-lettered");
            orders.send(new Order("o-2", "a negative amount of tea", -1));
            for (int attempt = 1; ; attempt++) {
                List<Message<Order>> got = orders.receive();
                if (got.isEmpty()) {
                    say("receive %d: nothing left in 'orders' (count %d)", attempt, orders.approximateCount());
                    break;
                }
                Message<Order> m = got.get(0);
                say("receive %d: delivery %d of %s, the handler fails, nack", attempt, m.deliveryCount(), m.body().id());
                m.nack();
            }
            Message<Order> dead = deadLetters.receive().get(0);
            say("'orders-dlq' holds %s: %s", dead.id(), dead.body());
            dead.acknowledge();

            step("Done with the lifecycle");
            say("orders: %d, orders-dlq: %d", orders.approximateCount(), deadLetters.approximateCount());
        }
        mainLoop();
        out.flush();
        return 0;
    }

    /** Request/response: a MainLoop runner answers a MainLoopClient over two in-memory mailboxes. */
    private void mainLoop() {
        Map<String, InMemoryMailbox<MainLoopResult<Quote>>> replies = new ConcurrentHashMap<>();
        Function<String, Mailbox<MainLoopResult<Quote>>> open = name -> replies.computeIfAbsent(name,
                n -> InMemoryMailbox.builder(n, MainLoopCodecs.results(Quote.class)).build());
        try (InMemoryMailbox<MainLoopRequest<Order>> quotes =
                     InMemoryMailbox.builder("quotes", MainLoopCodecs.requests(Order.class)).build()) {
            step("Start a MainLoop runner on mailbox 'quotes' with 2 handlers; it prices orders");
            MainLoop<Order, Quote> runner = MainLoop.builder(quotes, RequestHandler.ofBody(TourCommand::price))
                    .replyTo(open).concurrency(2).waitTime(Duration.ofSeconds(1)).build();
            Thread thread = new Thread(runner::run, "demo-runner");
            thread.start();
            try (MainLoopClient<Order, Quote> client = MainLoopClient.builder(quotes, open)
                    .receiveWait(Duration.ofMillis(500)).build()) {
                say("the client's answers arrive in its own mailbox '%s'", client.responseMailboxName());

                step("Call it: two good orders, one it rejects, one whose deadline has passed");
                var good = client.call(new Order("q-1", "espresso cups", 6), Duration.ofSeconds(10));
                var also = client.call(new Order("q-2", "milk jug", 1), Duration.ofSeconds(10));
                var bad = client.call(new Order("q-3", "saucers", -2), Duration.ofSeconds(10));
                var late = client.call(MainLoopRequest.of(new Order("q-4", "too late", 1))
                        .withDeadline(Instant.now().minusSeconds(1)), Duration.ofSeconds(10));
                for (var call : List.of(good, also, bad, late)) {
                    try {
                        say("answer: %s", call.get(10, TimeUnit.SECONDS));
                    } catch (ExecutionException e) {
                        say("error:  %s", e.getCause().getMessage());
                    } catch (InterruptedException | TimeoutException e) {
                        throw new IllegalStateException("no answer from the runner", e);
                    }
                }
            }
            step("Shut the runner down gracefully");
            say("stopped cleanly: %s; 'quotes' holds %d", runner.shutdown(Duration.ofSeconds(5)), quotes.approximateCount());
            runner.close();
        }
    }

    /** What the demo's runner does with an order. */
    static Quote price(Order order) {
        if (order.quantity() <= 0) {
            throw new IllegalArgumentException("quantity must be positive, was " + order.quantity());
        }
        return new Quote(order.id(), order.quantity() * 450L);
    }

    private void describe(Message<Order> m) {
        say("  id=%s delivery=%d body=%s attributes=%s", m.id(), m.deliveryCount(), m.body(), m.attributes());
        say("  receipt handle %s", m.receiptHandle());
    }

    private int steps;

    private void step(String title) {
        out.printf("%n%d. %s%n", ++steps, title);
    }

    private void say(String format, Object... args) {
        out.printf("   [%6d ms] %s%n", (System.nanoTime() - start) / 1_000_000, String.format(format, args));
        out.flush();
    }
}
