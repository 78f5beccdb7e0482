package dev.mailbox.spring.boot;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Answers the requests of a request/response mailbox with the annotated bean method, through a
 * {@link dev.mailbox.mainloop.MainLoop} that runs from when the application context has started until it
 * stops.
 *
 * <pre>{@code
 * @Component
 * class Pricing {
 *     @MainLoopHandler("quotes")
 *     Quote price(QuoteRequest request) { ... }   // or: Quote price(MainLoopRequest<QuoteRequest> request)
 * }
 * }</pre>
 *
 * Callers inject the matching client, {@code MainLoopClient<QuoteRequest, Quote>} (bean
 * {@code <name>Client}), here or in any application with the same mailbox declared.
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li><b>One parameter</b>, the request body type {@code Req} or {@code MainLoopRequest<Req>}, and a return
 *       type {@code Res}: the mailbox holds {@code MainLoopRequest<Req>} and results carry {@code Res}. When
 *       {@code mailbox.mailboxes.<name>.type} and {@code response-type} are not set they are taken from the
 *       method.</li>
 *   <li>Everything else is {@code MainLoop}'s: the result is sent before the request is acknowledged, the
 *       request is kept invisible while the method runs, a redelivered request is answered from memory, a
 *       thrown exception becomes the caller's error (retried only where the retry policy says so), and a
 *       request is dead-lettered after {@code mailbox.mailboxes.<name>.redrive.max-receive-count}
 *       deliveries (to {@code redrive.dead-letter}, if set).</li>
 *   <li><b>Shutdown, coordinated mode and the bean it is on</b> as for {@link MailboxListener}.</li>
 * </ul>
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface MainLoopHandler {

    /**
     * @return the request mailbox's name, as under {@code mailbox.mailboxes}; {@code ${...}} placeholders are
     *         resolved
     */
    String value();

    /**
     * @return how many requests are handled at once, as a number or a {@code ${...}} placeholder; empty for
     *         {@code mailbox.mailboxes.<name>.listener.concurrency} (default 1)
     */
    String concurrency() default "";
}
