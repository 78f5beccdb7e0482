package dev.mailbox.redis;

import dev.mailbox.api.FencedException;
import dev.mailbox.api.MailboxException;
import dev.mailbox.api.MailboxUnavailableException;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisBusyException;
import redis.clients.jedis.exceptions.JedisClusterOperationException;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.exceptions.JedisNoScriptException;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;

/**
 * The Lua scripts, each the shared prelude plus its own body, run by SHA. A server that does not know
 * a script (restarted, failed over, flushed) answers NOSCRIPT, and the call is repeated with EVAL,
 * which also caches it there.
 */
enum Scripts {
    SEND("send"), RECEIVE("receive"), ACK("ack"), NACK("nack"), EXTEND("extend"), COUNT("count"), PURGE("purge");

    private static final String FENCED = "FENCED ";

    private final String name;
    private final byte[] source;
    private final byte[] sha;

    Scripts(String name) {
        this.name = name;
        String text = (load("prelude.lua") + "\n" + load(name + ".lua"))
                .replace("__HORIZON_MS__", Long.toString(WakeHub.SUBSCRIBED_SLEEP_MS));
        this.source = text.getBytes(StandardCharsets.UTF_8);
        this.sha = sha1Hex(source).getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * Runs the script; maps Jedis failures to the mailbox's exceptions.
     *
     * @param mailbox the mailbox's name, for messages
     */
    Object run(UnifiedJedis client, String mailbox, List<byte[]> keys, List<byte[]> args) {
        try {
            try {
                return client.evalsha(sha, keys, args);
            } catch (JedisNoScriptException e) {
                return client.eval(source, keys, args);
            }
        } catch (JedisConnectionException | JedisClusterOperationException | JedisBusyException e) {
            throw new MailboxUnavailableException("Redis is unavailable for mailbox '" + mailbox + "' ("
                    + name + "): " + e.getMessage(), true, e);
        } catch (JedisDataException e) {
            String msg = Objects.requireNonNullElse(e.getMessage(), "");
            if (msg.startsWith(FENCED)) {
                throw fenced(mailbox, msg, e);
            }
            boolean transient_ = msg.startsWith("LOADING") || msg.startsWith("READONLY") || msg.startsWith("TRYAGAIN")
                    || msg.startsWith("CLUSTERDOWN") || msg.startsWith("MASTERDOWN") || msg.startsWith("OOM")
                    || msg.startsWith("MOVED") || msg.startsWith("ASK");
            if (transient_) {
                throw new MailboxUnavailableException("Redis refused " + name + " on mailbox '" + mailbox
                        + "' for now: " + msg, true, e);
            }
            throw new MailboxException("Redis failed " + name + " on mailbox '" + mailbox + "': " + msg, e);
        } catch (JedisException e) {
            throw new MailboxUnavailableException("Redis failed " + name + " on mailbox '" + mailbox + "': "
                    + e.getMessage(), true, e);
        }
    }

    /**
     * A fenced script refused the call (prelude.lua's fence()): the error reply is
     * {@code FENCED <caller's epoch> <fence>}, sent before the script wrote anything.
     */
    private static MailboxException fenced(String mailbox, String msg, JedisDataException cause) {
        String[] parts = msg.split(" ");
        try {
            return new FencedException(mailbox, Long.parseLong(parts[1]), Long.parseLong(parts[2]));
        } catch (RuntimeException unexpected) {
            return new MailboxException("Redis refused a call on mailbox '" + mailbox + "': " + msg, cause);
        }
    }

    private static String load(String file) {
        try (InputStream in = Scripts.class.getResourceAsStream(file)) {
            if (in == null) {
                throw new IllegalStateException("missing script resource " + file);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String sha1Hex(byte[] data) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(data));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
