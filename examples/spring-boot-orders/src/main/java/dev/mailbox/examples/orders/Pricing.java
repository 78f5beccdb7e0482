package dev.mailbox.examples.orders;

import dev.mailbox.spring.boot.MainLoopHandler;
import org.springframework.stereotype.Component;

@Component
class Pricing {

    @MainLoopHandler("pricing")
    Quote price(PriceRequest request) {
        if (request.quantity() < 1) {
            throw new IllegalArgumentException("quantity must be at least 1, was " + request.quantity());
        }
        long unitCents = 250 + 10L * request.item().length();
        return new Quote(request.item(), request.quantity(), unitCents * request.quantity());
    }
}
