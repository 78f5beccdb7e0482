package dev.mailbox.samples.redis;

import dev.mailbox.samples.Order;
import java.time.Duration;

/** Runs the service once: places two orders, handles what is waiting (yours from the shell too), and says so. */
public final class OrderServiceDemo {

    private OrderServiceDemo() {
    }

    /** @param args the Redis URI, by default {@code redis://127.0.0.1:6379} */
    public static void main(String[] args) {
        String redisUri = args.length > 0 ? args[0] : "redis://127.0.0.1:6379";
        try (OrderService service = new OrderService(redisUri)) {
            service.place(new Order("o-1", "beans", 2));
            service.place(new Order("o-2", "rice", 1));
            int handled = service.work(Duration.ofSeconds(1), order -> System.out.println("handling " + order));
            System.out.println("handled " + handled + ", backlog " + service.backlog());
        }
    }
}
