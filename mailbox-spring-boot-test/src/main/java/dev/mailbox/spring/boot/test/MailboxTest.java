package dev.mailbox.spring.boot.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.annotation.AliasFor;

/**
 * A {@link SpringBootTest} whose mailboxes all live in memory, whatever their backend says, with the
 * coordinated mode off, and each recorded by a {@code CollectingMailbox}: inject
 * {@code CollectingMailbox<Order>} (or {@code Mailbox<Order>}) to send to the application's listeners and to
 * assert on what it sent.
 *
 * <pre>{@code
 * @MailboxTest
 * class CheckoutTest {
 *     @Autowired Checkout checkout;
 *     @Autowired CollectingMailbox<Order> orders;
 *
 *     @Test
 *     void checkoutSendsTheOrder() {
 *         checkout.buy("book");
 *         assertThat(orders.awaitSent(1, Duration.ofSeconds(5))).extracting(Order::item).containsExactly("book");
 *     }
 * }
 * }</pre>
 *
 * Listeners and handlers run as in the application, on the in-memory mailboxes. A message that a listener
 * received is not removed from the record; dead letters moved by the backend, and the results a
 * {@code @MainLoopHandler} sends to a declared mailbox named as a request's reply-to, reach that mailbox (its
 * count, its listener) but not its record of sends.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@SpringBootTest
@AutoConfigureInMemoryMailboxes
public @interface MailboxTest {

    /** @return properties to add, as for {@link SpringBootTest#properties()} */
    @AliasFor(annotation = SpringBootTest.class)
    String[] properties() default {};

    /** @return the configuration classes, as for {@link SpringBootTest#classes()} */
    @AliasFor(annotation = SpringBootTest.class)
    Class<?>[] classes() default {};
}
