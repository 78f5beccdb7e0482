package dev.mailbox.sqsendpoint.internal;

import dev.mailbox.sqsendpoint.AccessKeyStore;
import dev.mailbox.sqsendpoint.QueueDirectory;
import dev.mailbox.sqsendpoint.SqsAuthorizer;
import java.net.InetSocketAddress;
import java.net.URI;
import javax.net.ssl.SSLContext;
import org.jspecify.annotations.Nullable;

/**
 * What {@link dev.mailbox.sqsendpoint.SqsEndpoint.Builder} hands the server, already checked.
 *
 * @param queues                the directory
 * @param credentials           the key store, or null when authentication is off
 * @param authorizer            the authorizer
 * @param listen                where to listen
 * @param region                the region in ARNs
 * @param accountId             the account in URLs and ARNs
 * @param advertisedUrl         the base of queue URLs, or null to use the request's Host
 * @param maxConcurrentRequests the size of the request pool
 * @param tls                   the TLS context, or null for plain HTTP
 */
public record Settings(QueueDirectory queues, @Nullable AccessKeyStore credentials, SqsAuthorizer authorizer,
                       InetSocketAddress listen, String region, String accountId, @Nullable URI advertisedUrl,
                       int maxConcurrentRequests, @Nullable SSLContext tls) {
}
