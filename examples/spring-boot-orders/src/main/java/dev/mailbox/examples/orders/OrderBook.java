package dev.mailbox.examples.orders;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.stereotype.Component;

/** The priced orders (a database in a real application). */
@Component
class OrderBook {

    private final Map<String, Quote> priced = new ConcurrentHashMap<>();

    void put(String orderId, Quote quote) {
        priced.put(orderId, quote);
    }

    Quote get(String orderId) {
        return priced.get(orderId);
    }
}
