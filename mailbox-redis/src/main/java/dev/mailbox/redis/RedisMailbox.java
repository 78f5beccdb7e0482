package dev.mailbox.redis;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mailbox.api.Codec;
import dev.mailbox.api.FencedException;
import dev.mailbox.api.FifoOptions;
import dev.mailbox.api.Limits;
import dev.mailbox.api.Mailbox;
import dev.mailbox.api.MailboxCapabilities;
import dev.mailbox.api.MailboxClosedException;
import dev.mailbox.api.MailboxException;
import dev.mailbox.api.MailboxFullException;
import dev.mailbox.api.MailboxUnavailableException;
import dev.mailbox.api.Message;
import dev.mailbox.api.ReceiptHandleExpiredException;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.api.SendOptions;
import dev.mailbox.api.spi.AsyncReceiver;
import dev.mailbox.api.spi.FencedView;
import dev.mailbox.api.spi.Bodies;
import dev.mailbox.api.spi.StoredAttributes;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.JedisPooled;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.util.JedisClusterCRC16;

/**
 * A {@link Mailbox} on Redis or Redis Cluster, through one Jedis {@link UnifiedJedis} client
 * ({@link JedisPooled} for a standalone server, {@link JedisCluster} for a cluster): the same code
 * path for both.
 *
 * <h2>How it keeps the contract</h2>
 * <ul>
 *   <li><b>Atomic.</b> Every state change is one Lua script, so a client that dies at any moment
 *       leaves each message in exactly one state: queued, delayed, in flight or deleted. Nothing is
 *       popped in one step and recorded in another.</li>
 *   <li><b>Server time.</b> Deadlines come from the server's {@code TIME}. A handle can nack or extend
 *       only while its deadline is in the future, checked in the same script that acts on it, so a lapsed
 *       handle is refused at once; there is no reaper. It still acknowledges (as on SQS,
 *       {@link MailboxCapabilities#lateAcknowledge()}) until the message is delivered again or nacked,
 *       which replace the delivery token the handle carries, so a superseded handle is refused at once
 *       too. This needs no layout change: the token was always kept until then.</li>
 *   <li><b>Long polling</b> without a polling loop: scripts publish a notice on the mailbox's channel
 *       when messages become visible or an earlier deadline appears; the mailboxes of one client object
 *       share at most two subscriber connections that hear them (each carries a share of the channels)
 *       and wake the waiting receives, which sleep until then or until the next deadline they know of.
 *       A waiting receive holds no pooled connection and sends nothing while it waits, and a wait that
 *       runs to its end with nothing heard answers empty without another script. {@link #receiveAsync}
 *       waits without a thread too: its later passes run on at most four threads the client's mailboxes
 *       share. Once it has started waiting, a receive rides out a Redis outage until its wait ends, and
 *       only then throws the retryable error.</li>
 *   <li><b>Cluster.</b> All keys of a mailbox share one hash tag, by default its name. A dead-letter
 *       move is part of the receive script, so on a cluster the dead-letter mailbox must be in the
 *       same hash slot: give it the source's tag with {@link Builder#hashTag(String)}.</li>
 *   <li><b>Fencing</b> ({@link #fenced(long)}) and <b>deduplication</b>
 *       ({@link SendOptions#withDeduplicationId(String)}) live in keys beside the messages and are
 *       checked inside the scripts, so they hold across processes and restarts.</li>
 *   <li><b>FIFO mailboxes</b> ({@link Builder#fifo(FifoOptions)}) keep every rule of {@link Mailbox}'s
 *       "FIFO mailboxes" in the scripts: each group's waiting messages are ordered by id in one sorted
 *       set for the whole mailbox, a list holds the groups that can deliver (nothing in flight), and a
 *       receive takes a group from it with the run of its messages from the head, so no later message
 *       of a group is handed out while an earlier one is in flight, in any process. Sequence numbers
 *       are the id counter in 20 digits.</li>
 *   <li><b>Fairness</b>: a standard mailbox is fair between tenants (group ids on standard sends,
 *       {@link MailboxCapabilities#fairness()}). A noisy tenant's visible messages are set aside while it
 *       stays noisy; its in-flight count is kept through deliveries, acknowledgements, nacks and lapses.
 *       The in-flight total is what {@code timed} holds, so delayed messages and nack timeouts count
 *       too. A mailbox whose messages have no group ids runs exactly the commands it ran before
 *       fairness existed (GroupsTest checks it against version 2's scripts).</li>
 * </ul>
 *
 * <h2>Key layout, version 3</h2>
 * With the default prefix {@code mailbox:} and a mailbox named {@code orders} (a mailbox built with
 * another name's hash tag, say {@code orders-dlq} with tag {@code orders}, lives at
 * {@code mailbox:{orders}:orders-dlq:...}):
 * <table>
 *   <caption>Keys of one mailbox</caption>
 *   <tr><th>key</th><th>type</th><th>holds</th><th>since</th></tr>
 *   <tr><td>{@code mailbox:{orders}:ready}</td><td>list</td><td>ids of visible messages, in the order they
 *       became visible (standard mailboxes)</td><td>1</td></tr>
 *   <tr><td>{@code mailbox:{orders}:timed}</td><td>sorted set</td><td>ids of delayed, nacked-with-timeout
 *       and in-flight messages, scored by due time (server ms); a tenant's message in flight as
 *       {@code <id> <tenant>}, and the member {@code fair}, scored 0, while the mailbox has tenant
 *       state (version 3)</td><td>1</td></tr>
 *   <tr><td>{@code mailbox:{orders}:body}</td><td>hash</td><td>id → encoded body</td><td>1</td></tr>
 *   <tr><td>{@code mailbox:{orders}:meta}</td><td>hash</td><td>id →
 *       {@code enqueuedAt|deliveryCount|flag|due|receiptToken}, and for a message with a group (version 3)
 *       {@code |originalId|groupId} after it; flag {@code -}, {@code a} (attributes), {@code g} (a group)
 *       or {@code G} (both); originalId: the id a FIFO dead letter had in its source</td><td>1</td></tr>
 *   <tr><td>{@code mailbox:{orders}:attr}</td><td>hash</td><td>id → attributes (a JSON object of strings),
 *       only for messages that have some. The strings are {@link StoredAttributes}' stored form: plain string
 *       attributes as they are (as in version 1), typed ones marked with U+0001 and the form's own version, system
 *       attributes under {@code AWS.}-prefixed names. The marks carry their own version, so the key layout's
 *       version does not change for them, and a value written by any earlier layout reads as before</td><td>1</td></tr>
 *   <tr><td>{@code mailbox:{orders}:seq}</td><td>string</td><td>the id counter (kept by {@code purge}, so
 *       ids are never reused)</td><td>1</td></tr>
 *   <tr><td>{@code mailbox:{orders}:wake}</td><td>channel</td><td>wake-up notices for blocked
 *       receives</td><td>1</td></tr>
 *   <tr><td>{@code mailbox:{orders}:fence}</td><td>string</td><td>the fence: the highest epoch used
 *       through a {@link #fenced fenced} view; absent means 0. Only rises; kept by {@code purge}</td>
 *       <td>2</td></tr>
 *   <tr><td>{@code mailbox:{orders}:dedup/ID}</td><td>string</td><td>the id of the message first sent
 *       with deduplication id {@code ID} (in a batch {@code ID/i}; with content-based deduplication the
 *       body's SHA-256 in hex; in a FIFO mailbox with the group scope {@code <group> ID}); expires
 *       {@link Limits#DEDUPLICATION_WINDOW} after that send; kept by {@code purge}</td><td>2</td></tr>
 *   <tr><td>{@code mailbox:{orders}:kind}</td><td>string</td><td>{@code fifo} or {@code standard}, set by
 *       the first object that calls; kept by {@code purge}</td><td>3</td></tr>
 *   <tr><td>{@code mailbox:{orders}:gq}</td><td>sorted set</td><td>FIFO: {@code <group> <id>}, every score
 *       0, for each message not in flight (visible, or waiting out a nack timeout): lexical order is
 *       group, then send order</td><td>3</td></tr>
 *   <tr><td>{@code mailbox:{orders}:gready}</td><td>list</td><td>FIFO: groups that can deliver, each
 *       once</td><td>3</td></tr>
 *   <tr><td>{@code mailbox:{orders}:gstate}</td><td>hash</td><td>FIFO: group → {@code q} while in
 *       {@code gready}, else how many of its messages are in flight; absent for an idle group</td>
 *       <td>3</td></tr>
 *   <tr><td>{@code mailbox:{orders}:tflight}</td><td>hash</td><td>fair standard mailboxes: tenant → its
 *       messages in flight</td><td>3</td></tr>
 *   <tr><td>{@code mailbox:{orders}:tparked}</td><td>sorted set</td><td>fair standard mailboxes:
 *       {@code <tenant> <id>}, every score 0, for visible messages set aside while their tenant was
 *       noisy</td><td>3</td></tr>
 * </table>
 * Group ids come after the mailbox's own {@code {tag}}, the first in every key, so no group id moves a
 * key to another slot; they hold no space (SQS's characters), which separates them from ids. Every key a
 * script touches is among its {@code KEYS}, as Redis asks: a standard mailbox passes its first seven and
 * {@code tflight} and {@code tparked}, a FIFO mailbox its first seven and {@code gq}, {@code gready} and
 * {@code gstate}, then come its dead-letter mailbox's and the deduplication keys; so on a cluster a call
 * made while the slot migrates is refused before it writes anything.
 *
 * <p>The layout's version is written down here, in the scripts and in the code, not stored in Redis:
 * each version only adds keys and fields, so this code reads what earlier versions wrote as it is,
 * with no migration. Version 1 (the first release) had the first seven keys; version 2 added the fence
 * and the deduplication keys, and a version 1 mailbox reads as fence 0 with no deduplication ids
 * remembered; version 3 added the kind, FIFO and tenant keys and the meta suffix of grouped messages,
 * and a version 2 mailbox reads as a standard mailbox without tenants (LayoutCompatibilityTest writes
 * one with version 2's scripts and serves it). The other way round, earlier code ignores the new keys:
 * while any process of a queue still runs it, that process is neither fenced nor deduplicated (version
 * 1), and must not serve a FIFO mailbox or tenants (version 2), whose messages it would not find or
 * would count wrongly. Receipt handles are unchanged ({@code <message id>:<delivery token>}).
 *
 * <h2>Cost of the new checks</h2>
 * A fenced call's script does one extra {@code GET} of the fence key (and one {@code SET} the first
 * time an epoch is used); a call that is not fenced does none. A send with a deduplication id does one
 * {@code GET} and one {@code SET} per message. None adds a round trip. A mailbox object checks its kind
 * once, in one round trip before its first call. Fairness costs a mailbox without group ids no command,
 * only its two keys in every call's {@code KEYS} (about 0.1 µs of server time a script); with tenants, a receive reads their in-flight counts and the set-aside tenants' heads (one call each),
 * and every script reads the earliest deadline twice while tenant state exists. A FIFO mailbox's calls
 * each run a few more commands than a standard one's: per send the group's sorted-set entry and its
 * state, per receive the group's run and state, per acknowledgement the group's release (ScriptCosts in
 * benchmarks/ has the figures).
 *
 * <p>Messages that become visible together (delays, or visibility timeouts of a crashed consumer's
 * messages, ending at once) are moved to the ready list by the next call on the mailbox, all of them, so
 * that what that call adds lands behind them: about 0.6 µs each on redis-server 7.0 (116 ms for 200,000
 * on a 2-core test machine), during which the server answers no one else.
 *
 * <h2>Connections and threads</h2>
 * Each call borrows one connection for one round trip. The mailboxes of one client object that long-poll
 * also share at most two subscriber connections, each with a thread, for as long as one of them is open:
 * connections of their own, made like the pool's (on a {@link JedisCluster}, like one node's pool's) but
 * outside it, so any number of waiting mailboxes leave the pool to the calls. Parked receives
 * ({@link #receiveAsync}) add a timer thread and at most four pass threads, which borrow pooled connections
 * for their scripts. So 10,000 mailboxes waiting on one client cost at most 2 subscriber connections plus
 * what the pool holds, and 7 threads. Size the pool for the threads that call at once (those four
 * included); the default of 8 (per node on a cluster) suits a handful of threads.
 *
 * <p>A {@link JedisCluster} resends a command whose connection failed, up to its {@code maxAttempts}
 * (default 5), including one that failed after the server ran it (a read timeout). A script run twice
 * that way is not undone: a send without a deduplication id is stored twice, as with any retried send;
 * a receive's messages from the first run come back after their visibility timeout with one delivery
 * counted; and acknowledgements that rode on that receive are reported stale although they were made. A
 * {@link JedisPooled} client never resends. Give cluster clients a socket timeout well above your slowest
 * call so that only a real outage triggers this, or {@code maxAttempts} 1 where duplicates cost more than
 * failing over (each MOVED redirect also uses an attempt).
 *
 * <pre>{@code
 * JedisPooled redis = new JedisPooled("redis://127.0.0.1:6379");
 * RedisMailbox<Order> orders = RedisMailbox.builder("orders", JsonCodec.of(Order.class))
 *         .client(redis)
 *         .build();
 * RedisMailbox<Event> events = RedisMailbox.builder("events", JsonCodec.of(Event.class))
 *         .client(redis)
 *         .fifo(FifoOptions.defaults().withContentBasedDeduplication(true))
 *         .build();
 * events.send(event, SendOptions.defaults().withGroupId("customer-42"));
 * }</pre>
 *
 * @param <T> the body type
 */
