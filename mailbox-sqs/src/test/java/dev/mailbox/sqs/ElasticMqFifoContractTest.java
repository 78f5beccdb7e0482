package dev.mailbox.sqs;

import java.lang.reflect.Method;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import software.amazon.awssdk.services.sqs.SqsClient;

/**
 * The contract on FIFO queues, where SQS's own deduplication makes {@code durableDeduplication()} true, so
 * the kit's cross-object deduplication test runs. Two things of the contract SQS FIFO queues cannot do and
 * no capability declares yet, so the tests that need them are disabled here, each saying why (see
 * {@link FifoQueuesCannot}).
 */
@DisplayName("SqsMailbox on an embedded ElasticMQ FIFO queue meets the Mailbox contract")
@ExtendWith(ElasticMqFifoContractTest.FifoQueuesCannot.class)
class ElasticMqFifoContractTest extends SqsMailboxContract {

    @Override
    protected SqsClient client() {
        return SharedElasticMq.client();
    }

    @Override
    protected boolean fifo() {
        return true;
    }

    /** Disables exactly the kit's tests that need what SQS FIFO queues lack, by nested group and method. */
    static final class FifoQueuesCannot implements ExecutionCondition {

        private static final String DELAY = "SQS FIFO queues take no per-message delay; SqsMailbox refuses one";
        private static final Map<String, String> WHY = Map.of(
                "Delays.delayed", DELAY,
                "Delays.delayedBatch", DELAY,
                "Delays.delayDoesNotBlock", DELAY,
                "LongPolling.wakesOnDelayEnd", DELAY,
                "Counting.countsEveryState", DELAY,
                "Counting.purgeEverything", DELAY,
                "Names.portable", "an SQS FIFO queue's name is the mailbox's plus '.fifo', so 75 characters at most, not 80");

        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            String key = context.getTestMethod()
                    .map(Method::getDeclaringClass)
                    .map(c -> c.getSimpleName() + "." + context.getRequiredTestMethod().getName())
                    .orElse("");
            String why = WHY.get(key);
            return why == null ? ConditionEvaluationResult.enabled("FIFO queues can") : ConditionEvaluationResult.disabled(why);
        }
    }
}
