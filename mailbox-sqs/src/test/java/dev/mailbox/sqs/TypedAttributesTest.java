package dev.mailbox.sqs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.AttributeValue;
import dev.mailbox.api.Codec;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.SendOptions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;

/** Number and Binary message attributes keep their type through SqsMailbox, both ways. */
class TypedAttributesTest {

    private final SqsClient sqs = SharedElasticMq.client();
    private SqsMailbox<String> mailbox;

    @AfterEach
    void deleteQueue() {
        if (mailbox != null) {
            mailbox.close();
            sqs.deleteQueue(r -> r.queueUrl(mailbox.queueUrl()));
        }
    }

    private SqsMailbox<String> newMailbox() {
        mailbox = SqsMailbox.builder("typed-" + UUID.randomUUID().toString().substring(0, 8), Codec.utf8())
                .client(sqs).createIfMissing(true).build();
        return mailbox;
    }

    private static MessageAttributeValue text(String type, String value) {
        return MessageAttributeValue.builder().dataType(type).stringValue(value).build();
    }

    private static MessageAttributeValue binary(String type, byte[] value) {
        return MessageAttributeValue.builder().dataType(type).binaryValue(SdkBytes.fromByteArray(value)).build();
    }

    @Test
    @DisplayName("attributes an SDK client sent with types arrive typed in Message.typedAttributes(), none dropped;"
            + " attributes() has the plain strings")
    void fromSqs() {
        SqsMailbox<String> m = newMailbox();
        sqs.sendMessage(r -> r.queueUrl(m.queueUrl()).messageBody("x").messageAttributes(Map.of(
                "plain", text("String", "acme"),
                "looksTyped", text("String", "{sqs:Number}1"),
                "price", text("Number", "12.50"),
                "count", text("Number.int", "7"),
                "blob", binary("Binary", new byte[] {0, 1, 2, (byte) 0xff}),
                "png", binary("Binary.png", new byte[] {(byte) 0x89, 'P', 'N', 'G'}))));

        Message<String> got = m.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(5))).get(0);

        assertThat(got.typedAttributes()).containsExactlyInAnyOrderEntriesOf(Map.of(
                "plain", AttributeValue.string("acme"),
                "looksTyped", AttributeValue.string("{sqs:Number}1"),
                "price", AttributeValue.number("12.50"),
                "count", AttributeValue.of("Number.int", "7"),
                "blob", AttributeValue.binary(new byte[] {0, 1, 2, (byte) 0xff}),
                "png", AttributeValue.ofBinary("Binary.png", new byte[] {(byte) 0x89, 'P', 'N', 'G'})));
        assertThat(got.attributes()).isEqualTo(Map.of("plain", "acme", "looksTyped", "{sqs:Number}1"));
    }

    @Test
    @DisplayName("typed attributes go to SQS with their type, and come back to SqsMailbox unchanged")
    void toSqsAndBack() {
        SqsMailbox<String> m = newMailbox();
        SendOptions options = SendOptions.defaults().withAttribute("plain", "acme")
                .withAttribute("braces", "{sqs:Binary}AAEC")
                .withAttribute("price", AttributeValue.number("12.50"))
                .withAttribute("json", AttributeValue.of("String.json", "{\"a\":1}"))
                .withAttribute("blob", AttributeValue.binary(new byte[] {0, 1, 2, (byte) 0xff}));
        m.send("x", options);

        software.amazon.awssdk.services.sqs.model.Message raw = sqs.receiveMessage(r -> r.queueUrl(m.queueUrl())
                .messageAttributeNames("All").visibilityTimeout(0).waitTimeSeconds(5)).messages().get(0);
        assertThat(raw.messageAttributes()).containsExactlyInAnyOrderEntriesOf(Map.of(
                "plain", text("String", "acme"),
                "braces", text("String", "{sqs:Binary}AAEC"),
                "price", text("Number", "12.50"),
                "json", text("String.json", "{\"a\":1}"),
                "blob", binary("Binary", new byte[] {0, 1, 2, (byte) 0xff})));

        List<Message<String>> again = m.receive(ReceiveOptions.defaults().withWaitTime(Duration.ofSeconds(5)));
        assertThat(again).hasSize(1);
        assertThat(again.get(0).typedAttributes()).isEqualTo(options.typedAttributes());
        assertThat(again.get(0).attributes()).isEqualTo(options.attributes());
    }

    @Test
    @DisplayName("the AWSTraceHeader attribute travels as SQS's system attribute of that name, both ways")
    void traceHeaderIsTheSystemAttribute() {
        SqsMailbox<String> m = newMailbox();
        String header = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1";
        m.send("x", SendOptions.defaults().withAttribute("tenant", "acme")
                .withAttribute(SqsMailbox.TRACE_HEADER_ATTRIBUTE, header));

        software.amazon.awssdk.services.sqs.model.Message raw = sqs.receiveMessage(r -> r.queueUrl(m.queueUrl())
                .messageAttributeNames("All").messageSystemAttributeNamesWithStrings("AWSTraceHeader")
                .visibilityTimeout(0).waitTimeSeconds(5)).messages().get(0);
        assertThat(raw.messageAttributes()).containsOnlyKeys("tenant");
        assertThat(raw.attributesAsStrings()).containsEntry("AWSTraceHeader", header);

        sqs.sendMessage(r -> r.queueUrl(m.queueUrl()).messageBody("from-sdk").messageSystemAttributesWithStrings(Map.of(
                "AWSTraceHeader", software.amazon.awssdk.services.sqs.model.MessageSystemAttributeValue.builder()
                        .dataType("String").stringValue(header.replace("Sampled=1", "Sampled=0")).build())));
        Map<String, Map<String, String>> byBody = new java.util.HashMap<>();
        for (int i = 0; i < 10 && byBody.size() < 2; i++) {
            for (Message<String> got : m.receive(ReceiveOptions.defaults().withMaxMessages(10)
                    .withWaitTime(Duration.ofSeconds(1)))) {
                byBody.put(got.body(), got.attributes());
            }
        }
        assertThat(byBody.get("x")).containsExactlyInAnyOrderEntriesOf(Map.of("tenant", "acme",
                "AWSTraceHeader", header));
        assertThat(byBody.get("from-sdk")).containsExactlyEntriesOf(Map.of("AWSTraceHeader",
                header.replace("Sampled=1", "Sampled=0")));
    }
}
