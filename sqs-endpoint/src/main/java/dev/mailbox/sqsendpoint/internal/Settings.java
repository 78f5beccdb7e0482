package dev.mailbox.sqsendpoint.internal;

import dev.mailbox.http.BodyBudget;
import dev.mailbox.http.HttpLimits;
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
 * @param queues             the directory
 * @param credentials        the key store, or null when authentication is off
 * @param authorizer         the authorizer
 * @param listen             where to listen
 * @param region             the region in ARNs
 * @param accountId          the account in URLs and ARNs
 * @param advertisedUrl      the base of queue URLs, or null to use the request's Host
 * @param limits             the listener's limits (its workers only sort requests into the endpoint's lanes)
 * @param callThreads        the threads that serve calls other than receives
 * @param callQueue          how many such calls may wait for one of them
 * @param maxWaitingReceives how many receives may wait (long-poll) at once, each on a thread of its own
 * @param budget             the memory for request bodies
 * @param tls                the TLS context, or null for plain HTTP
 */
public record Settings(QueueDirectory queues, @Nullable AccessKeyStore credentials, SqsAuthorizer authorizer,
                       InetSocketAddress listen, String region, String accountId, @Nullable URI advertisedUrl,
                       HttpLimits limits, int callThreads, int callQueue, int maxWaitingReceives, BodyBudget budget,
                       @Nullable SSLContext tls) {
}
