package dev.mailbox.coordination.server.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Who may do what: bearer tokens (kept as salted SHA-256 hashes) and grants of roles over namespaces,
 * each read from a file and read again when the file changes (checked at most once a second). A file
 * that stops parsing, or that holds no entry at all (emptied: it would lock every principal out), is refused
 * at start, and while running keeps the last good version in force and says why in the log.
 *
 * <p>Tokens file, one line per token: {@code principal:salt-hex:sha256-hex(salt || token)}. Rules file, one
 * grant per line: {@code principal role namespace[,namespace...]}, where a namespace is a name, a prefix
 * ending in {@code *}, or {@code *} for all. Blank lines and {@code #} comments are ignored.
 */
public final class AccessPolicy {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(AccessPolicy.class);
    private static final long RECHECK_NANOS = 1_000_000_000L;

    /** What a call needs. */
    public enum Permission {
        /** Namespaces, policies, revoke/reclaim, membership, backups. */
        ADMIN,
        /** Register and heartbeat as a node; vouch for the callers of calls it forwards. */
        NODE,
        /** Acquire, renew and release leases (as the runner ids it owns). */
        LEASE,
        /** Lists, gets and watches. */
        READ,
        /** Send to a mailbox. */
        SEND,
        /** Receive, acknowledge, nack, extend. */
        RECEIVE,
        /** Count a mailbox and read its capabilities. */
        COUNT,
        /** Purge a mailbox. */
        PURGE
    }

    /** The roles a rule can grant, and what each holds. */
    static final Map<String, Set<Permission>> ROLES = Map.of(
            "admin", EnumSet.allOf(Permission.class),
            "node", EnumSet.of(Permission.NODE, Permission.LEASE, Permission.READ, Permission.COUNT),
            "runner", EnumSet.of(Permission.LEASE, Permission.SEND, Permission.RECEIVE, Permission.COUNT),
            "client", EnumSet.of(Permission.SEND, Permission.RECEIVE, Permission.COUNT, Permission.PURGE),
            "reader", EnumSet.of(Permission.READ, Permission.COUNT));

    private record Token(String principal, byte[] salt, byte[] hash) {
    }

    private record Grant(String principal, Set<Permission> permissions, List<String> namespaces) {
        boolean covers(String namespace) {
            for (String pattern : namespaces) {
                if (pattern.equals("*") || pattern.equals(namespace)
                        || (pattern.endsWith("*") && namespace.startsWith(pattern.substring(0, pattern.length() - 1)))) {
                    return true;
                }
            }
            return false;
        }
    }

    private final @Nullable Path tokensFile;
    private final Path rulesFile;
    private volatile List<Token> tokens = List.of();
    private volatile List<Grant> grants = List.of();
    private @Nullable FileTime tokensSeen;
    private @Nullable FileTime rulesSeen;
    private volatile long checkedAt;

    /**
     * @param tokensFile the tokens, or null when principals come from client certificates only
     * @param rulesFile  the grants
     * @throws IllegalArgumentException if a file does not parse, naming the line
     */
    public AccessPolicy(@Nullable Path tokensFile, Path rulesFile) {
        this(tokensFile, rulesFile, System::nanoTime);
    }

    /**
     * @param nanos the clock that paces the checks for changed files (tests step it)
     */
    AccessPolicy(@Nullable Path tokensFile, Path rulesFile, java.util.function.LongSupplier nanos) {
        this.tokensFile = tokensFile;
        this.rulesFile = rulesFile;
        this.nanos = nanos;
        reload(true);
    }

    private final java.util.function.LongSupplier nanos;

    /**
     * @param principal who holds the token
     * @param token     the token
     * @return the tokens-file line for it, with a fresh salt
     */
    public static String tokenLine(String principal, String token) {
        byte[] salt = new byte[16];
        new java.security.SecureRandom().nextBytes(salt);
        return principal + ":" + HexFormat.of().formatHex(salt) + ":" + HexFormat.of().formatHex(hash(salt, token));
    }

    /**
     * @param bearer a presented token
     * @return the principal it belongs to, or null if it is none of the known tokens
     */
    public @Nullable String principalOfToken(String bearer) {
        maybeReload();
        String found = null;
        for (Token t : tokens) {
            // every token is compared, in constant time, so timing tells nothing about which one matched
            if (MessageDigest.isEqual(t.hash(), hash(t.salt(), bearer)) && found == null) {
                found = t.principal();
            }
        }
        return found;
    }

    /**
     * @param principal an authenticated principal
     * @param needed    what the call needs
     * @param namespace the namespace it acts on, or {@code *} for all of them
     * @return whether a grant allows it
     */
    public boolean allows(String principal, Permission needed, String namespace) {
        maybeReload();
        for (Grant g : grants) {
            if (g.principal().equals(principal) && g.permissions().contains(needed) && g.covers(namespace)) {
                return true;
            }
        }
        return false;
    }

    private void maybeReload() {
        long now = nanos.getAsLong();
        if (now - checkedAt > RECHECK_NANOS) {
            synchronized (this) {
                if (now - checkedAt > RECHECK_NANOS) {
                    checkedAt = now;
                    try {
                        reload(false);
                    } catch (RuntimeException e) {
                        LOG.error("access files not reloaded, the previous ones stay in force: {}", e.getMessage());
                    }
                }
            }
        }
    }

    private synchronized void reload(boolean first) {
        FileTime r = modified(rulesFile);
        if (first || !r.equals(rulesSeen)) {
            grants = parseRules(read(rulesFile));
            rulesSeen = r;
            if (!first) {
                LOG.info("access rules reloaded from {} ({} grants)", rulesFile, grants.size());
            }
        }
        if (tokensFile != null) {
            FileTime t = modified(tokensFile);
            if (first || !t.equals(tokensSeen)) {
                tokens = parseTokens(read(tokensFile));
                tokensSeen = t;
                if (!first) {
                    LOG.info("tokens reloaded from {} ({} tokens)", tokensFile, tokens.size());
                }
            }
        }
        checkedAt = nanos.getAsLong();
    }

    private List<Grant> parseRules(List<String> lines) {
        List<Grant> out = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = strip(lines.get(i));
            if (line.isEmpty()) {
                continue;
            }
            String[] parts = line.split("\\s+", 3);
            if (parts.length != 3) {
                throw new IllegalArgumentException(rulesFile + " line " + (i + 1) + ": expected 'principal role "
                        + "namespace[,namespace...]', was '" + line + "'");
            }
            Set<Permission> role = ROLES.get(parts[1].toLowerCase(Locale.ROOT));
            if (role == null) {
                throw new IllegalArgumentException(rulesFile + " line " + (i + 1) + ": unknown role '" + parts[1]
                        + "'; roles are " + new java.util.TreeSet<>(ROLES.keySet()));
            }
            List<String> namespaces = new ArrayList<>();
            for (String ns : parts[2].split(",")) {
                if (!ns.isBlank()) {
                    namespaces.add(ns.trim());
                }
            }
            out.add(new Grant(parts[0], role, List.copyOf(namespaces)));
        }
        if (out.isEmpty()) {
            // a file emptied by mistake (or caught half-written by an editor) would refuse every principal, the
            // nodes and the admins included: refused like any file that does not parse
            throw new IllegalArgumentException(rulesFile + " holds no grants (it is empty or all comments), which "
                    + "would refuse every caller, nodes and admins included; give at least one 'principal role "
                    + "namespaces' line");
        }
        return List.copyOf(out);
    }

    private List<Token> parseTokens(List<String> lines) {
        List<Token> out = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = strip(lines.get(i));
            if (line.isEmpty()) {
                continue;
            }
            String[] parts = line.split(":");
            try {
                if (parts.length != 3) {
                    throw new IllegalArgumentException("expected principal:salt:hash");
                }
                out.add(new Token(parts[0], HexFormat.of().parseHex(parts[1]), HexFormat.of().parseHex(parts[2])));
            } catch (IllegalArgumentException e) {
                // the line is not echoed: it may hold a mistyped token
                throw new IllegalArgumentException(tokensFile + " line " + (i + 1) + ": " + e.getMessage()
                        + " (make lines with: mailboxctl security token PRINCIPAL)");
            }
        }
        if (out.isEmpty()) {
            throw new IllegalArgumentException(tokensFile + " holds no tokens (it is empty or all comments), which "
                    + "would refuse every caller that presents a token, nodes included; make lines with: mailboxctl "
                    + "security token PRINCIPAL (leave the tokens file out if every caller presents a certificate)");
        }
        return List.copyOf(out);
    }

    private static String strip(String line) {
        int hash = line.indexOf('#');
        return (hash >= 0 ? line.substring(0, hash) : line).trim();
    }

    private static List<String> read(Path file) {
        try {
            return Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    private static FileTime modified(Path file) {
        try {
            return Files.getLastModifiedTime(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    private static byte[] hash(byte[] salt, String token) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(salt);
            return sha.digest(token.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
