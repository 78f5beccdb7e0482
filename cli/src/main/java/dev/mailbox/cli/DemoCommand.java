package dev.mailbox.cli;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.api.SendOptions;
import dev.mailbox.inmemory.InMemoryMailbox;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * Walks through the message lifecycle on an in-memory mailbox: send, receive, a visibility timeout
 * that lapses and redelivers, a stale handle refused, an acknowledge, and a poison message that ends
 * in the dead-letter mailbox.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Show the message lifecycle on an in-memory mailbox.")
final class DemoCommand implements Callable<Integer> {

    /** The demo's message body. */
    record Order(String id, String item, int quantity) {
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
        try (InMemoryMailbox<Order> deadLetters = InMemoryMailbox.builder("orders-dlq", Codec.json(Order.class)).build();
             InMemoryMailbox<Order> orders = InMemoryMailbox.builder("orders", Codec.json(Order.class))
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

            step("Done");
            say("orders: %d, orders-dlq: %d", orders.approximateCount(), deadLetters.approximateCount());
        }
        out.flush();
        return 0;
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
