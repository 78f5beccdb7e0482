package dev.mailbox.sqsendpoint.internal;

import dev.mailbox.api.MailboxException;

/**
 * A call refused with one of SQS's errors. Thrown anywhere inside the endpoint and turned into the protocol's
 * error response at the top; never leaves the endpoint. Carries no stack trace: it is an answer, not a fault.
 */
final class SqsError extends MailboxException {

    final ErrorCode code;

    SqsError(ErrorCode code, String message) {
        super(message);
        this.code = code;
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
        return this;
    }

    static SqsError invalidParameter(String message) {
        return new SqsError(ErrorCode.INVALID_PARAMETER_VALUE, message);
    }

    static SqsError missing(String parameter) {
        return new SqsError(ErrorCode.MISSING_PARAMETER, "The request must contain the parameter " + parameter + ".");
    }
}
