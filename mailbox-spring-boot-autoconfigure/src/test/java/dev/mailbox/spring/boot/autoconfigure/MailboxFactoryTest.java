package dev.mailbox.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.spring.boot.autoconfigure.MailboxProperties.Backend;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** What the factory keeps: a mailbox opened by name is forgotten once its user closes it. */
class MailboxFactoryTest {

    @Test
    void aMailboxOpenedByNameIsForgottenWhenClosed() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(MailboxAutoConfiguration.class))
                .withPropertyValues("mailbox.mailboxes.orders.backend=memory",
                        "mailbox.mailboxes.orders.type=" + Order.class.getName())
                .run(context -> {
                    MailboxFactory factory = context.getBean(MailboxFactory.BEAN_NAME, MailboxFactory.class);
                    // a MainLoop opens one per reply-to it answers, and closes those it has not used for a while:
                    // kept here too, they would pile up for as long as the application runs
                    for (int i = 0; i < 100; i++) {
                        Mailbox<String> reply = factory.dynamic(Backend.MEMORY, "reply-" + i, Codec.utf8());
                        reply.send("r");
                        reply.close();
                    }
                    assertThat(factory.openedCount()).isZero();
                    Mailbox<String> open = factory.dynamic(Backend.MEMORY, "still-open", Codec.utf8());
                    assertThat(factory.openedCount()).isEqualTo(1);
                    open.close();
                    open.close();
                    assertThat(factory.openedCount()).isZero();
                });
    }
}
