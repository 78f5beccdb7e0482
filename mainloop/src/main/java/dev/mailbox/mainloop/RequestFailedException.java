package dev.mailbox.mainloop;

import dev.mailbox.api.MailboxException;

/**
 * A {@link MainLoopClient} call was answered with an error result. The runner's error arrives as a
 * type and a message; no remote exception is rebuilt.
 */
public class RequestFailedException extends MailboxException {

    private final String requestId;
    private final MainLoopError error;

    /**
     * @param requestId the request's id
     * @param error     the error the runner sent
     */
    public RequestFailedException(String requestId, MainLoopError error) {
        super("request " + requestId + " failed: " + error.type()
                + (error.message().isEmpty() ? "" : ": " + error.message()));
        this.requestId = requestId;
        this.error = error;
    }

    /**
     * @return the id of the request that failed
     */
    public String requestId() {
        return requestId;
    }

    /**
     * @return the runner's error
     */
    public MainLoopError error() {
        return error;
    }
}
