package dev.mailbox.redis;

import dev.mailbox.api.Codec;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiveOptions;
import redis.clients.jedis.JedisPooled;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/**
 * A consumer for {@link CrashSafetyTest}, run in a child JVM. It prints what it does and stops at
 * PAUSE points (after a receive, before any ack; and after each ack) until the parent answers GO,
 * EXIT, or kills it with SIGKILL. Every ACKED line is printed only after the ack returned.
 *
 * <p>Arguments: host port mailbox visibilityMillis batchSize
 */
public final class CrashConsumer {

    private CrashConsumer() {
    }

    public static void main(String[] args) throws Exception {
        String host = args[0];
        int port = Integer.parseInt(args[1]);
        String name = args[2];
        Duration visibility = Duration.ofMillis(Long.parseLong(args[3]));
        int batch = Integer.parseInt(args[4]);
        BufferedReader parent = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (JedisPooled client = new JedisPooled(host, port);
             RedisMailbox<String> mailbox = RedisMailbox.builder(name, Codec.utf8()).client(client).build()) {
            ReceiveOptions options = ReceiveOptions.defaults().withMaxMessages(batch)
                    .withVisibilityTimeout(visibility).withWaitTime(Duration.ofMillis(500));
            System.out.println("READY");
            while (true) {
                List<Message<String>> got = mailbox.receive(options);
                System.out.println("RECEIVED " + got.size());
                if (!pause(parent)) {
                    return;
                }
                for (Message<String> m : got) {
                    try {
                        m.acknowledge();
                        System.out.println("ACKED " + m.body());
                    } catch (dev.mailbox.api.ReceiptHandleExpiredException stale) {
                        System.out.println("STALE " + m.body());
                    }
                    if (!pause(parent)) {
                        return;
                    }
                }
            }
        }
    }

    private static boolean pause(BufferedReader parent) throws Exception {
        System.out.println("PAUSE");
        String answer = parent.readLine();
        return "GO".equals(answer);
    }
}
