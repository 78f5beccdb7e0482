package dev.mailbox.spring.boot.autoconfigure;

import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.Mailbox;
import dev.mailbox.mainloop.DeadLetter;
import dev.mailbox.mainloop.MainLoopClient;
import dev.mailbox.mainloop.MainLoopRequest;
import dev.mailbox.spring.boot.autoconfigure.MailboxProperties.Backend;
import dev.mailbox.spring.boot.autoconfigure.MailboxProperties.MailboxSpec;
import org.jspecify.annotations.Nullable;
import org.springframework.core.ResolvableType;

/**
 * One mailbox as the context will make it: its properties with every default and inference applied.
 *
 * @param name         the mailbox's name
 * @param beanName     its bean's name
 * @param backend      where it lives (memory when mailbox.in-memory is set)
 * @param kind         what its messages are
 * @param body         the body type (the request body type of a request mailbox and of its dead letters)
 * @param response     a request mailbox's response type, else null
 * @param spec         its properties
 * @param deadLetter   its dead-letter mailbox's name, or null
 */
record MailboxDeclaration(String name, String beanName, Backend backend, Kind kind, ResolvableType body,
                          @Nullable ResolvableType response, MailboxSpec spec, @Nullable String deadLetter) {

    /** What a mailbox's messages are. */
    enum Kind {
        /** Bodies of the body type. */
        PLAIN,
        /** MainLoopRequest envelopes of the body type, answered with the response type. */
        REQUESTS,
        /** The dead letters a MainLoop keeps for a request mailbox: DeadLetter envelopes of the body type. */
        LOOP_DEAD_LETTERS
    }

    /** @return the type of what is stored: T, MainLoopRequest&lt;T&gt; or DeadLetter&lt;T&gt; */
    ResolvableType stored() {
        return switch (kind) {
            case PLAIN -> body;
            case REQUESTS -> ResolvableType.forClassWithGenerics(MainLoopRequest.class, body);
            case LOOP_DEAD_LETTERS -> ResolvableType.forClassWithGenerics(DeadLetter.class, body);
        };
    }

    /** @return the bean's type, Mailbox&lt;stored&gt; */
    ResolvableType beanType() {
        return ResolvableType.forClassWithGenerics(Mailbox.class, stored());
    }

    /** @return the client bean's type, for a request mailbox */
    ResolvableType clientType() {
        return ResolvableType.forClassWithGenerics(MainLoopClient.class, body, response);
    }

    /** @return the client bean's name, for a request mailbox: the mailbox's name plus "Client" */
    String clientBeanName() {
        return name + "Client";
    }

    /**
     * @return the FIFO options of a FIFO mailbox (mailbox.mailboxes.NAME.fifo), with content-based deduplication
     *         as its properties say; null for a standard mailbox
     */
    @Nullable FifoOptions fifo() {
        return spec.isFifo()
                ? FifoOptions.defaults().withContentBasedDeduplication(spec.isContentBasedDeduplication())
                : null;
    }

    /** @return the delivery limit of its redrive policy, or null */
    @Nullable Integer maxReceiveCount() {
        return spec.getRedrive().getMaxReceiveCount();
    }
}
