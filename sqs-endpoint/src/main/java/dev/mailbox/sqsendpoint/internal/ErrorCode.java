package dev.mailbox.sqsendpoint.internal;

/**
 * The errors the endpoint answers with, as SQS spells them in each protocol: the query protocol's
 * {@code <Code>} (also the JSON protocol's {@code x-amzn-query-error} header, which the SDKs report as the
 * error code), the JSON protocol's {@code __type} (which the SDKs map to an exception class) and the HTTP
 * status.
 */
enum ErrorCode {
    QUEUE_DOES_NOT_EXIST("AWS.SimpleQueueService.NonExistentQueue", Shape.SQS + "QueueDoesNotExist", 400),
    QUEUE_NAME_EXISTS("QueueAlreadyExists", Shape.SQS + "QueueNameExists", 400),
    // 404, as SQS's own model has it (awsQueryError ReceiptHandleIsInvalid, 404)
    RECEIPT_HANDLE_IS_INVALID("ReceiptHandleIsInvalid", Shape.SQS + "ReceiptHandleIsInvalid", 404),
    RESOURCE_NOT_FOUND("ResourceNotFoundException", Shape.SQS + "ResourceNotFoundException", 404),
    MESSAGE_NOT_INFLIGHT("AWS.SimpleQueueService.MessageNotInflight", Shape.SQS + "MessageNotInflight", 400),
    INVALID_ATTRIBUTE_NAME("InvalidAttributeName", Shape.SQS + "InvalidAttributeName", 400),
    INVALID_ATTRIBUTE_VALUE("InvalidAttributeValue", Shape.SQS + "InvalidAttributeValue", 400),
    INVALID_MESSAGE_CONTENTS("InvalidMessageContents", Shape.SQS + "InvalidMessageContents", 400),
    TOO_MANY_ENTRIES_IN_BATCH_REQUEST("AWS.SimpleQueueService.TooManyEntriesInBatchRequest",
            Shape.SQS + "TooManyEntriesInBatchRequest", 400),
    EMPTY_BATCH_REQUEST("AWS.SimpleQueueService.EmptyBatchRequest", Shape.SQS + "EmptyBatchRequest", 400),
    BATCH_ENTRY_IDS_NOT_DISTINCT("AWS.SimpleQueueService.BatchEntryIdsNotDistinct", Shape.SQS + "BatchEntryIdsNotDistinct",
            400),
    INVALID_BATCH_ENTRY_ID("AWS.SimpleQueueService.InvalidBatchEntryId", Shape.SQS + "InvalidBatchEntryId", 400),
    BATCH_REQUEST_TOO_LONG("AWS.SimpleQueueService.BatchRequestTooLong", Shape.SQS + "BatchRequestTooLong", 400),
    UNSUPPORTED_OPERATION("AWS.SimpleQueueService.UnsupportedOperation", Shape.SQS + "UnsupportedOperation", 400),
    OVER_LIMIT("OverLimit", Shape.SQS + "OverLimit", 403),
    INVALID_PARAMETER_VALUE("InvalidParameterValue", Shape.SQS + "InvalidParameterValue", 400),
    MISSING_PARAMETER("MissingParameter", Shape.SQS + "MissingParameter", 400),
    INVALID_ACTION("InvalidAction", Shape.SQS + "InvalidAction", 400),
    MISSING_ACTION("MissingAction", Shape.SQS + "MissingAction", 400),
    SERIALIZATION("SerializationException", Shape.CORAL + "SerializationException", 400),
    REQUEST_TOO_LARGE("RequestEntityTooLarge", Shape.CORAL + "RequestEntityTooLargeException", 413),
    REQUEST_TIMEOUT("RequestTimeout", Shape.CORAL + "RequestTimeoutException", 408),
    INVALID_CLIENT_TOKEN_ID("InvalidClientTokenId", Shape.CORAL + "UnrecognizedClientException", 403),
    SIGNATURE_DOES_NOT_MATCH("SignatureDoesNotMatch", Shape.CORAL + "InvalidSignatureException", 403),
    INCOMPLETE_SIGNATURE("IncompleteSignature", Shape.CORAL + "IncompleteSignatureException", 400),
    MISSING_AUTHENTICATION_TOKEN("MissingAuthenticationToken", Shape.CORAL + "MissingAuthenticationTokenException", 403),
    ACCESS_DENIED("AccessDenied", Shape.CORAL + "AccessDeniedException", 403),
    SERVICE_UNAVAILABLE("ServiceUnavailable", Shape.CORAL + "ServiceUnavailableException", 503),
    INTERNAL_FAILURE("InternalFailure", Shape.CORAL + "InternalFailure", 500);

    final String queryCode;
    final String jsonType;
    final int status;

    ErrorCode(String queryCode, String jsonType, int status) {
        this.queryCode = queryCode;
        this.jsonType = jsonType;
        this.status = status;
    }

    /** @return {@code Receiver} for the server's own faults, {@code Sender} for the client's */
    String faultType() {
        return status >= 500 ? "Receiver" : "Sender";
    }

    /** The namespaces of SQS's own error shapes and of the AWS front end's. */
    private static final class Shape {
        static final String SQS = "com.amazonaws.sqs#";
        static final String CORAL = "com.amazon.coral.service#";
    }
}
