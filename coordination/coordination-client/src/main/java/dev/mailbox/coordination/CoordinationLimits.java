package dev.mailbox.coordination;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Every rule the coordination service holds its inputs to, in one place: names and ids, lease TTLs and
 * policies, labels, request ids. The client refuses a bad argument before it sends anything
 * ({@link IllegalArgumentException}), the control plane refuses it with {@code INVALID_ARGUMENT} before it
 * reaches the log, and the state machine refuses it again when a command is applied; all three call the
 * methods here, so they accept the same inputs and say the same thing about the rest.
 *
 * <p>Each rule is a {@code ...Problem} method that returns why a value is refused (or {@code null} when it
 * is fine) and, for the common ones, a {@code require...} method that throws with that message.
 */
public final class CoordinationLimits {

    /**
     * Longest namespace name or node id: a portable mailbox name's length, so that a mailbox id
     * ({@code namespace@node}) is always an extended mailbox name (see
     * {@link dev.mailbox.api.Limits#mailboxNameProblem}).
     */
    public static final int MAX_NAME_LENGTH = dev.mailbox.api.Limits.MAX_NAME_LENGTH;
    /** Longest runner id or address. */
    public static final int MAX_ID_LENGTH = 256;
    /** Longest holder secret. */
    public static final int MAX_SECRET_LENGTH = 128;
    /** Longest request id of an acquire or a node registration. */
    public static final int MAX_REQUEST_ID_LENGTH = 64;
    /** Shortest TTL a lease may have. */
    public static final Duration MIN_TTL = Duration.ofSeconds(1);
    /** Longest TTL a lease may have. */
    public static final Duration MAX_TTL = Duration.ofMinutes(10);
    /** Most labels on a namespace or node. */
    public static final int MAX_LABELS = 32;
    /** Longest label key. */
    public static final int MAX_LABEL_KEY_LENGTH = 128;
    /** Longest label value. */
    public static final int MAX_LABEL_VALUE_LENGTH = 1024;
    /** Most capabilities a node may declare. */
    public static final int MAX_CAPABILITIES = 32;
    /** Longest capability, region or version string of a node. */
    public static final int MAX_NODE_FIELD_LENGTH = 128;
    /** Most renewals one batched renewal call may carry. */
    public static final int MAX_RENEWALS_PER_CALL = 1_000;
    /** The namespace of node registration leases: reserved, so runners cannot acquire in it. */
    public static final String NODES_NAMESPACE = "_nodes";
    /**
     * The largest piece of a backup that one call carries, either way: 256 KiB. A backup of any size is exported and
     * imported in pieces of at most this, each its own call (and, importing, its own log entry), so neither a
     * coordinator nor a client holds more of it at once; export and import accept the same sizes (there is no
     * limit but the state's own: see {@link #MAX_QUEUES}). Under half of G1's smallest heap region (1 MiB), so the
     * pieces a coordinator's log keeps in memory are never "humongous" objects, which take whole regions each.
     */
    public static final int MAX_IMPORT_CHUNK_BYTES = 256 << 10;

    // --- queue records (see control_plane.proto's QueueRecord) ---------------------------------------