public final class RedisMailbox<T> implements Mailbox<T>, AsyncReceiver<T>, dev.mailbox.api.spi.Inspection {

    /** What a {@link #fenced} view calls: the fenced scripts, with the view's epoch. */
    private final FencedView.Operations<T> fencedCalls = new FencedView.Operations<>() {
        @Override
        public List<Message<T>> receive(ReceiveOptions options, long epoch) {
            return RedisMailbox.this.receive(options, epoch, List.of(), NO_STALE);
        }

        @Override
        public List<Message<T>> acknowledgeBatch(List<? extends Message<T>> messages, long epoch) {
            return RedisMailbox.this.acknowledgeBatch(messages, epoch);
        }

        @Override
        public void acknowledge(String receiptHandle, long epoch) {
            acknowledgeHandle(receiptHandle, epoch);
        }

        @Override
        public void nack(String receiptHandle, Duration visibilityTimeout, long epoch) {
            changeVisibilityByHandle(receiptHandle, epoch, visibilityTimeout, true);
        }

        @Override
        public void extendVisibility(String receiptHandle, Duration timeout, long epoch) {
            changeVisibilityByHandle(receiptHandle, epoch, timeout, false);
        }

        @Override
        public ReceiveOptions defaultReceiveOptions() {
            return defaults;
        }

        @Override
        public boolean receivesAsync() {
            return true;
        }

        @Override
        public CompletableFuture<List<Message<T>>> receiveAsync(ReceiveOptions options, long epoch) {
            return RedisMailbox.this.receiveAsync(options, epoch);
        }
    };

