package dev.mailbox.spring.boot.autoconfigure;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What {@link MailboxBeanRegistrar} found and decided: every mailbox, in an order where a dead-letter
 * mailbox comes before the mailboxes that use it, and every listener and handler method.
 *
 * @param mailboxes  by name
 * @param endpoints  the methods
 * @param properties the bound properties
 */
record MailboxDeclarations(Map<String, MailboxDeclaration> mailboxes, List<Endpoint> endpoints,
                           MailboxProperties properties) {

    static final String BEAN_NAME = "dev.mailbox.spring.boot.mailboxDeclarations";

    MailboxDeclaration get(String name) {
        return Optional.ofNullable(mailboxes.get(name))
                .orElseThrow(() -> new IllegalStateException("no mailbox '" + name + "' is declared"));
    }
}