    /** Longest queue name: SQS's. */
    public static final int MAX_QUEUE_NAME_LENGTH = 80;
    /**
     * Most queue records a cluster holds. Every record lives in each coordinator's memory and in every
     * snapshot: typical records (a few hundred bytes) make some megabytes; records filled to every per-record cap
     * (about 52 KB each in ASCII) make up to some 520 MB, which each coordinator's heap must hold (see
     * docs/operations-hardening.md). Backups stream in pieces ({@link #MAX_IMPORT_CHUNK_BYTES}), so their size
     * does not matter to an export or an import.
     */
    public static final int MAX_QUEUES = 10_000;
    /** Most attributes one queue may have set: SQS has about twenty settable ones. */
    public static final int MAX_QUEUE_ATTRIBUTES = 32;
    /** Longest attribute name (SQS's longest is some thirty characters). */
    public static final int MAX_QUEUE_ATTRIBUTE_NAME_LENGTH = 64;
    /**
     * Longest attribute value, in characters: a RedrivePolicy is under 300, a RedriveAllowPolicy with SQS's
     * ten source queue ARNs under 1,500; this leaves room for an access {@code Policy} document.
     */
    public static final int MAX_QUEUE_ATTRIBUTE_VALUE_LENGTH = 10_240;
    /** Most characters all of one queue's attribute values may hold together. */
    public static final int MAX_QUEUE_ATTRIBUTES_TOTAL_LENGTH = 32_768;
    /** Most tags on one queue: SQS's. */
    public static final int MAX_QUEUE_TAGS = 50;
    /** Longest tag key: SQS's. */
    public static final int MAX_QUEUE_TAG_KEY_LENGTH = 128;
    /** Longest tag value: SQS's. */
    public static final int MAX_QUEUE_TAG_VALUE_LENGTH = 256;
    /** Most queue names one list call returns: SQS's ListQueues page. */
    public static final int MAX_QUEUE_LIST = 1_000;

