package dev.mailbox.spring.boot.autoconfigure;

import dev.mailbox.api.Codec;
import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.sqs.SqsMailbox;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsAsyncClient;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.SqsClientBuilder;
import software.amazon.awssdk.services.sqs.SqsServiceClientConfiguration;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;

/**
 * SQS mailboxes on one synchronous {@link SqsClient}, found in this order: {@code mailbox.sqs.region} (a client
 * of the mailboxes' own, with {@code mailbox.sqs.endpoint} and static keys if given); the application's
 * {@code SqsClient} bean (not closed here); a client made like the application's {@code SqsAsyncClient} bean
 * (Spring Cloud AWS's): its region, endpoint override and credentials.
 */
final class SqsBackends implements Backends {

    private final SqsClient client;
    private final boolean owned;
    private final String where;
    private final boolean createIfMissing;

    SqsBackends(MailboxProperties.Sqs properties, ListableBeanFactory beans) {
        this.createIfMissing = properties.isCreateIfMissing();
        SqsClient bean = beans.getBeanProvider(SqsClient.class).getIfUnique();
        SqsAsyncClient async = beans.getBeanProvider(SqsAsyncClient.class).getIfUnique();
        if (properties.getRegion() != null) {
            SqsClientBuilder b = SqsClient.builder().region(Region.of(properties.getRegion()))
                    .httpClientBuilder(UrlConnectionHttpClient.builder());
            if (properties.getEndpoint() != null) {
                b.endpointOverride(properties.getEndpoint());
            }
            if ((properties.getAccessKey() == null) != (properties.getSecretKey() == null)) {
                throw new IllegalStateException("give both mailbox.sqs.access-key and mailbox.sqs.secret-key, or neither");
            }
            if (properties.getAccessKey() != null) {
                b.credentialsProvider(StaticCredentialsProvider.create(
                        AwsBasicCredentials.create(properties.getAccessKey(), properties.getSecretKey())));
            }
            client = b.build();
            owned = true;
            where = "region " + properties.getRegion()
                    + (properties.getEndpoint() != null ? " at " + properties.getEndpoint() : "");
        } else if (bean != null) {
            client = bean;
            owned = false;
            where = "the application's SqsClient";
        } else if (async != null) {
            SqsServiceClientConfiguration c = async.serviceClientConfiguration();
            SqsClientBuilder b = SqsClient.builder().region(c.region()).credentialsProvider(c.credentialsProvider())
                    .httpClientBuilder(UrlConnectionHttpClient.builder());
            c.endpointOverride().ifPresent(b::endpointOverride);
            client = b.build();
            owned = true;
            where = "like the application's SqsAsyncClient (region " + c.region()
                    + c.endpointOverride().map(e -> " at " + e).orElse("") + ")";
        } else {
            throw new IllegalStateException("an sqs mailbox needs an SQS client: set mailbox.sqs.region (and"
                    + " mailbox.sqs.endpoint), or define an SqsClient or SqsAsyncClient bean (Spring Cloud AWS makes one)");
        }
    }

    @Override
    public <T> Mailbox<T> declared(MailboxDeclaration d, Codec<T> codec, @Nullable RedrivePolicy redrive) {
        SqsMailbox.Builder<T> b = SqsMailbox.builder(d.name(), codec).client(client).createIfMissing(createIfMissing);
        MailboxProperties.SqsSpec sqs = d.spec().getSqs();
        if (sqs.getQueueUrl() != null) {
            b.queueUrl(sqs.getQueueUrl());
        }
        for (Map.Entry<String, String> a : sqs.getQueueAttributes().entrySet()) {
            QueueAttributeName name = QueueAttributeName.fromValue(a.getKey());
            if (name == QueueAttributeName.UNKNOWN_TO_SDK_VERSION) {
                throw new IllegalStateException("mailbox.mailboxes." + d.name() + ".sqs.queue-attributes: '" + a.getKey()
                        + "' is not an SQS queue attribute (such as MessageRetentionPeriod)");
            }
            b.queueAttribute(name, a.getValue());
        }
        if (d.spec().getCapacity() > 0) {
            b.capacity(d.spec().getCapacity()); // refuses, naming the mailbox
        }
        if (d.spec().getMaxMessageBytes() != null) {
            b.maxMessageBytes(d.spec().getMaxMessageBytes());
        }
        if (redrive != null) {
            b.redrivePolicy(redrive);
        }
        FifoOptions fifo = d.fifo(); // built from the properties on each call
        if (fifo != null) {
            b.fifo(fifo);
        }
        return b.build();
    }

    @Override
    public <T> Mailbox<T> dynamic(String name, Codec<T> codec) {
        return SqsMailbox.builder(name, codec).client(client).createIfMissing(true).build();
    }

    /** Deletes the queue: SQS keeps an idle queue for weeks, and every client start makes a new one. */
    @Override
    public void discard(Mailbox<?> mailbox) {
        String url = client.getQueueUrl(r -> r.queueName(mailbox.name())).queueUrl();
        client.deleteQueue(r -> r.queueUrl(url));
    }

    @Override
    public String describe() {
        return "sqs " + where;
    }

    @Override
    public void close() {
        if (owned) {
            client.close();
        }
    }
}
