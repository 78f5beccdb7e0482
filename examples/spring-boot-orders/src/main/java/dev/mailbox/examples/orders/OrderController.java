package dev.mailbox.examples.orders;

import dev.mailbox.api.Mailbox;
import dev.mailbox.mainloop.MainLoopClient;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

@RestController
class OrderController {

    private final Mailbox<Order> orders;
    private final MainLoopClient<PriceRequest, Quote> pricing;
    private final OrderBook book;

    OrderController(Mailbox<Order> orders, MainLoopClient<PriceRequest, Quote> pricing, OrderBook book) {
        this.orders = orders;
        this.pricing = pricing;
        this.book = book;
    }

    @PostMapping("/orders")
    ResponseEntity<Map<String, String>> place(@RequestBody PriceRequest what) {
        Order order = new Order(UUID.randomUUID().toString(), what.item(), what.quantity());
        orders.send(order);
        return ResponseEntity.status(HttpStatus.ACCEPTED).body(Map.of("id", order.id()));
    }

    @GetMapping("/orders/{id}")
    ResponseEntity<Quote> priced(@PathVariable String id) {
        Quote quote = book.get(id);
        return quote == null ? ResponseEntity.notFound().build() : ResponseEntity.ok(quote);
    }

    @GetMapping("/quotes")
    Quote quote(@RequestParam String item, @RequestParam int quantity) {
        return pricing.callAndWait(new PriceRequest(item, quantity), Duration.ofSeconds(5));
    }
}