    private static final Pattern QUEUE_NAME = Pattern.compile("[A-Za-z0-9_-]{1," + MAX_QUEUE_NAME_LENGTH + "}");

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0," + (MAX_NAME_LENGTH - 1) + "}");
    private static final String NAME_RULE = "1 to " + MAX_NAME_LENGTH
            + " letters, digits, '.', '_' or '-', starting with a letter or digit";

    private CoordinationLimits() {
    }

    // --- names and ids ---------------------------------------------------------------------------

    /**
     * @param name a proposed namespace name
     * @return why it cannot be one, or null
     */
    public static @Nullable String namespaceProblem(String name) {
        return NAME.matcher(name).matches() ? null : "namespace name must be " + NAME_RULE + ", was " + quote(name);
    }

    /**
     * @param namespace a namespace to list leases of: "" (all), the reserved {@link #NODES_NAMESPACE}, or a
     *                  namespace name
     * @return why it cannot be one, or null
     */
    public static @Nullable String namespaceFilterProblem(String namespace) {
        return namespace.isEmpty() ? null : namespaceOrReservedProblem(namespace);
    }

    /**
     * @param namespace a namespace to read (a policy, say): the reserved {@link #NODES_NAMESPACE} or a
     *                  namespace name
     * @return why it cannot be one, or null
     */
    public static @Nullable String namespaceOrReservedProblem(String namespace) {
        return namespace.equals(NODES_NAMESPACE) ? null : namespaceProblem(namespace);
    }

    /**
     * @param id a proposed mailbox node id (also the node part of a mailbox id)
     * @return why it cannot be one, or null
     */
    public static @Nullable String nodeIdProblem(String id) {
        return NAME.matcher(id).matches() ? null : "node id must be " + NAME_RULE + ", was " + quote(id);
    }

    /**
     * A mailbox id is {@code namespace@node} or a bare namespace name (a mailbox that is its own
     * namespace). The reserved {@link #NODES_NAMESPACE} is accepted here; whether a caller may use it is
     * {@link #acquirableProblem}'s question.
     *
     * @param id a proposed mailbox id
     * @return why it cannot be one, or null
     */
    public static @Nullable String mailboxIdProblem(String id) {
        int at = id.indexOf('@');
        String namespace = at < 0 ? id : id.substring(0, at);
        if (at >= 0 && (id.indexOf('@', at + 1) >= 0 || at == id.length() - 1)) {
            return "mailbox id must be 'namespace@node' or a namespace name, was " + quote(id);
        }
        if (!namespace.equals(NODES_NAMESPACE)) {
            String bad = namespaceProblem(namespace);
            if (bad != null) {
                return "mailbox id " + quote(id) + ": " + bad;
            }
        }
        if (at >= 0) {
            String bad = nodeIdProblem(id.substring(at + 1));
            if (bad != null) {
                return "mailbox id " + quote(id) + ": " + bad;
            }
        }
        return null;
    }

    /**
     * @param mailboxId a well-formed mailbox id
     * @return why a runner may not acquire it (it is in the reserved namespace), or null
     */
    public static @Nullable String acquirableProblem(String mailboxId) {
        return namespaceOf(mailboxId).equals(NODES_NAMESPACE) ? "namespace '" + NODES_NAMESPACE
                + "' is reserved for node registrations" : null;
    }

    /**
     * @param mailboxId a mailbox id
     * @return its namespace (a bare name is its own)
     */
    public static String namespaceOf(String mailboxId) {
        int at = mailboxId.indexOf('@');
        return at < 0 ? mailboxId : mailboxId.substring(0, at);
    }

    /**
     * @param id a proposed runner id
     * @return why it cannot be one, or null
     */
    public static @Nullable String runnerIdProblem(String id) {
        return tokenProblem("runner id", id, MAX_ID_LENGTH);
    }

    /**
     * @param address a proposed {@code host:port}
     * @return why it cannot be one, or null
     */
    public static @Nullable String addressProblem(String address) {
        String bad = tokenProblem("address", address, MAX_ID_LENGTH);
        if (bad != null) {
            return bad;
        }
        int colon = address.lastIndexOf(':');
        if (colon <= 0 || colon == address.length() - 1) {
            return "address must be host:port, was " + quote(address);
        }
        try {
            int port = Integer.parseInt(address.substring(colon + 1));
            if (port >= 1 && port <= 65_535) {
                return null;
            }
        } catch (NumberFormatException e) {
            // falls through to the refusal
        }
        return "address port must be 1 to 65535, was " + quote(address);
    }

    /**
     * @param runnerId the runner that asks for a lease
     * @param nodeId   the node it runs on
     * @param address  where it serves the mailbox
     * @return why this holder is refused, or null
     */
    public static @Nullable String holderProblem(String runnerId, String nodeId, String address) {
        String bad = runnerIdProblem(runnerId);
        if (bad == null) {
            bad = nodeIdProblem(nodeId);
        }
        return bad != null ? bad : addressProblem(address);
    }

    /**
     * @param secret a lease holder's secret ("" only in a raw request, for a holder without one)
     * @return why it is refused, or null
     */
    public static @Nullable String secretProblem(String secret) {
        return tokenProblem("holder secret", secret, MAX_SECRET_LENGTH);
    }

    /**
     * @param requestId the id every retry of one acquire or registration carries ("" for none)
     * @return why it is refused, or null
     */
    public static @Nullable String requestIdProblem(String requestId) {
        return requestId.length() > MAX_REQUEST_ID_LENGTH ? "request id must be at most " + MAX_REQUEST_ID_LENGTH
                + " characters, was " + requestId.length() : null;
    }

    /**
     * @param mailboxId the mailbox
     * @param leaseId   a lease id as granted
     * @param epoch     an epoch as granted
     * @return why this cannot name a lease, or null
     */
    public static @Nullable String leaseRefProblem(String mailboxId, long leaseId, long epoch) {
        String bad = mailboxIdProblem(mailboxId);
        if (bad != null) {
            return bad;
        }
        return leaseId <= 0 || epoch <= 0 ? "lease id and epoch must be positive, were " + leaseId + " and " + epoch
                : null;
    }

    // --- time ------------------------------------------------------------------------------------

    /**
     * @param ttlMillis a lease TTL in milliseconds
     * @return why it is refused, or null
     */
    public static @Nullable String ttlProblem(long ttlMillis) {
        return ttlMillis < MIN_TTL.toMillis() || ttlMillis > MAX_TTL.toMillis() ? "ttl must be between " + MIN_TTL
                + " and " + MAX_TTL + ", was " + Duration.ofMillis(ttlMillis) : null;
    }

    /**
     * @param ttlMillis a requested TTL, where 0 means "the namespace's policy"
     * @return why it is refused, or null
     */
    public static @Nullable String requestedTtlProblem(long ttlMillis) {
        return ttlMillis == 0 ? null : ttlProblem(ttlMillis);
    }

    /**
     * The rule of {@link #requestedTtlProblem(long)} for a TTL as a caller gives it, before it is cut to whole
     * milliseconds: a positive TTL under a millisecond is not the zero that means the namespace's policy, and a
     * TTL too long for a long of milliseconds is refused like any other too long.
     *
     * @param ttl a requested TTL, where zero means "the namespace's policy"
     * @return why it is refused, or null
     */
    public static @Nullable String requestedTtlProblem(Duration ttl) {
        return ttl.isZero() ? null : ttlProblem(ttl);
    }

    private static @Nullable String ttlProblem(Duration ttl) {
        return ttl.compareTo(MIN_TTL) < 0 || ttl.compareTo(MAX_TTL) > 0 ? "ttl must be between " + MIN_TTL
                + " and " + MAX_TTL + ", was " + ttl : null;
    }

    /**
     * A lease policy's rule: a TTL in range, a heartbeat of at most half the TTL, a grace of at most the TTL.
     * A client never lets one renewal take longer than a third of its lease's TTL (see
     * {@link Leases#renewAsync}), so renewals keep up however short the TTL is.
     *
     * @param ttlMillis       lease lifetime without a renewal
     * @param heartbeatMillis how often holders renew
     * @param graceMillis     extra time after the TTL before expiry
     * @return why this policy is refused, or null
     */
    public static @Nullable String policyProblem(long ttlMillis, long heartbeatMillis, long graceMillis) {
        String bad = ttlProblem(ttlMillis);
        if (bad != null) {
            return bad;
        }
        if (heartbeatMillis <= 0 || heartbeatMillis > ttlMillis / 2) {
            return "heartbeat interval must be positive and at most half the ttl " + Duration.ofMillis(ttlMillis)
                    + " (so that one lost renewal never costs the lease), was " + Duration.ofMillis(heartbeatMillis);
        }
        if (graceMillis < 0 || graceMillis > ttlMillis) {
            return "grace must be between 0 and the ttl " + Duration.ofMillis(ttlMillis) + ", was "
                    + Duration.ofMillis(graceMillis);
        }
        return null;
    }

    /**
     * The rule of {@link #policyProblem(long, long, long)} for durations as a caller gives them, checked before
     * they are cut to whole milliseconds: a duration too long (or too negative) for a long of milliseconds is
     * refused with the rule it breaks, never an {@link ArithmeticException}.
     *
     * @param ttl       lease lifetime without a renewal
     * @param heartbeat how often holders renew
     * @param grace     extra time after the TTL before expiry
     * @return why this policy is refused, or null
     */
    public static @Nullable String policyProblem(Duration ttl, Duration heartbeat, Duration grace) {
        String bad = ttlProblem(ttl);
        if (bad != null) {
            return bad;
        }
        if (heartbeat.isNegative() || heartbeat.isZero() || heartbeat.compareTo(ttl.dividedBy(2)) > 0) {
            return "heartbeat interval must be positive and at most half the ttl " + ttl
                    + " (so that one lost renewal never costs the lease), was " + heartbeat;
        }
        if (grace.isNegative() || grace.compareTo(ttl) > 0) {
            return "grace must be between 0 and the ttl " + ttl + ", was " + grace;
        }
        // each is now within the TTL's range, so whole milliseconds cannot overflow
        return policyProblem(ttl.toMillis(), heartbeat.toMillis(), grace.toMillis());
    }

    // --- labels and node fields ---------------------------------------------------------------------

    /**
     * @param labels labels of a namespace or a node
     * @return why they are refused, or null
     */
    public static @Nullable String labelsProblem(Map<String, String> labels) {
        if (labels.size() > MAX_LABELS) {
            return "at most " + MAX_LABELS + " labels, was " + labels.size();
        }
        for (Map.Entry<String, String> e : labels.entrySet()) {
            String bad = tokenProblem("label key", e.getKey(), MAX_LABEL_KEY_LENGTH);
            if (bad != null) {
                return bad;
            }
            if (e.getValue().length() > MAX_LABEL_VALUE_LENGTH) {
                return "label " + quote(e.getKey()) + ": value must be at most " + MAX_LABEL_VALUE_LENGTH
                        + " characters, was " + e.getValue().length();
            }
        }
        return null;
    }

    /**
     * @param id           node id
     * @param address      where its MailboxService listens
     * @param region       placement hint, may be empty
     * @param version      software version, may be empty
     * @param capabilities what it can host
     * @param labels       free-form labels
     * @return why this node is refused, or null
     */
    public static @Nullable String nodeProblem(String id, String address, String region, String version,
                                               Collection<String> capabilities, Map<String, String> labels) {
        String bad = nodeIdProblem(id);
        if (bad == null) {
            bad = addressProblem(address);
        }
        if (bad == null && region.length() > MAX_NODE_FIELD_LENGTH) {
            bad = "region must be at most " + MAX_NODE_FIELD_LENGTH + " characters, was " + region.length();
        }
        if (bad == null && version.length() > MAX_NODE_FIELD_LENGTH) {
            bad = "version must be at most " + MAX_NODE_FIELD_LENGTH + " characters, was " + version.length();
        }
        if (bad == null && capabilities.size() > MAX_CAPABILITIES) {
            bad = "at most " + MAX_CAPABILITIES + " capabilities, was " + capabilities.size();
        }
        if (bad == null) {
            for (String c : capabilities) {
                bad = tokenProblem("capability", c, MAX_NODE_FIELD_LENGTH);
                if (bad != null) {
                    break;
                }
            }
        }
        return bad != null ? bad : labelsProblem(labels);
    }

    // --- queue records ---------------------------------------------------------------------------

    /**
     * A queue name is SQS's: 1 to {@value #MAX_QUEUE_NAME_LENGTH} letters, digits, '_' or '-'. The reserved
     * {@link #NODES_NAMESPACE} is refused: for access rules a queue named N is a mailbox named N, and the node
     * registrations' namespace is not one a queue may take.
     *
     * @param name a proposed queue name
     * @return why it cannot be one, or null
     */
    public static @Nullable String queueNameProblem(String name) {
        if (!QUEUE_NAME.matcher(name).matches()) {
            return "queue name must be 1 to " + MAX_QUEUE_NAME_LENGTH + " letters, digits, '_' or '-', was "
                    + quote(name);
        }
        return name.equals(NODES_NAMESPACE) ? "queue name '" + NODES_NAMESPACE + "' is reserved for node registrations"
                : null;
    }

    /**
     * @param prefix a prefix of queue names to list ("" for all)
     * @param after  list names after this one ("" to start at the beginning)
     * @param limit  the most names to return
     * @return why this list request is refused, or null
     */
    public static @Nullable String queueListProblem(String prefix, String after, int limit) {
        if (prefix.length() > MAX_QUEUE_NAME_LENGTH) {
            return "queue name prefix must be at most " + MAX_QUEUE_NAME_LENGTH + " characters, was " + prefix.length();
        }
        if (after.length() > MAX_QUEUE_NAME_LENGTH) {
            return "queue name to list after must be at most " + MAX_QUEUE_NAME_LENGTH + " characters, was "
                    + after.length();
        }
        return limit < 1 || limit > MAX_QUEUE_LIST ? "queue list limit must be 1 to " + MAX_QUEUE_LIST + ", was "
                + limit : null;
    }

    /**
     * @param attributes a queue's attributes (all of them, or those a change sets)
     * @return why they are refused, or null
     */
    public static @Nullable String queueAttributesProblem(Map<String, String> attributes) {
        if (attributes.size() > MAX_QUEUE_ATTRIBUTES) {
            return "at most " + MAX_QUEUE_ATTRIBUTES + " queue attributes, was " + attributes.size();
        }
        long total = 0;
        for (Map.Entry<String, String> e : attributes.entrySet()) {
            String bad = tokenProblem("queue attribute name", e.getKey(), MAX_QUEUE_ATTRIBUTE_NAME_LENGTH);
            if (bad != null) {
                return bad;
            }
            if (e.getValue().isEmpty() || e.getValue().length() > MAX_QUEUE_ATTRIBUTE_VALUE_LENGTH) {
                return "queue attribute " + quote(e.getKey()) + ": value must be 1 to " + MAX_QUEUE_ATTRIBUTE_VALUE_LENGTH
                        + " characters, was " + e.getValue().length();
            }
            total += e.getValue().length();
        }
        return total > MAX_QUEUE_ATTRIBUTES_TOTAL_LENGTH ? "queue attribute values must be at most "
                + MAX_QUEUE_ATTRIBUTES_TOTAL_LENGTH + " characters together, were " + total : null;
    }

    /**
     * @param tags a queue's tags (all of them, or those a change sets)
     * @return why they are refused, or null
     */
    public static @Nullable String queueTagsProblem(Map<String, String> tags) {
        if (tags.size() > MAX_QUEUE_TAGS) {
            return "at most " + MAX_QUEUE_TAGS + " tags on a queue, was " + tags.size();
        }
        for (Map.Entry<String, String> e : tags.entrySet()) {
            String bad = tagKeyProblem(e.getKey());
            if (bad != null) {
                return bad;
            }
            if (e.getValue().length() > MAX_QUEUE_TAG_VALUE_LENGTH) {
                return "tag " + quote(e.getKey()) + ": value must be at most " + MAX_QUEUE_TAG_VALUE_LENGTH
                        + " characters, was " + e.getValue().length();
            }
        }
        return null;
    }

    /**
     * A queue change: its attribute and tag sets, and its removals (names and keys of the same rules, at most
     * {@value #MAX_QUEUE_ATTRIBUTES} attribute names and {@value #MAX_QUEUE_TAGS} tag keys), with no key both
     * set and removed.
     *
     * @param name              the queue
     * @param setAttributes     attributes to set
     * @param removedAttributes attribute names to remove
     * @param setTags           tags to set
     * @param removedTags       tag keys to remove
     * @param modifiedAtMillis  the new modified time, or 0
     * @return why the change is refused, or null
     */
    public static @Nullable String queueChangeProblem(String name, Map<String, String> setAttributes,
                                                      Collection<String> removedAttributes, Map<String, String> setTags,
                                                      Collection<String> removedTags, long modifiedAtMillis) {
        String bad = queueNameProblem(name);
        if (bad == null) {
            bad = queueAttributesProblem(setAttributes);
        }
        if (bad == null) {
            bad = queueTagsProblem(setTags);
        }
        if (bad == null && removedAttributes.size() > MAX_QUEUE_ATTRIBUTES) {
            bad = "at most " + MAX_QUEUE_ATTRIBUTES + " queue attributes removed at once, was " + removedAttributes.size();
        }
        if (bad == null && removedTags.size() > MAX_QUEUE_TAGS) {
            bad = "at most " + MAX_QUEUE_TAGS + " tags removed at once, was " + removedTags.size();
        }
        if (bad == null) {
            for (String a : removedAttributes) {
                bad = tokenProblem("queue attribute name", a, MAX_QUEUE_ATTRIBUTE_NAME_LENGTH);
                if (bad == null && setAttributes.containsKey(a)) {
                    bad = "queue attribute " + quote(a) + " is both set and removed";
                }
                if (bad != null) {
                    break;
                }
            }
        }
        if (bad == null) {
            for (String t : removedTags) {
                bad = tagKeyProblem(t);
                if (bad == null && setTags.containsKey(t)) {
                    bad = "tag " + quote(t) + " is both set and removed";
                }
                if (bad != null) {
                    break;
                }
            }
        }
        return bad != null || modifiedAtMillis >= 0 ? bad : "modified time must be 0 or more, was " + modifiedAtMillis;
    }

    /**
     * @param name             the queue
     * @param attributes       its attributes
     * @param tags             its tags
     * @param createdAtMillis  its creation time, or 0
     * @param modifiedAtMillis its last modified time, or 0
     * @return why this queue record is refused, or null
     */
    public static @Nullable String queueRecordProblem(String name, Map<String, String> attributes,
                                                      Map<String, String> tags, long createdAtMillis,
                                                      long modifiedAtMillis) {
        String bad = queueNameProblem(name);
        if (bad == null) {
            bad = queueAttributesProblem(attributes);
        }
        if (bad == null) {
            bad = queueTagsProblem(tags);
        }
        return bad != null || (createdAtMillis >= 0 && modifiedAtMillis >= 0) ? bad
                : "queue times must be 0 or more, were " + createdAtMillis + " and " + modifiedAtMillis;
    }

    private static @Nullable String tagKeyProblem(String key) {
        if (key.isEmpty() || key.length() > MAX_QUEUE_TAG_KEY_LENGTH) {
            return "tag key must be 1 to " + MAX_QUEUE_TAG_KEY_LENGTH + " characters, was " + key.length();
        }
        return null;
    }

    // --- throwing forms --------------------------------------------------------------------------

    /**
     * @param problem what a {@code ...Problem} method returned
     * @throws IllegalArgumentException with the problem as its message, if there is one
     */
    public static void require(@Nullable String problem) {
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
    }

    /**
     * @param mailboxId a mailbox id
     * @return it
     * @throws IllegalArgumentException if it is malformed
     */
    public static String requireMailboxId(String mailboxId) {
        Objects.requireNonNull(mailboxId, "mailboxId");
        require(mailboxIdProblem(mailboxId));
        return mailboxId;
    }

    /**
     * @param namespace a namespace name
     * @return it
     * @throws IllegalArgumentException if it is malformed
     */
    public static String requireNamespace(String namespace) {
        Objects.requireNonNull(namespace, "namespace");
        require(namespaceProblem(namespace));
        return namespace;
    }

    /**
     * @param ttl a lease TTL
     * @return it
     * @throws IllegalArgumentException if it is outside {@link #MIN_TTL}..{@link #MAX_TTL}
     */
    public static Duration requireTtl(Duration ttl) {
        Objects.requireNonNull(ttl, "ttl");
        require(ttlProblem(ttl));
        return ttl;
    }

    private static @Nullable String tokenProblem(String what, String value, int maxLength) {
        if (value.isEmpty() || value.length() > maxLength) {
            return what + " must be 1 to " + maxLength + " characters, was " + value.length();
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c <= 0x20 || c >= 0x7f) {
                return what + " must be printable ASCII without spaces, was " + quote(value);
            }
        }
        return null;
    }

    private static String quote(String s) {
        return "'" + (s.length() > 200 ? s.substring(0, 200) + "...(" + s.length() + " characters)" : s) + "'";
    }

    /**
     * One piece of a backup being imported: the file's id (its hex SHA-256), where the piece starts, its size and
     * its CRC-32C as sent against the one computed from the bytes received.
     *
     * @param importId the file's id
     * @param offset   where the piece starts in the file
     * @param size     its size
     * @param crc32c   the CRC-32C the sender computed
     * @param actual   the CRC-32C of the bytes received
     * @return the problem, or null if it is fine
     */
    public static @Nullable String importChunkProblem(String importId, long offset, long size, int crc32c, int actual) {
        if (!importId.matches("[0-9a-f]{64}")) {
            return "an import id is the backup file's SHA-256, 64 lowercase hex digits, was " + quote(importId);
        }
        if (offset < 0) {
            return "an import chunk's offset must be 0 or more, was " + offset;
        }
        if (size > MAX_IMPORT_CHUNK_BYTES) {
            return "an import chunk must be at most " + MAX_IMPORT_CHUNK_BYTES + " bytes, was " + size;
        }
        if (crc32c != actual) {
            return "the import chunk at offset " + offset + " was damaged on its way: its CRC-32C is "
                    + Integer.toHexString(actual) + ", the sender's " + Integer.toHexString(crc32c);
        }
        return null;
    }
}
