package dev.mailbox.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.spring.boot.MailboxListener;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.NestedExceptionUtils;

/**
 * The coordinated mode's settings are checked when the context starts: a lease the coordinator would refuse
 * used to start the application with listeners that never ran (the refusal was only logged).
 */
class CoordinationConfigTest {

    static class Listener {
        @MailboxListener("orders")
        void on(Order order) {
        }
    }

    private ApplicationContextRunner runner() {
        // nothing starts (auto-startup off): no coordinator is asked
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(MailboxAutoConfiguration.class))
                .withBean(Listener.class)
                .withPropertyValues("mailbox.mailboxes.orders.backend=memory", "mailbox.listener.auto-startup=false",
                        "mailbox.coordination.enabled=true", "mailbox.coordination.endpoints=127.0.0.1:1");
    }

    @Test
    void anApplicationNameThatIsNoLeaseIdIsMadeOne() {
        runner().withPropertyValues("spring.application.name=Order Service (EU)").run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(LeaseGate.class).details()).containsEntry("lease", "Order-Service--EU-");
            assertThat((String) context.getBean(LeaseGate.class).details().get("runnerId"))
                    .startsWith("Order-Service--EU--");
        });
    }

    @Test
    void aLeaseTheCoordinatorWouldRefuseStopsTheContext() {
        runner().withPropertyValues("mailbox.coordination.lease=orders service").run(context -> {
            assertThat(context).hasFailed();
            assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
                    .hasMessageContaining("mailbox.coordination.lease").hasMessageContaining("'orders service'");
        });
        runner().withPropertyValues("mailbox.coordination.lease=_nodes").run(context -> {
            assertThat(context).hasFailed();
            assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
                    .hasMessageContaining("mailbox.coordination.lease").hasMessageContaining("reserved");
        });
    }

    @Test
    void aTtlTheCoordinatorWouldRefuseStopsTheContext() {
        runner().withPropertyValues("spring.application.name=shop", "mailbox.coordination.ttl=500ms").run(context -> {
            assertThat(context).hasFailed();
            assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
                    .hasMessageContaining("mailbox.coordination.ttl").hasMessageContaining("between");
        });
    }

    @Test
    void aBadHolderFieldIsNamed() {
        runner().withPropertyValues("spring.application.name=shop", "mailbox.coordination.address=no port")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(NestedExceptionUtils.getMostSpecificCause(context.getStartupFailure()))
                            .hasMessageContaining("mailbox.coordination.address");
                });
    }
}
