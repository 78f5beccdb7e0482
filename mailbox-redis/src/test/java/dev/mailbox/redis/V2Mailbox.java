package dev.mailbox.redis;

import redis.clients.jedis.UnifiedJedis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * One mailbox as version 2's RedisMailbox drove it: version 2's scripts (test resources in
 * {@code dev/mailbox/redis/v2/}, as the last commit with {@code LAYOUT_VERSION = 2} had them), its keys and
 * its arguments, so tests can write a version 2 mailbox, or compare what the scripts cost, without code
 * that no longer exists.
 */
final class V2Mailbox {
    private final UnifiedJedis client;
    private final String base;
    private final List<byte[]> keys = new ArrayList<>();

    V2Mailbox(UnifiedJedis client, String tag, String name) {
        this.client = client;
        this.base = "mailbox:{" + tag + "}:" + (tag.equals(name) ? "" : name + ":");
        for (String suffix : List.of("ready", "timed", "body", "meta", "attr", "seq", "fence")) {
            keys.add(bytes(base + suffix));
        }
    }

    List<String> send(long delayMs, String attributes, String deduplicationId, String... bodies) {
        List<byte[]> k = new ArrayList<>(keys);
        List<byte[]> a = new ArrayList<>(List.of(bytes(base + "wake"), bytes("0"), bytes(Long.toString(delayMs)),
                bytes("0"), bytes(attributes), bytes(deduplicationId.isEmpty() ? "0" : "300000")));
        for (int i = 0; i < bodies.length; i++) {
            if (!deduplicationId.isEmpty()) {
                k.add(bytes(base + "dedup/" + (bodies.length > 1 ? deduplicationId + "/" + i : deduplicationId)));
            }
            a.add(bytes(bodies[i]));
        }
        List<String> ids = new ArrayList<>();
        for (Object id : (List<?>) run("send", k, a)) {
            ids.add(new String((byte[]) id, StandardCharsets.UTF_8));
        }
        return ids;
    }

    @SuppressWarnings("unchecked")
    List<Object> receive(long epoch, int max, long visibilityMs, int maxReceives, V2Mailbox deadLetters) {
        List<byte[]> k = new ArrayList<>(keys);
        k.addAll(deadLetters.keys);
        String e = Long.toString(epoch);
        return (List<Object>) run("receive", k, List.of(bytes(base + "wake"), bytes("0"), bytes(e), bytes(e),
                bytes(Integer.toString(max)), bytes(Long.toString(visibilityMs)),
                bytes(Long.toHexString(System.nanoTime())), bytes(Integer.toString(maxReceives)),
                bytes(deadLetters.base + "wake"), bytes("0")));
    }

    /** @return one code per (id, token) pair, 1 for deleted */
    Object acknowledge(String... idsAndTokens) {
        List<byte[]> a = new ArrayList<>(List.of(bytes(base + "wake"), bytes("0"), bytes("0"), bytes("0")));
        for (String s : idsAndTokens) {
            a.add(bytes(s));
        }
        return run("ack", keys, a);
    }

    Object nack(String id, String token, long timeoutMs) {
        return run("nack", keys, List.of(bytes(base + "wake"), bytes("0"), bytes("0"), bytes(id), bytes(token),
                bytes(Long.toString(timeoutMs))));
    }

    private Object run(String script, List<byte[]> k, List<byte[]> a) {
        String body = load(script + ".lua");
        String text = (Scripts.prelude(load("prelude.lua"), body) + "\n" + body)
                .replace("__HORIZON_MS__", Long.toString(WakeHub.ANNOUNCE_HORIZON_MS))
                .replace("__DEDUP_WINDOW_MS__", "300000");
        return client.eval(bytes(text), k, a);
    }

    private static String load(String file) {
        try (InputStream in = V2Mailbox.class.getResourceAsStream("v2/" + file)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
