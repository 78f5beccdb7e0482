package dev.mailbox.sqs;

import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.core.SdkResponse;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.urlconnection.UrlConnectionHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * An SQS client on the shared ElasticMQ whose requests and responses a test can act on, on the calling
 * thread, at the exact point it needs: to hold a request back, or to do something between SQS's answer
 * and the mailbox seeing it. Hooks run for every call until replaced.
 */
final class InterceptedClient implements AutoCloseable {

    private final AtomicReference<Consumer<SdkRequest>> beforeSending = new AtomicReference<>(r -> { });
    private final AtomicReference<Consumer<SdkResponse>> afterAnswer = new AtomicReference<>(r -> { });
    private final AtomicReference<java.util.function.UnaryOperator<SdkResponse>> rewrite =
            new AtomicReference<>(r -> r);
    private final SqsClient client = SqsClient.builder()
            .endpointOverride(SharedElasticMq.endpoint())
            .region(Region.US_EAST_1)
            .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
            .httpClientBuilder(UrlConnectionHttpClient.builder())
            .overrideConfiguration(c -> c.addExecutionInterceptor(new ExecutionInterceptor() {
                @Override
                public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
                    beforeSending.get().accept(context.request());
                }

                @Override
                public void afterUnmarshalling(Context.AfterUnmarshalling context, ExecutionAttributes attributes) {
                    afterAnswer.get().accept(context.response());
                }

                @Override
                public SdkResponse modifyResponse(Context.ModifyResponse context, ExecutionAttributes attributes) {
                    return rewrite.get().apply(context.response());
                }
            }))
            .build();

    SqsClient client() {
        return client;
    }

    /** @param hook runs on the calling thread just before each request leaves */
    void beforeSending(Consumer<SdkRequest> hook) {
        beforeSending.set(hook);
    }

    /** @param hook runs on the calling thread with each response, before the mailbox sees it */
    void afterAnswer(Consumer<SdkResponse> hook) {
        afterAnswer.set(hook);
    }

    /** @param hook replaces each response before the mailbox sees it (as SQS might have answered instead) */
    void rewriteAnswer(java.util.function.UnaryOperator<SdkResponse> hook) {
        rewrite.set(hook);
    }

    @Override
    public void close() {
        client.close();
    }
}
