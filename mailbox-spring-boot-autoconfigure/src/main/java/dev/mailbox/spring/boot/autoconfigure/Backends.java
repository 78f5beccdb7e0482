package dev.mailbox.spring.boot.autoconfigure;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.RedrivePolicy;
import org.jspecify.annotations.Nullable;

/**
 * One backend's connection, made when the first mailbox on it is: each implementation is the only class
 * that names its backend's types, so an application without that backend's jars never loads it.
 */
interface Backends extends AutoCloseable {

    /**
     * @param d        the declaration
     * @param codec    its codec
     * @param redrive  the backend redrive policy, or null
     * @param <T>      the body type
     * @return a new mailbox, owned by the caller
     */
    <T> Mailbox<T> declared(MailboxDeclaration d, Codec<T> codec, @Nullable RedrivePolicy redrive);

    /**
     * A mailbox known only by its name at run time: a MainLoop client's response mailbox, a reply-to.
     *
     * @param name  its name
     * @param codec its codec
     * @param <T>   the body type
     * @return the mailbox; closing it releases what this call made
     */
    <T> Mailbox<T> dynamic(String name, Codec<T> codec);

    /**
     * Gets rid of a MainLoop client's response mailbox when the client closes: purges it, or deletes it where
     * that is the only way not to leave it behind (an SQS queue).
     *
     * @param mailbox a mailbox {@link #dynamic} made
     */
    default void discard(Mailbox<?> mailbox) {
        mailbox.purge();
    }

    /** @return for health details: where the mailboxes are */
    String describe();

    @Override
    void close();
}
