package dev.mailbox.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.mailbox.mainloop.MainLoopClient;
import dev.mailbox.mainloop.RequestFailedException;
import dev.mailbox.mainloop.RequestTimeoutException;
import dev.mailbox.spring.boot.MainLoopHandler;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** {@code mailbox.mailboxes.<name>.client.timeout} is the client bean's timeout for a call that names none. */
class ClientTimeoutTest {

    static class Slow {
        final CountDownLatch release = new CountDownLatch(1);

        @MainLoopHandler("quotes")
        Integer quote(Order order) throws InterruptedException {
            release.await(30, TimeUnit.SECONDS);
            return order.quantity();
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void aCallWithoutATimeoutTakesTheProperty() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(MailboxAutoConfiguration.class))
                .withBean(Slow.class)
                .withPropertyValues("mailbox.mailboxes.quotes.backend=memory",
                        "mailbox.mailboxes.quotes.client.timeout=300ms", "mailbox.listener.shutdown-grace=0s")
                .run(context -> {
                    MainLoopClient<Order, Integer> client =
                            (MainLoopClient<Order, Integer>) context.getBean("quotesClient");
                    long start = System.nanoTime();
                    // without the property: twice the visibility timeout, a minute. The timeout is the request's
                    // deadline too, so either the client gives up or the runner answers that it is past
                    assertThatThrownBy(() -> client.call(new Order("q-1", 1)).get(20, TimeUnit.SECONDS))
                            .isInstanceOf(ExecutionException.class).cause()
                            .satisfiesAnyOf(c -> assertThat(c).isInstanceOf(RequestTimeoutException.class),
                                    c -> assertThat(c).isInstanceOf(RequestFailedException.class)
                                            .hasMessageContaining("DeadlineExceeded"));
                    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
                    context.getBean(Slow.class).release.countDown();
                });
    }
}