    /** The key layout these scripts read and write; see the class comment for its history. */
    static final int LAYOUT_VERSION = 3;

    private static final ObjectMapper ATTRIBUTES = new ObjectMapper();
    private static final TypeReference<LinkedHashMap<String, String>> ATTRIBUTE_MAP = new TypeReference<>() { };
    /** In the order the scripts take them (prelude.lua's keys_at): every mailbox's, then its kind's. */
    private static final String[] KEY_SUFFIXES = {"ready", "timed", "body", "meta", "attr", "seq", "fence"};
    private static final String[] STANDARD_KEY_SUFFIXES = {"tflight", "tparked"};
    private static final String[] FIFO_KEY_SUFFIXES = {"gq", "gready", "gstate"};
    private static final byte[] ZERO = bytes(0);
    private static final byte[] DEDUPLICATION_WINDOW_MS = bytes(Limits.DEDUPLICATION_WINDOW.toMillis());
    private static final Pattern TAG = Pattern.compile("[^{}]{1,200}");
    /** A receive with nothing to settle has nothing to report. */
    private static final Consumer<Object> NO_STALE = m -> { };

    private final String name;
    private final Codec<T> codec;
    private final UnifiedJedis client;
    private final boolean ownsClient;
    private final Object server;
    private final String base;
    private final List<byte[]> keys;
    private final List<byte[]> receiveKeys;
    private final String firstKey;
    private final String channel;
    private final byte[] channelBytes;
    private final byte[] ttlMs;
    private final long capacity;
    private final int maxMessageBytes;
    private final @Nullable RedisMailbox<?> deadLetters;
    private final int maxReceiveCount;
    private final ReceiveOptions defaults;
    /** The FIFO settings, or null for a standard mailbox. */
    private final @Nullable FifoOptions fifo;
    private final Scripts send;
    private final Scripts receive;
    private final Scripts ack;
    private final Scripts nack;
    private final Scripts extend;
    private final Scripts purge;
    /** What kind.lua reads (meta, kind, gq, gstate), whichever this object's kind. */
    private final List<byte[]> kindKeys;
    /** Whether this object's kind was checked against the mailbox's in Redis (see {@link #ensureOpen}). */
    private volatile boolean kindChecked;
    private final MailboxCapabilities capabilities;
    private final WakeHub hub;
    private final WakeHub.Channel wake;
    private volatile boolean closed;

    private RedisMailbox(Builder<T> b, UnifiedJedis client, boolean ownsClient, Object server) {
        this.name = b.name;
        this.codec = b.codec;
        this.client = client;
        this.ownsClient = ownsClient;
        this.server = server;
        String base = b.prefix + "{" + b.hashTag + "}" + (b.hashTag.equals(b.name) ? "" : ":" + b.name) + ":";
        this.base = base;
        List<byte[]> k = new ArrayList<>();
        for (String suffix : KEY_SUFFIXES) {
            k.add((base + suffix).getBytes(StandardCharsets.UTF_8));
        }
        for (String suffix : b.fifo != null ? FIFO_KEY_SUFFIXES : STANDARD_KEY_SUFFIXES) {
            k.add((base + suffix).getBytes(StandardCharsets.UTF_8));
        }
        this.keys = List.copyOf(k);
        this.firstKey = base + KEY_SUFFIXES[0];
        this.channel = base + "wake";
        this.channelBytes = channel.getBytes(StandardCharsets.UTF_8);
        this.ttlMs = bytes(b.keyTtl == null ? 0 : b.keyTtl.toMillis());
        this.capacity = b.capacity;
        this.maxMessageBytes = b.maxMessageBytes;
        this.deadLetters = b.redrivePolicy == null ? null : (RedisMailbox<?>) b.redrivePolicy.deadLetterMailbox();
        this.maxReceiveCount = b.redrivePolicy == null ? 0 : b.redrivePolicy.maxReceiveCount();
        if (deadLetters != null) {
            List<byte[]> rk = new ArrayList<>(keys);
            rk.addAll(deadLetters.keys);
            this.receiveKeys = List.copyOf(rk);
        } else {
            this.receiveKeys = keys;
        }
        this.defaults = b.defaults;
        this.fifo = b.fifo;
        boolean f = fifo != null;
        this.send = f ? Scripts.SEND_FIFO : Scripts.SEND;
        this.receive = f ? Scripts.RECEIVE_FIFO : Scripts.RECEIVE;
        this.ack = f ? Scripts.ACK_FIFO : Scripts.ACK;
        this.nack = f ? Scripts.NACK_FIFO : Scripts.NACK;
        this.extend = f ? Scripts.EXTEND_FIFO : Scripts.EXTEND;
        this.kindKeys = List.of(bytes(base + "meta"), bytes(base + "kind"), bytes(base + "gq"), bytes(base + "gstate"));
        this.purge = f ? Scripts.PURGE_FIFO : Scripts.PURGE;
        this.capabilities = MailboxCapabilities.builder()
                .fifo(f).fairness(!f)
                .exactCount(true).visibilityOrder(!f).detectsStaleAcknowledge(true).capacity(true).atomicDeadLetter(true)
                .maxMessageBytes(maxMessageBytes).timeGranularity(Duration.ofMillis(1)).extendedNames(true)
                .atomicFencing(true).durableDeduplication(true).lateAcknowledge(true).systemAttributes(true)
                // a group is queued only when its in-flight count (gstate) is back to 0, so a message that
                // comes back from a run waits for the rest of it; every delivery's token is kept in meta
                .holdsRuns(f).sharedDeliveryState(true)
                // a node reads it to know whether a send through it needs a deduplication id of its own
                .contentBasedDeduplication(f && fifo.contentBasedDeduplication())
                .build();
        this.hub = WakeHub.acquire(client);
        this.wake = hub.join(channel);
    }

