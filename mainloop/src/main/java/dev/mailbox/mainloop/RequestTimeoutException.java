package dev.mailbox.mainloop;

import dev.mailbox.api.MailboxException;
import java.time.Duration;

/**
 * A {@link MainLoopClient} call got no result within its timeout. The request may still run: its
 * deadline tells runners that the answer is no longer wanted, but one already running it finishes.
 */
public class RequestTimeoutException extends MailboxException {

    private final String requestId;

    /**
     * @param requestId the request's id
     * @param timeout   how long the caller waited
     */
    public RequestTimeoutException(String requestId, Duration timeout) {
        super("no result for request " + requestId + " within " + timeout);
        this.requestId = requestId;
    }

    /**
     * @return the id of the request that timed out
     */
    public String requestId() {
        return requestId;
    }
}
