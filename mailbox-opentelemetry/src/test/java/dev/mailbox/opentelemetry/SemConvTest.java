package dev.mailbox.opentelemetry;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.semconv.ErrorAttributes;
import io.opentelemetry.semconv.ServerAttributes;
import io.opentelemetry.semconv.incubating.MessagingIncubatingAttributes;
import io.opentelemetry.semconv.incubating.RpcIncubatingAttributes;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class SemConvTest {

    @Test
    @DisplayName("the copied convention names are the conventions' (opentelemetry-semconv 1.37)")
    void namesMatch() {
        assertThat(SemConv.MESSAGING_SYSTEM).isEqualTo(MessagingIncubatingAttributes.MESSAGING_SYSTEM);
        assertThat(SemConv.MESSAGING_OPERATION_NAME).isEqualTo(MessagingIncubatingAttributes.MESSAGING_OPERATION_NAME);
        assertThat(SemConv.MESSAGING_OPERATION_TYPE).isEqualTo(MessagingIncubatingAttributes.MESSAGING_OPERATION_TYPE);
        assertThat(SemConv.MESSAGING_DESTINATION_NAME).isEqualTo(MessagingIncubatingAttributes.MESSAGING_DESTINATION_NAME);
        assertThat(SemConv.MESSAGING_MESSAGE_ID).isEqualTo(MessagingIncubatingAttributes.MESSAGING_MESSAGE_ID);
        assertThat(SemConv.MESSAGING_BATCH_MESSAGE_COUNT)
                .isEqualTo(MessagingIncubatingAttributes.MESSAGING_BATCH_MESSAGE_COUNT);
        assertThat(SemConv.SEND).isEqualTo(MessagingIncubatingAttributes.MessagingOperationTypeIncubatingValues.SEND);
        assertThat(SemConv.RECEIVE).isEqualTo(MessagingIncubatingAttributes.MessagingOperationTypeIncubatingValues.RECEIVE);
        assertThat(SemConv.PROCESS).isEqualTo(MessagingIncubatingAttributes.MessagingOperationTypeIncubatingValues.PROCESS);
        assertThat(SemConv.SETTLE).isEqualTo(MessagingIncubatingAttributes.MessagingOperationTypeIncubatingValues.SETTLE);
        assertThat(SemConv.ERROR_TYPE).isEqualTo(ErrorAttributes.ERROR_TYPE);
        assertThat(SemConv.SERVER_ADDRESS).isEqualTo(ServerAttributes.SERVER_ADDRESS);
        assertThat(SemConv.SERVER_PORT).isEqualTo(ServerAttributes.SERVER_PORT);
        assertThat(SemConv.RPC_SYSTEM).isEqualTo(RpcIncubatingAttributes.RPC_SYSTEM);
        assertThat(SemConv.RPC_SERVICE).isEqualTo(RpcIncubatingAttributes.RPC_SERVICE);
        assertThat(SemConv.RPC_METHOD).isEqualTo(RpcIncubatingAttributes.RPC_METHOD);
        assertThat(SemConv.RPC_GRPC_STATUS_CODE).isEqualTo(RpcIncubatingAttributes.RPC_GRPC_STATUS_CODE);
    }
}
