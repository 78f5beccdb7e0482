package dev.mailbox.sqs;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DisplayName;
import org.testcontainers.containers.localstack.LocalStackContainer;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;
import org.testcontainers.utility.DockerImageName;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * The contract on LocalStack's SQS in a container. Needs a Docker engine; without one JUnit reports
 * the class as skipped ("disabled because Docker is not available"). Run it alone with
 * {@code mvn -pl mailbox-sqs -am verify -Dtest=LocalStackContractTest -Dsurefire.failIfNoSpecifiedTests=false}.
 */
@Testcontainers(disabledWithoutDocker = true)
@DisplayName("SqsMailbox on LocalStack meets the Mailbox contract")
class LocalStackContractTest extends SqsMailboxContract {

    /** 3.8.1 is the last line that starts without an auth token. */
    @Container
    static final LocalStackContainer LOCALSTACK = new LocalStackContainer(DockerImageName.parse("localstack/localstack:3.8.1"))
            .withServices(LocalStackContainer.Service.SQS);

    private static SqsClient client;

    @Override
    protected synchronized SqsClient client() {
        if (client == null) {
            client = SharedElasticMq.newClient(LOCALSTACK.getEndpoint());
        }
        return client;
    }

    @AfterAll
    static void closeClient() {
        if (client != null) {
            client.close();
            client = null;
        }
    }

    /** FIFO queues are SQS's; the server has them. */
    @Override
    protected boolean fifoQueues() {
        return true;
    }
}
