package dev.mailbox.sqsendpoint.internal;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Map;

/** One of SQS's two wire protocols: how a request's action and parameters are read and answers written. */
interface Wire {

    /** A parsed request: the action and its parameters in the JSON protocol's shape. */
    record Call(String action, Params params) {
    }

    /** An answer to write. */
    record Answer(int status, String contentType, byte[] body, Map<String, String> headers) {
    }

    /**
     * @param request the request
     * @return its action and parameters
     * @throws SqsError if it cannot be read
     */
    Call parse(RawRequest request);

    /**
     * @param action    the action answered
     * @param result    its result, in the JSON protocol's shape
     * @param requestId the request's id
     * @return the answer
     */
    Answer success(String action, ObjectNode result, String requestId);

    /**
     * @param error     the refusal
     * @param requestId the request's id
     * @return the answer
     */
    Answer error(SqsError error, String requestId);
}