    /**
     * @param name  the mailbox's name (see {@link Limits#mailboxNameProblem}; extended names with '.' and '@'
     *              are allowed)
     * @param codec how bodies are stored
     * @param <T>   the body type
     * @return a builder; give it a {@link Builder#client(UnifiedJedis) client} or a
     *         {@link Builder#uri(String) URI}
     */
    public static <T> Builder<T> builder(String name, Codec<T> codec) {
        return new Builder<>(name, codec);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public MailboxCapabilities capabilities() {
        return capabilities;
    }

    /** @return the Redis key of this mailbox's ready list; the other keys share its prefix and hash tag */
    public String readyKey() {
        return firstKey;
    }

    /**
     * The key of one deduplication id. The ids are free text (ASCII punctuation included) but follow
     * {@code dedup/}, and a mailbox name never holds '/', so no id can spell another mailbox's key
     * under the same hash tag.
     */
    String deduplicationKey(String deduplicationId) {
        return base + "dedup/" + deduplicationId;
    }

    /** @return the key of this mailbox's fence */
    String fenceKey() {
        return base + "fence";
    }

    @Override
    public String send(T body, SendOptions options) {
        return sendAll(List.of(Objects.requireNonNull(body, "body")), options, false).get(0);
    }

    @Override
    public List<String> sendBatch(List<? extends T> bodies, SendOptions options) {
        Objects.requireNonNull(bodies, "bodies");
        Limits.requireBatchSize(bodies.size(), "batch size");
        for (T body : bodies) {
            Objects.requireNonNull(body, "bodies contains null");
        }
        return sendAll(bodies, options, true);
    }

    private List<String> sendAll(List<? extends T> bodies, SendOptions options, boolean batch) {
        Objects.requireNonNull(options, "options");
        if (fifo != null) {
            Limits.requireFifoSend(name, options);
        }
        String deduplicationId = options.deduplicationId();
        String groupId = options.groupId();
        List<byte[]> encoded = new ArrayList<>(bodies.size());
        for (T body : bodies) {
            encoded.add(Bodies.encode(codec, body, options, maxMessageBytes, name));
        }
        Map<String, String> stored = StoredAttributes.encode(options);
        boolean byContent = fifo != null && deduplicationId == null && fifo.contentBasedDeduplication();
        List<byte[]> sendKeys = keys;
        if (deduplicationId != null || byContent) {
            // the group scope puts the group before the id: neither holds a space
            String scope = fifo != null && fifo.deduplicationScope() == FifoOptions.DeduplicationScope.GROUP
                    ? groupId + " " : "";
            sendKeys = new ArrayList<>(keys.size() + bodies.size());
            sendKeys.addAll(keys);
            for (int i = 0; i < bodies.size(); i++) {
                String id = byContent ? FifoOptions.contentDeduplicationId(encoded.get(i))
                        : batch ? deduplicationId + "/" + i : deduplicationId;
                sendKeys.add(bytes(deduplicationKey(scope + id)));
            }
        }
        byte[] window = sendKeys == keys ? ZERO : DEDUPLICATION_WINDOW_MS;
        List<byte[]> args = new ArrayList<>(7 + bodies.size());
        args.add(channelBytes);
        args.add(ttlMs);
        Scripts script = send;
        if (fifo != null) { // no delay: refused above
            args.add(bytes(capacity));
            args.add(encodeAttributes(stored));
            args.add(window);
            args.add(bytes(groupId));
        } else {
            args.add(bytes(millisRoundedUp(options.delay())));
            args.add(bytes(capacity));
            args.add(encodeAttributes(stored));
            args.add(window);
            if (groupId != null) {
                script = Scripts.SEND_TENANT;
                args.add(bytes(groupId));
            }
        }
        args.addAll(encoded);
        ensureOpen();
        Object reply = script.run(client, name, sendKeys, args);
        if (reply instanceof Long code) { // -n: no room for the n messages not sent before
            throw new MailboxFullException(name, capacity, (int) -code);
        }
        List<?> ids = (List<?>) reply;
        List<String> out = new ArrayList<>(ids.size());
        for (Object id : ids) {
            out.add(string(id));
        }
        return out;
    }

    @Override
    public List<Message<T>> receive() {
        return receive(defaults);
    }

    @Override
    public List<Message<T>> receive(ReceiveOptions options) {
        return receive(options, 0, List.of(), NO_STALE);
    }

    /**
     * {@inheritDoc}
     *
     * <p>On Redis this is one script for the acknowledgements and the first receive pass, so a consumer
     * that acknowledges with its next receive makes one round trip per message. Messages received through
     * a {@link #fenced fenced} view are acknowledged under their epochs, as by {@link #acknowledgeBatch}:
     * if any of them is below the fence, the call is refused with {@link FencedException} and neither
     * acknowledges nor receives anything.
     */
    @Override
    public List<Message<T>> acknowledgeAndReceive(List<? extends Message<T>> acknowledge, ReceiveOptions options,
                                                  Consumer<? super Message<T>> stale) {
        Objects.requireNonNull(acknowledge, "acknowledge");
        Objects.requireNonNull(stale, "stale");
        if (acknowledge.size() > Limits.MAX_BATCH) {
            throw new IllegalArgumentException("acknowledge must hold 0 to " + Limits.MAX_BATCH
                    + " messages, was " + acknowledge.size());
        }
        return receive(options, 0, acknowledge, stale);
    }

    /**
     * @param epoch       the fencing epoch of the view it is called through (0: none), which then
     *                    applies to the acknowledgements too
     * @param acknowledge messages to acknowledge in the first script call, before receiving
     */
    private List<Message<T>> receive(ReceiveOptions options, long epoch, List<? extends Message<T>> acknowledge,
                                     Consumer<? super Message<T>> stale) {
        Pass pass = new Pass(options, epoch, acknowledge, stale);
        while (true) {
            List<Message<T>> got = pass.run();
            if (got != null) {
                return got;
            }
            try {
                hub.await(wake, pass.seen, pass.sleepMs, pass.plannedWake);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new MailboxUnavailableException("receive on mailbox '" + name + "' was interrupted", false, e);
            }
            if (pass.nothingNew()) {
                return List.of();
            }
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>The first pass runs on the calling thread; later ones on the wake threads this mailbox's client shares
     * (see the class comment, <i>Long polling</i>), which is where the future then completes.
     *
     * @throws MailboxClosedException if the mailbox is closed
     */
    @Override
    public CompletableFuture<List<Message<T>>> receiveAsync(ReceiveOptions options) {
        return receiveAsync(options, 0);
    }

    private CompletableFuture<List<Message<T>>> receiveAsync(ReceiveOptions options, long epoch) {
        Parked parked = new Parked(new Pass(options, epoch, List.of(), NO_STALE));
        parked.future.whenComplete((got, failure) -> {
            if (parked.future.isCancelled()) {
                WakeHub.Parked p = parked.parked;
                if (p == null || !wake.unpark(p)) {
                    hub.passOn(wake); // it may have been woken for a message it will not take
                }
            }
        });
        parked.run();
        return parked.future;
    }

    /** A receive waiting without a thread: each pass runs where its wake-up came, and parks again if need be. */
    private final class Parked implements Runnable {
        final Pass pass;
        final CompletableFuture<List<Message<T>>> future = new CompletableFuture<>();
        volatile WakeHub.@Nullable Parked parked;

        Parked(Pass pass) {
            this.pass = pass;
        }

        @Override
        public void run() {
            boolean woken = parked != null;
            while (true) {
                if (future.isDone()) {
                    hub.passOn(wake); // cancelled: a notice that woke it goes to someone else
                    return;
                }
                if (woken && pass.nothingNew()) {
                    future.complete(List.of());
                    return;
                }
                List<Message<T>> got;
                try {
                    got = pass.run();
                } catch (RuntimeException e) {
                    future.completeExceptionally(e);
                    return;
                }
                if (got != null) {
                    if (!future.complete(got)) {
                        giveBack(got); // cancelled while the script took them
                    }
                    return;
                }
                WakeHub.Parked p = hub.park(wake, pass.seen, pass.sleepMs, pass.plannedWake, this);
                if (p != null) {
                    parked = p;
                    return;
                }
                woken = false; // a notice came since the script: run it again now
                if (closed) {
                    future.complete(List.of());
                    return;
                }
            }
        }
    }

    private static <T> void giveBack(List<Message<T>> messages) {
        for (Message<T> m : messages) {
            try {
                m.nack();
            } catch (RuntimeException ignored) {
                // it lapsed or went already
            }
        }
    }

    /**
     * One receive's passes of the receive script: the first also settles the acknowledgements it carries; each
     * decides whether to answer or to wait, and for how long.
     */
    private final class Pass {
        private final long epoch;
        private final long waitNanos;
        private final long start = System.nanoTime();
        private final List<byte[]> args;
        private final List<RedisMessage<T>> settling;
        private final Consumer<? super Message<T>> stale;
        private boolean first = true;
        private @Nullable MailboxUnavailableException outage;
        /** Set by a pass that returned null: what to wait for. */
        long seen;
        long sleepMs;
        long plannedWake;
        /** Whether the wait it asked for runs to the end of the receive's wait, with no deadline inside it. */
        private boolean waitsToTheEnd;

        Pass(ReceiveOptions options, long epoch, List<? extends Message<T>> acknowledge,
             Consumer<? super Message<T>> stale) {
            Objects.requireNonNull(options, "options");
            this.epoch = epoch;
            this.stale = stale;
            long[] range = {epoch, epoch};
            this.settling = owned(acknowledge, epoch, range);
            ensureOpen();
            this.waitNanos = options.waitTime().toNanos();
            if (waitNanos > 0) {
                hub.listen(wake);
            }
            List<byte[]> a = new ArrayList<>(10 + 2 * settling.size());
            a.add(channelBytes);
            a.add(ttlMs);
            a.add(bytes(range[0]));
            a.add(bytes(range[1]));
            a.add(bytes(options.maxMessages()));
            a.add(bytes(millisRoundedUp(options.visibilityTimeout())));
            a.add(bytes(Long.toHexString(ThreadLocalRandom.current().nextLong())));
            a.add(bytes(maxReceiveCount));
            a.add(deadLetters == null ? channelBytes : deadLetters.channelBytes);
            a.add(deadLetters == null ? ttlMs : deadLetters.ttlMs);
            for (RedisMessage<T> m : settling) {
                a.add(bytes(m.id));
                a.add(bytes(m.token));
            }
            this.args = a;
        }

        /**
         * Runs the script once.
         *
         * @return the answer (messages, or empty when the wait is over), or null to wait as {@link #seen},
         *         {@link #sleepMs} and {@link #plannedWake} say
         */
        @Nullable List<Message<T>> run() {
            if (!first) {
                // each pass draws a fresh nonce so every delivery's token is new
                args.set(6, bytes(Long.toHexString(ThreadLocalRandom.current().nextLong())));
            }
            seen = wake.generation();
            List<?> reply;
            try {
                reply = (List<?>) receive.run(client, name, receiveKeys, args);
                outage = null;
            } catch (RuntimeException e) {
                // the first call fails fast; a wait already under way rides out an outage until it ends
                if (!first && e instanceof MailboxUnavailableException u && u.isRetryable()) {
                    outage = u;
                    reply = null;
                } else {
                    if (!first) {
                        hub.passOn(wake); // a notice may have woken this waiter for a message it will not take
                    }
                    throw e;
                }
            }
            if (first && !settling.isEmpty()) {
                // the handles are settled: later passes only receive, under the view's epoch alone
                reportStale(settling, (List<?>) reply.get(2), stale);
                args.subList(10, args.size()).clear();
                args.set(2, bytes(epoch));
                args.set(3, bytes(epoch));
            }
            first = false;
            if (reply != null && (messageCount(reply) > 0 || waitNanos == 0)) {
                return messages(reply, epoch);
            }
            long remainingMs = TimeUnit.NANOSECONDS.toMillis(start + waitNanos - System.nanoTime());
            if (closed) {
                return List.of();
            }
            if (remainingMs <= 0) {
                if (outage != null) {
                    throw outage;
                }
                return List.of();
            }
            sleepMs = remainingMs;
            waitsToTheEnd = false;
            if (reply != null) {
                long now = (Long) reply.get(0);
                long earliest = (Long) reply.get(1);
                if (earliest >= 0 && earliest - now + 1 < remainingMs) {
                    sleepMs = Math.max(1, earliest - now + 1);
                } else {
                    waitsToTheEnd = wake.isSubscribed();
                }
                plannedWake = now + sleepMs;
            } else {
                sleepMs = Math.min(remainingMs, WakeHub.DEGRADED_SLEEP_MS);
                plannedWake = Long.MAX_VALUE;
            }
            return null;
        }

        /**
         * Whether a wait that has just ended can answer empty without another script: it ran to the end of the
         * receive's wait, heard while subscribed, with no deadline inside it and no notice since the last pass.
         * That last script is what every idle waiter would otherwise cost Redis at the end of each wait.
         */
        boolean nothingNew() {
            if (closed) {
                return true;
            }
            // a timer may end a millisecond early (the sleep was counted in whole milliseconds)
            return waitsToTheEnd && System.nanoTime() - (start + waitNanos) >= -TimeUnit.MILLISECONDS.toNanos(2)
                    && wake.generation() == seen;
        }
    }

    /** @return how many messages a receive script's reply holds (see receive.lua for its layout) */
    private static int messageCount(List<?> reply) {
        return (reply.size() - 3) / 6;
    }

    private List<Message<T>> messages(List<?> reply, long epoch) {
        int n = messageCount(reply);
        if (n == 0) {
            return List.of();
        }
        // after the messages, a FIFO receive adds (group, original id) per message; a standard one adds
        // the tenant per message, only if one has a tenant
        List<?> extra = (reply.size() - 3) % 6 == 1 ? (List<?>) reply.get(reply.size() - 1) : null;
        List<Message<T>> out = new ArrayList<>(n);
        for (int k = 0; k < n; k++) {
            int i = 3 + 6 * k;
            String id = string(reply.get(i));
            String shownId = id;
            String groupId = null;
            String sequenceNumber = null;
            if (fifo != null) {
                groupId = string(Objects.requireNonNull(extra).get(2 * k));
                String original = string(extra.get(2 * k + 1));
                if (!original.isEmpty()) {
                    shownId = original;
                }
                sequenceNumber = sequenceNumber(id);
            } else if (extra != null) {
                String tenant = string(extra.get(k));
                groupId = tenant.isEmpty() ? null : tenant;
            }
            byte[] body = (byte[]) reply.get(i + 1);
            out.add(new RedisMessage<>(this, id, shownId, string(reply.get(i + 4)), epoch,
                    (int) (long) (Long) reply.get(i + 3), (Long) reply.get(i + 2),
                    decodeAttributes((byte[]) reply.get(i + 5)), Bodies.decode(codec, body), groupId, sequenceNumber));
        }
        return out;
    }

    /**
     * The sequence number of a FIFO message: its id is the mailbox's id counter in hex, given here in 20
     * decimal digits, so text order is numeric order (as the in-memory mailbox numbers its messages).
     */
    static String sequenceNumber(String id) {
        String digits = Long.toUnsignedString(Long.parseUnsignedLong(id, 16));
        return "0".repeat(20 - digits.length()) + digits;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Messages received through a {@link #fenced fenced} view are acknowledged under their epochs:
     * if any of them is below the mailbox's fence, the whole batch is refused with
     * {@link FencedException} and nothing is acknowledged.
     */
    @Override
    public List<Message<T>> acknowledgeBatch(List<? extends Message<T>> messages) {
        return acknowledgeBatch(messages, 0);
    }

    /** @param viewEpoch the epoch of the view it is called through, which then applies to every message */
    private List<Message<T>> acknowledgeBatch(List<? extends Message<T>> messages, long viewEpoch) {
        Objects.requireNonNull(messages, "messages");
        Limits.requireBatchSize(messages.size(), "batch size");
        long[] range = {viewEpoch, viewEpoch};
        List<RedisMessage<T>> settling = owned(messages, viewEpoch, range);
        List<byte[]> args = new ArrayList<>(4 + 2 * messages.size());
        args.add(channelBytes);
        args.add(ttlMs);
        args.add(bytes(range[0]));
        args.add(bytes(range[1]));
        for (RedisMessage<T> rm : settling) {
            args.add(bytes(rm.id));
            args.add(bytes(rm.token));
        }
        ensureOpen();
        List<Message<T>> stale = new ArrayList<>();
        reportStale(settling, (List<?>) ack.run(client, name, keys, args), stale::add);
        return stale;
    }

    /**
     * Checks that every message was received from this object and widens {@code range} (lowest,
     * highest) to the epochs they were received under, unless the call's view has an epoch of its own.
     */
    private List<RedisMessage<T>> owned(List<? extends Message<T>> messages, long viewEpoch, long[] range) {
        List<RedisMessage<T>> out = new ArrayList<>(messages.size());
        for (Message<T> m : messages) {
            RedisMessage<T> rm = own(m);
            out.add(rm);
            if (viewEpoch == 0 && rm.epoch > 0) {
                range[0] = range[0] == 0 ? rm.epoch : Math.min(range[0], rm.epoch);
                range[1] = Math.max(range[1], rm.epoch);
            }
        }
        return out;
    }

    /** Tells {@code stale} of each message whose acknowledge code (prelude.lua's check()) is not 1. */
    private static <T> void reportStale(List<RedisMessage<T>> messages, List<?> codes,
                                        Consumer<? super Message<T>> stale) {
        for (int i = 0; i < codes.size(); i++) {
            if ((Long) codes.get(i) != 1) {
                stale.accept(messages.get(i));
            }
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>The id counter, the fence and the remembered deduplication ids stay: a send retried after a
     * purge is still recognised, and a purge does not lower the fence.
     */
    @Override
    public long purge() {
        ensureOpen();
        return (Long) purge.run(client, name, keys, List.of(channelBytes, ttlMs));
    }

    @Override
    public long approximateCount() {
        ensureOpen();
        return (Long) Scripts.COUNT.run(client, name, keys, List.of(channelBytes, ttlMs));
    }

    // ---- inspection (the web console): read-only scripts, nothing changes

    /** How many entries of each kind {@link #inspect} and {@link #peek} read one by one, at most. */
    private static final int INSPECT_SCAN = 1_000;

    /**
     * {@inheritDoc}
     *
     * <p>One read-only script. The total is exact (every message has a meta entry); so are the counts while at
     * most {@value #INSPECT_SCAN} messages are delayed or in flight (each is read to tell which); beyond, the
     * unread ones count as delayed and {@code exact} is false. Queued includes a noisy tenant's messages set
     * aside and, on a FIFO mailbox, the messages waiting behind one of their group in flight. The oldest
     * message's age is that of the oldest among the first {@value #INSPECT_SCAN} of each structure (the ready
     * list, the set-aside or FIFO group entries, what is due and what is later), by the Redis server's clock.
     */
    @Override
    public dev.mailbox.api.spi.Inspection.Stats inspect() {
        ensureOpen();
        List<?> r = (List<?>) (fifo != null ? Scripts.INSPECT_FIFO : Scripts.INSPECT).run(client, name, keys,
                List.of(channelBytes, ttlMs, bytes(INSPECT_SCAN)));
        long oldest = (Long) r.get(3);
        long now = (Long) r.get(5);
        return new dev.mailbox.api.spi.Inspection.Stats((Long) r.get(0), (Long) r.get(1), (Long) r.get(2),
                oldest < 0 ? null : Duration.ofMillis(Math.max(0, now - oldest)), (Long) r.get(4) == 1,
                deadLetters == null ? null : deadLetters.name(), maxReceiveCount);
    }

    /**
     * {@inheritDoc}
     *
     * <p>One read-only script. On a FIFO mailbox queued messages come group by group (the groups ready to
     * deliver first, in the order receives take them), each group in send order, and a message waiting out a
     * nack timeout is shown as delayed while the messages behind it are queued; a dead letter shows the id it
     * had in its source, as {@link Message#id()} does.
     */
    @Override
    public List<dev.mailbox.api.spi.Inspection.Peeked> peek(int max) {
        dev.mailbox.api.spi.Inspection.requirePeekSize(max);
        ensureOpen();
        List<?> r = (List<?>) (fifo != null ? Scripts.PEEK_FIFO : Scripts.PEEK).run(client, name, keys,
                List.of(channelBytes, ttlMs, bytes(max), bytes(INSPECT_SCAN)));
        List<dev.mailbox.api.spi.Inspection.Peeked> out = new ArrayList<>();
        for (int i = 1; i + 5 < r.size(); i += 6) {
            dev.mailbox.api.spi.Inspection.State state = switch (string(r.get(i + 4))) {
                case "q" -> dev.mailbox.api.spi.Inspection.State.QUEUED;
                case "f" -> dev.mailbox.api.spi.Inspection.State.IN_FLIGHT;
                default -> dev.mailbox.api.spi.Inspection.State.DELAYED;
            };
            out.add(new dev.mailbox.api.spi.Inspection.Peeked(string(r.get(i)), (byte[]) r.get(i + 1),
                    decodeAttributes((byte[]) r.get(i + 5)), java.time.Instant.ofEpochMilli((Long) r.get(i + 2)),
                    (int) (long) (Long) r.get(i + 3), state));
        }
        return out;
    }

    /** @return this mailbox's wake hub, shared by every mailbox on its client (for tests in this package) */
    WakeHub wakeHub() {
        return hub;
    }

    /** @return this mailbox's channel on its wake hub (for tests in this package) */
    WakeHub.Channel wakeChannel() {
        return wake;
    }

    /** Closes the wake subscription, and the client too if this mailbox made it from a URI. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        hub.leave(wake); // wakes this mailbox's waiters, which find it closed
        hub.release();
        if (ownsClient) {
            client.close();
        }
    }

    @Override
    public String toString() {
        return "RedisMailbox[" + name + ", " + firstKey + "]";
    }

    /**
     * {@inheritDoc}
     *
     * <p>A Redis receipt handle is {@code <message id>:<delivery token>}, the two things the scripts
     * check and nothing kept in this object's memory, so it works from any {@code RedisMailbox} of the
     * same queue, in any process, for as long as the delivery is current. A well-formed handle of
     * another queue is stale here.
     */
    @Override
    public void acknowledge(String receiptHandle) {
        acknowledgeHandle(receiptHandle, 0);
    }

    /** {@inheritDoc} See {@link #acknowledge(String)} for what a handle is. */
    @Override
    public void nack(String receiptHandle, Duration visibilityTimeout) {
        changeVisibilityByHandle(receiptHandle, 0, visibilityTimeout, true);
    }

    /** {@inheritDoc} See {@link #acknowledge(String)} for what a handle is. */
    @Override
    public void extendVisibility(String receiptHandle, Duration timeout) {
        changeVisibilityByHandle(receiptHandle, 0, timeout, false);
    }

    /**
     * {@inheritDoc}
     *
     * <p>On Redis the fence is the mailbox's {@code fence} key, beside its other keys (same hash tag);
     * each fenced script reads it before it writes anything and raises it in the same script, so the
     * check is atomic with the call and holds across processes. A mailbox whose keys expire (see
     * {@link Builder#keyTtl}) loses its fence with them.
     */
    @Override
    public Mailbox<T> fenced(long epoch) {
        return new FencedView<>(this, fencedCalls, epoch);
    }

    private void acknowledgeHandle(String receiptHandle, long epoch) {
        String[] parts = parseHandle(receiptHandle);
        acknowledge(parts[0], parts[1], receiptHandle, epoch);
    }

    private void changeVisibilityByHandle(String receiptHandle, long epoch, Duration timeout, boolean nack) {
        String[] parts = parseHandle(receiptHandle);
        changeVisibility(parts[0], parts[1], receiptHandle, epoch, timeout, nack);
    }

    private String[] parseHandle(String receiptHandle) {
        Objects.requireNonNull(receiptHandle, "receiptHandle");
        String[] parts = RedisMessage.parse(receiptHandle);
        if (parts == null) {
            String shown = receiptHandle.length() > 100 ? receiptHandle.substring(0, 100) + "..." : receiptHandle;
            throw new IllegalArgumentException("'" + shown + "' is not a receipt handle of a Redis mailbox"
                    + " (<message id>:<delivery token>), for mailbox '" + name + "'");
        }
        return parts;
    }

    // ---- one delivery, called by RedisMessage and by handle

    void acknowledge(String id, String token, String handle, long epoch) {
        ensureOpen();
        byte[] e = bytes(epoch);
        List<?> codes = (List<?>) ack.run(client, name, keys,
                List.of(channelBytes, ttlMs, e, e, bytes(id), bytes(token)));
        requireCurrent(handle, id, (Long) codes.get(0));
    }

    void changeVisibility(String id, String token, String handle, long epoch, Duration timeout, boolean nack) {
        Limits.requireVisibilityTimeout(timeout, nack ? "visibilityTimeout" : "timeout");
        ensureOpen();
        Object code = (nack ? this.nack : extend).run(client, name, keys, List.of(channelBytes, ttlMs,
                bytes(epoch), bytes(id), bytes(token), bytes(millisRoundedUp(timeout))));
        requireCurrent(handle, id, (Long) code);
    }

    private void requireCurrent(String handle, String id, long code) {
        if (code == 1) {
            return;
        }
        String why = code == -1 ? "its visibility timeout ended"
                : "it is not the current delivery (the message was delivered again, nacked or deleted)";
        throw new ReceiptHandleExpiredException(handle, "receipt handle " + handle
                + " of message " + id + " in mailbox '" + name + "' is stale: " + why);
    }

    private RedisMessage<T> own(Message<T> m) {
        if (m instanceof RedisMessage<T> rm && rm.belongsTo(this)) {
            return rm;
        }
        throw new IllegalArgumentException("message " + m.id() + " was not received from mailbox '" + name + "'");
    }

    /**
     * Before any call: the mailbox is open, and, the first time, its kind in Redis (FIFO or standard) is
     * this object's (kind.lua). A mailbox never changes kind, and objects of both kinds on one mailbox
     * would each miss the other's messages. One round trip per object, and its dead-letter mailbox's.
     */
    private void ensureOpen() {
        if (closed) {
            throw new MailboxClosedException(name);
        }
        ensureKind();
    }

    private void ensureKind() {
        if (kindChecked) {
            return;
        }
        String wanted = fifo != null ? "fifo" : "standard";
        String stored = string(Scripts.KIND.run(client, name, kindKeys, List.of(channelBytes, ttlMs, bytes(wanted))));
        if (!stored.equals(wanted)) {
            boolean isFifo = stored.equals("fifo");
            throw new MailboxException("mailbox '" + name + "' is a " + (isFifo ? "FIFO" : "standard")
                    + " mailbox in Redis (" + base + "kind), but this object was built as a "
                    + (isFifo ? "standard" : "FIFO") + " one: a mailbox never changes kind; build it "
                    + (isFifo ? "with .fifo(FifoOptions)" : "without .fifo(...)") + ", or purge it and delete "
                    + base + "kind to start over");
        }
        if (deadLetters != null) {
            deadLetters.ensureKind();
        }
        kindChecked = true;
    }

    // ---- encoding

    private static byte[] encodeAttributes(Map<String, String> attributes) {
        if (attributes.isEmpty()) {
            return new byte[0];
        }
        try {
            return ATTRIBUTES.writeValueAsBytes(attributes);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a map of strings always encodes", e);
        }
    }

    private Map<String, String> decodeAttributes(byte[] encoded) {
        if (encoded.length == 0) {
            return Map.of();
        }
        try {
            return Collections.unmodifiableMap(ATTRIBUTES.readValue(encoded, ATTRIBUTE_MAP));
        } catch (java.io.IOException e) {
            throw new MailboxException("attributes of a message in mailbox '" + name + "' are corrupt", e);
        }
    }

    private static long millisRoundedUp(Duration d) {
        return (d.toNanos() + 999_999) / 1_000_000;
    }

    private static byte[] bytes(long value) {
        return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] bytes(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }

    private static String string(Object reply) {
        return new String((byte[]) reply, StandardCharsets.UTF_8);
    }

    /**
     * Builds a {@link RedisMailbox}. Every setter checks its argument at once; {@link #build()}
     * checks that they fit together. Not thread-safe.
     *
     * @param <T> the body type
     */
    public static final class Builder<T> {
        private final String name;
        private final Codec<T> codec;
        private @Nullable UnifiedJedis client;
        private @Nullable String uri;
        private String prefix = "mailbox:";
        private String hashTag;
        private ReceiveOptions defaults = ReceiveOptions.defaults();
        private long capacity;
        private int maxMessageBytes = Limits.DEFAULT_MAX_MESSAGE_BYTES;
        private @Nullable RedrivePolicy redrivePolicy;
        private @Nullable Duration keyTtl;
        private @Nullable FifoOptions fifo;

        private Builder(String name, Codec<T> codec) {
            this.name = Limits.requireMailboxName(name, true);
            this.codec = Objects.requireNonNull(codec, "codec");
            this.hashTag = name;
        }

        /**
         * @param client a {@link JedisPooled} or {@link JedisCluster}, shared by any number of mailboxes;
         *               the mailbox does not close it
         * @return this builder
         */
        public Builder<T> client(UnifiedJedis client) {
            this.client = Objects.requireNonNull(client, "client");
            return this;
        }

        /**
         * @param uri a standalone server's URI, such as {@code redis://127.0.0.1:6379/0} or
         *            {@code rediss://user:pass@host:6380}; the mailbox makes its own pooled client and
         *            closes it on {@link RedisMailbox#close()}. Use {@link #client} for a cluster.
         * @return this builder
         */
        public Builder<T> uri(String uri) {
            Objects.requireNonNull(uri, "uri");
            URI parsed = URI.create(uri);
            if (!"redis".equals(parsed.getScheme()) && !"rediss".equals(parsed.getScheme())) {
                throw new IllegalArgumentException("uri must start with redis:// or rediss://, was " + uri);
            }
            this.uri = uri;
            return this;
        }

        /**
         * @param prefix what every key of the mailbox starts with, default {@code mailbox:}; no braces
         * @return this builder
         */
        public Builder<T> keyPrefix(String prefix) {
            Objects.requireNonNull(prefix, "prefix");
            if (prefix.contains("{") || prefix.contains("}")) {
                throw new IllegalArgumentException("key prefix must not contain '{' or '}', was '" + prefix + "'");
            }
            this.prefix = prefix;
            return this;
        }

        /**
         * @param hashTag the Redis Cluster hash tag of the mailbox's keys, default its name. Give a
         *                dead-letter mailbox its source's tag so both live in one slot.
         * @return this builder
         */
        public Builder<T> hashTag(String hashTag) {
            Objects.requireNonNull(hashTag, "hashTag");
            if (!TAG.matcher(hashTag).matches()) {
                throw new IllegalArgumentException("hash tag must be 1 to 200 characters without '{' or '}', was '"
                        + hashTag + "'");
            }
            this.hashTag = hashTag;
            return this;
        }

        /**
         * @param defaults what {@link RedisMailbox#receive()} uses; default {@link ReceiveOptions#defaults()}
         * @return this builder
         */
        public Builder<T> defaultReceiveOptions(ReceiveOptions defaults) {
            this.defaults = Objects.requireNonNull(defaults, "defaults");
            return this;
        }

        /**
         * @param capacity the most messages (queued, delayed and in flight); 0 (the default) for no limit
         * @return this builder
         */
        public Builder<T> capacity(long capacity) {
            this.capacity = Limits.requireCapacity(capacity);
            return this;
        }

        /**
         * @param bytes the largest message (encoded body plus attributes), 1 byte to 1 MiB; default 1 MiB
         *              ({@link Limits#DEFAULT_MAX_MESSAGE_BYTES})
         * @return this builder
         */
        public Builder<T> maxMessageBytes(int bytes) {
            this.maxMessageBytes = Limits.requireMaxMessageBytes(bytes);
            return this;
        }

        /**
         * @param policy where messages go after too many deliveries: another {@code RedisMailbox} on the
         *               same client (or URI), FIFO exactly when this one is, and, on a cluster, with a
         *               hash tag in the same slot. The move happens inside the receive script, so it is
         *               atomic; dead letters ignore the dead-letter mailbox's capacity and keep their group.
         *               In a standard dead-letter mailbox they get a new id; in a FIFO one they keep their
         *               id (and their handles name the key they have there), and each group's stay in
         *               order.
         * @return this builder
         */
        public Builder<T> redrivePolicy(RedrivePolicy policy) {
            Objects.requireNonNull(policy, "policy");
            if (!(policy.deadLetterMailbox() instanceof RedisMailbox<?>)) {
                throw new IllegalArgumentException("the dead-letter mailbox of a RedisMailbox must be a RedisMailbox,"
                        + " was " + policy.deadLetterMailbox().getClass().getName());
            }
            this.redrivePolicy = policy;
            return this;
        }

        /**
         * @param ttl how long the mailbox's keys live after its last operation, so an abandoned mailbox
         *            cleans itself up; every send, receive, acknowledgement, nack and visibility change
         *            renews it, but counting does not (watching a mailbox does not keep it alive). Everything in the mailbox, in-flight and delayed messages and its
         *            {@link RedisMailbox#fenced fence} too, goes when it expires, so choose it longer than
         *            your longest idle time (and than a lease holder's longest silence). Deduplication ids
         *            keep their own expiry, and the id counter lives at least as long as they do, so a
         *            deduplicated retry never answers an id that a later message reuses. At least one
         *            second; none by default.
         * @return this builder
         */
        public Builder<T> keyTtl(Duration ttl) {
            Objects.requireNonNull(ttl, "ttl");
            if (ttl.compareTo(Duration.ofSeconds(1)) < 0) {
                throw new IllegalArgumentException("key TTL must be at least 1 second, was " + ttl);
            }
            this.keyTtl = ttl;
            return this;
        }

        /**
         * Makes the mailbox a FIFO mailbox (see {@link Mailbox}'s "FIFO mailboxes"); without this it is a
         * standard one, fair between tenants ({@link MailboxCapabilities#fairness()}). Every object on one
         * mailbox must agree: the first call of an object of the other kind is refused with a
         * {@link MailboxException} (see {@link RedisMailbox} on the {@code kind} key).
         *
         * @param options its deduplication settings
         * @return this builder
         */
        public Builder<T> fifo(FifoOptions options) {
            this.fifo = Objects.requireNonNull(options, "options");
            return this;
        }

        /**
         * @return the mailbox
         * @throws IllegalArgumentException if neither or both of client and URI were given, the
         *                                  dead-letter mailbox cannot be reached atomically, or it is FIFO
         *                                  and this one is not, or the other way round (as on SQS)
         */
        public RedisMailbox<T> build() {
            if ((client == null) == (uri == null)) {
                throw new IllegalArgumentException("give exactly one of client(...) and uri(...) for mailbox '"
                        + name + "'");
            }
            boolean owns = client == null;
            UnifiedJedis c = owns ? new JedisPooled(URI.create(uri)) : client;
            Object server = owns ? uri : client;
            try {
                RedisMailbox<T> mailbox = new RedisMailbox<>(this, c, owns, server);
                RedisMailbox<?> dlq = mailbox.deadLetters;
                if (dlq != null) {
                    if ((dlq.fifo != null) != (fifo != null)) {
                        throw new IllegalArgumentException("dead-letter mailbox '" + dlq.name + "' must be "
                                + (fifo != null ? "a FIFO mailbox, because mailbox '" + name + "' is one"
                                : "a standard mailbox, because mailbox '" + name + "' is one"));
                    }
                    if (!dlq.server.equals(server)) {
                        throw new IllegalArgumentException("dead-letter mailbox '" + dlq.name
                                + "' must use the same Redis client (or URI) as mailbox '" + name + "'");
                    }
                    if (c instanceof JedisCluster
                            && JedisClusterCRC16.getSlot(dlq.firstKey) != JedisClusterCRC16.getSlot(mailbox.firstKey)) {
                        throw new IllegalArgumentException("on a cluster, dead-letter mailbox '" + dlq.name
                                + "' must be in the same hash slot as '" + name + "': build it with .hashTag(\""
                                + hashTag + "\")");
                    }
                }
                return mailbox;
            } catch (RuntimeException e) {
                if (owns) {
                    c.close();
                }
                throw e;
            }
        }
    }
}
