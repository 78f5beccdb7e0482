package dev.mailbox.samples.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.testkit.redis.RedisServerProcess;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.api.parallel.Resources;

class OrderServiceDemoTest {

    @Test
    @ResourceLock(Resources.SYSTEM_OUT)
    void handlesTheOrdersItPlacedAndOneSentFromElsewhere() {
        try (RedisServerProcess redis = RedisServerProcess.start()) {
            // what the tutorial's `mailboxctl send redis://.../orders '{...}'` stores: the JSON text
            try (var shell = dev.mailbox.redis.RedisMailbox.builder("orders", dev.mailbox.api.Codec.utf8())
                    .uri(redis.uri()).build()) {
                shell.send("{\"id\":\"o-3\",\"item\":\"tea\",\"quantity\":1}");
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            PrintStream before = System.out;
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            try {
                OrderServiceDemo.main(new String[] {redis.uri()});
            } finally {
                System.setOut(before);
            }
            String printed = out.toString(StandardCharsets.UTF_8);
            assertThat(printed).contains("handling Order[id=o-3, item=tea, quantity=1]")
                    .contains("handling Order[id=o-1, item=beans, quantity=2]")
                    .contains("handled 3, backlog 0");
        }
    }
}
