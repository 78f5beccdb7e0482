package dev.mailbox.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Mailbox;
import dev.mailbox.mainloop.MainLoopRequest;
import dev.mailbox.mainloop.MainLoopResult;
import dev.mailbox.spring.boot.MailboxListener;
import dev.mailbox.spring.boot.MainLoopHandler;
import dev.mailbox.testkit.redis.RedisServerProcess;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * A request whose reply-to names a declared mailbox is answered there, where that mailbox's listener reads it:
 * on Redis (the same keys) and in memory too, which is what @MailboxTest runs every mailbox on.
 */
class ReplyToTest {

    static class App {
        final Recorder<Integer> results = new Recorder<>();

        @MainLoopHandler("quotes")
        Integer quote(Order order) {
            return order.quantity() * 10;
        }

        @MailboxListener("results")
        void on(MainLoopResult<Integer> result) {
            results.add(result.response());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"memory", "redis"})
    @SuppressWarnings("unchecked")
    void aReplyToADeclaredMailboxReachesItsListener(String backend) {
        try (RedisServerProcess redis = RedisServerProcess.start()) {
            new ApplicationContextRunner()
                    .withConfiguration(AutoConfigurations.of(MailboxAutoConfiguration.class))
                    .withBean(App.class)
                    .withPropertyValues("mailbox.default-backend=" + backend, "mailbox.redis.uri=" + redis.uri(),
                            "mailbox.mailboxes.quotes.wait-time=1s", "mailbox.mailboxes.results.wait-time=1s")
                    .run(context -> {
                        Mailbox<MainLoopRequest<Order>> quotes =
                                (Mailbox<MainLoopRequest<Order>>) context.getBean("quotes");
                        quotes.send(MainLoopRequest.of(new Order("q-1", 4)).withReplyTo("results"));
                        assertThat(context.getBean(App.class).results.awaitCount(1, Duration.ofSeconds(10)))
                                .containsExactly(40);
                    });
        }
    }
}
