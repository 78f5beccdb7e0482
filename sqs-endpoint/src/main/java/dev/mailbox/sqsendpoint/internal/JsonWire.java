package dev.mailbox.sqsendpoint.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * The AWS JSON 1.0 protocol: {@code X-Amz-Target: AmazonSQS.<Action>}, a JSON object in and out. Errors carry
 * the shape in {@code __type} (which the SDKs map to an exception class) and, because SQS is "query compatible",
 * the query protocol's code in the {@code x-amzn-query-error} header (which they report as the error code).
 */
final class JsonWire implements Wire {

    static final String CONTENT_TYPE = "application/x-amz-json-1.0";
    private static final String TARGET_PREFIX = "AmazonSQS.";

    private final ObjectMapper json;
    /** Reads one JSON value and nothing after it: {@code {...} 5} is not a request. */
    private final com.fasterxml.jackson.databind.ObjectReader reader;

    JsonWire(ObjectMapper json) {
        this.json = json;
        this.reader = json.readerFor(JsonNode.class)
                .with(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    }

    @Override
    public Call parse(RawRequest request) {
        String target = request.header("x-amz-target");
        if (target == null || !target.startsWith(TARGET_PREFIX) || target.length() == TARGET_PREFIX.length()) {
            throw new SqsError(ErrorCode.INVALID_ACTION, "The action or operation requested is invalid. Verify that"
                    + " the action is typed correctly.");
        }
        JsonNode params;
        try {
            params = request.body().length == 0 ? json.createObjectNode() : reader.readValue(request.body());
        } catch (IOException e) {
            throw new SqsError(ErrorCode.SERIALIZATION, "The request body is not one valid JSON object.");
        }
        if (params == null || !params.isObject()) {
            throw new SqsError(ErrorCode.SERIALIZATION, "The request body must be a JSON object.");
        }
        return new Call(target.substring(TARGET_PREFIX.length()), new Params(params, true));
    }

    @Override
    public Answer success(String action, ObjectNode result, String requestId) {
        return new Answer(200, CONTENT_TYPE, bytes(result), Map.of("x-amzn-RequestId", requestId));
    }

    @Override
    public Answer error(SqsError error, String requestId) {
        ObjectNode body = json.createObjectNode().put("__type", error.code.jsonType).put("message", error.getMessage());
        return new Answer(error.code.status, CONTENT_TYPE, bytes(body), Map.of("x-amzn-RequestId", requestId,
                "x-amzn-query-error", error.code.queryCode + ";" + error.code.faultType()));
    }

    private byte[] bytes(ObjectNode node) {
        try {
            return json.writeValueAsBytes(node);
        } catch (JsonProcessingException e) {
            // a tree of strings and numbers always serializes; keep the answer well-formed regardless
            return "{}".getBytes(StandardCharsets.UTF_8);
        }
    }
}
