package dev.mailbox.spring.boot;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated bean method for every message of a mailbox, from when the application context has
 * started until it stops.
 *
 * <pre>{@code
 * @Component
 * class Fulfilment {
 *     @MailboxListener("orders")
 *     void ship(Order order) { ... }                  // or: void ship(Message<Order> message)
 * }
 * }</pre>
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li><b>One parameter</b>: the body type {@code T}, or {@code dev.mailbox.api.Message<T>} for the id,
 *       attributes and delivery count too. {@code T} is the mailbox's body type: when
 *       {@code mailbox.mailboxes.<name>.type} is not set it is taken from this parameter, and a mailbox
 *       whose listeners disagree on it is refused when the context starts. The return value is ignored.</li>
 *   <li><b>Acknowledged on return.</b> The message is deleted once the method returns.</li>
 *   <li><b>Returned on exception.</b> If the method throws, the message is nacked with a backoff that grows
 *       with its delivery count ({@code mailbox.mailboxes.<name>.listener.backoff.*}); with a redrive policy
 *       ({@code mailbox.mailboxes.<name>.redrive.*}) it moves to the dead-letter mailbox after
 *       {@code max-receive-count} deliveries. A body that cannot be decoded counts as a failure, so it too
 *       ends there and is never dropped.</li>
 *   <li><b>Kept invisible while it runs.</b> The message's visibility is extended every third of the
 *       visibility timeout until the method returns.</li>
 *   <li><b>At least once.</b> A message may be delivered again (a crash, a lapse, a lost acknowledgement):
 *       make the method idempotent.</li>
 *   <li><b>Shutdown.</b> When the context stops, receiving stops, running methods get the grace period
 *       ({@code mailbox.listener.shutdown-grace}) and are then interrupted, and every message not finished is
 *       returned to the mailbox at once, for another instance.</li>
 *   <li><b>Coordinated mode</b> ({@code mailbox.coordination.enabled}): the method runs only while the
 *       application holds its coordinator lease, and its receives and acknowledgements are fenced by the
 *       lease's epoch.</li>
 * </ul>
 * The method must be on a singleton bean whose definition shows its class (a {@code @Bean} method returning
 * an interface hides it: the context then refuses to start, naming the bean); it is called on the listener's
 * own threads, by as many at once as {@link #concurrency()} says.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface MailboxListener {

    /**
     * @return the mailbox's name, as under {@code mailbox.mailboxes}; {@code ${...}} placeholders are
     *         resolved
     */
    String value();

    /**
     * @return how many messages are handled at once, as a number or a {@code ${...}} placeholder; empty
     *         for {@code mailbox.mailboxes.<name>.listener.concurrency} (default 1)
     */
    String concurrency() default "";
}
