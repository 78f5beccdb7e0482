package dev.mailbox.redis;

import dev.mailbox.api.FencedException;
import dev.mailbox.api.Limits;
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
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Lua scripts, each the shared prelude plus its own body, run by SHA. A server that does not know
 * a script (restarted, failed over, flushed) answers NOSCRIPT, and the call is repeated with EVAL,
 * which also caches it there.
 *
 * <p>Some scripts come in variants made from one file by {@link #variant}: {@code FIFO} for FIFO
 * mailboxes, {@code TENANT} for a send with a group id to a standard mailbox. A variant carries only its
 * own branches, so a standard mailbox's scripts neither hold nor run FIFO code.
 */
enum Scripts {
    SEND("send"), SEND_TENANT("send", "TENANT"), SEND_FIFO("fifo_send", "FIFO"),
    RECEIVE("receive"), RECEIVE_FIFO("fifo_receive", "FIFO"),
    ACK("ack"), ACK_FIFO("ack", "FIFO"), NACK("nack"), NACK_FIFO("nack", "FIFO"),
    EXTEND("extend"), EXTEND_FIFO("extend", "FIFO"),
    COUNT("count"), PURGE("purge"), PURGE_FIFO("purge", "FIFO"), KIND("kind"),
    /** Read only: the web console's counts and peeks (see {@link dev.mailbox.api.spi.Inspection}). */
    INSPECT("inspect"), INSPECT_FIFO("inspect", "FIFO"), PEEK("peek"), PEEK_FIFO("peek", "FIFO");

    private static final String FENCED = "FENCED ";

    private final String name;
    private final byte[] source;
    private final byte[] sha;

    Scripts(String file, String... flags) {
        this.name = flags.length == 0 ? file : file + "/" + String.join("/", flags);
        Set<String> on = Set.of(flags);
        String body = variant(load(file + ".lua"), on, file + ".lua");
        String text = (prelude(variant(load("prelude.lua"), on, "prelude.lua"), body) + "\n" + body)
                .replace("__HORIZON_MS__", Long.toString(WakeHub.ANNOUNCE_HORIZON_MS))
                .replace("__DEDUP_WINDOW_MS__", Long.toString(Limits.DEDUPLICATION_WINDOW.toMillis()))
                .replace("__NOISY_MIN__", Integer.toString(Limits.NOISY_TENANT_MIN_IN_FLIGHT))
                .replace("__NOISY_SHARE__", Integer.toString(Limits.NOISY_TENANT_MIN_SHARE_PERCENT));
        this.source = text.getBytes(StandardCharsets.UTF_8);
        this.sha = sha1Hex(source).getBytes(StandardCharsets.US_ASCII);
    }

    /** @return the script's text as Redis runs it, for tests */
    String source() {
        return new String(source, StandardCharsets.UTF_8);
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

    /**
     * One variant of a script's text: of each block {@code --#if NAME} ... [{@code --#else} ...]
     * {@code --#end} (each directive a line of its own; blocks do not nest) it keeps the first branch if
     * {@code NAME} is among {@code flags}, else the second; the directive lines go.
     *
     * @param file the file's name, for errors
     */
    static String variant(String text, Set<String> flags, String file) {
        StringBuilder out = new StringBuilder();
        Boolean keep = null; // null: outside a block
        boolean sawElse = false;
        int lineNumber = 0;
        for (String line : text.lines().toList()) {
            lineNumber++;
            String t = line.strip();
            if (t.startsWith("--#if ")) {
                if (keep != null) {
                    throw new IllegalStateException(file + ":" + lineNumber + ": --#if blocks do not nest");
                }
                keep = flags.contains(t.substring("--#if ".length()).strip());
                sawElse = false;
            } else if (t.equals("--#else")) {
                if (keep == null || sawElse) {
                    throw new IllegalStateException(file + ":" + lineNumber + ": --#else without its --#if");
                }
                keep = !keep;
                sawElse = true;
            } else if (t.equals("--#end")) {
                if (keep == null) {
                    throw new IllegalStateException(file + ":" + lineNumber + ": --#end without its --#if");
                }
                keep = null;
            } else if (t.startsWith("--#")) {
                throw new IllegalStateException(file + ":" + lineNumber + ": unknown directive " + t);
            } else if (keep == null || keep) {
                out.append(line).append('\n');
            }
        }
        if (keep != null) {
            throw new IllegalStateException(file + ": --#if without its --#end");
        }
        return out.toString();
    }

    /**
     * The prelude with only the helper functions {@code body} needs, directly or through another helper.
     * Redis runs a script's whole text on every call, so each helper it defines is a closure made and
     * collected per call; a script that defines only what it uses is measurably cheaper (ScriptCosts in
     * benchmarks/). A helper is a {@code local function NAME(} line at the start of a line, with the
     * comment lines just above it, up to the next line that is exactly {@code end}; everything else in
     * the prelude is always kept. A helper is needed where its name is called ({@code name(}, not a
     * field such as {@code K.fence}), comments aside.
     */
    static String prelude(String prelude, String body) {
        // a local, not a static field: enum constants are made before the enum's other static fields
        Pattern helper = Pattern.compile("local function ([A-Za-z_][A-Za-z0-9_]*)\\(");
        Pattern comment = Pattern.compile("--.*$", Pattern.MULTILINE); // no string in the scripts holds "--"
        List<String> lines = prelude.lines().toList();
        Map<String, int[]> helpers = new LinkedHashMap<>(); // name -> {first line, last line}
        for (int i = 0; i < lines.size(); i++) {
            Matcher m = helper.matcher(lines.get(i));
            if (!m.lookingAt()) {
                continue;
            }
            int first = i;
            while (first > 0 && lines.get(first - 1).startsWith("--")) {
                first--;
            }
            int last = i;
            while (!lines.get(last).equals("end")) {
                last++;
                if (last == lines.size()) {
                    throw new IllegalStateException("prelude.lua: helper " + m.group(1) + " has no closing 'end'");
                }
            }
            helpers.put(m.group(1), new int[] {first, last});
        }
        boolean[] helperLine = new boolean[lines.size()];
        for (int[] range : helpers.values()) {
            for (int i = range[0]; i <= range[1]; i++) {
                helperLine[i] = true;
            }
        }
        StringBuilder always = new StringBuilder(body);
        for (int i = 0; i < lines.size(); i++) {
            if (!helperLine[i]) {
                always.append('\n').append(lines.get(i));
            }
        }
        Set<String> needed = new HashSet<>();
        String scanned = always.toString();
        for (boolean grew = true; grew; ) {
            grew = false;
            for (Map.Entry<String, int[]> h : helpers.entrySet()) {
                if (!needed.contains(h.getKey())
                        && Pattern.compile("(?<![.:\\w])" + h.getKey() + "\\s*\\(")
                                .matcher(comment.matcher(scanned).replaceAll("")).find()) {
                    needed.add(h.getKey());
                    int[] r = h.getValue();
                    scanned += "\n" + String.join("\n", lines.subList(r[0], r[1] + 1));
                    grew = true;
                }
            }
        }
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < lines.size(); i++) {
            boolean keep = !helperLine[i];
            if (!keep) {
                for (Map.Entry<String, int[]> h : helpers.entrySet()) {
                    int[] r = h.getValue();
                    if (i >= r[0] && i <= r[1] && needed.contains(h.getKey())) {
                        keep = true;
                        break;
                    }
                }
            }
            if (keep) {
                out.append(lines.get(i)).append('\n');
            }
        }
        return out.toString();
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
