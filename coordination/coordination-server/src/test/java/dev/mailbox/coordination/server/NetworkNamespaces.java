package dev.mailbox.coordination.server;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A private network for a test, made with iproute2 (needs root): a bridge in this namespace with address
 * {@code 10.X.0.1/24}, and one network namespace per node, joined to the bridge by a veth pair, the node
 * at {@code 10.X.0.(10 + i)}. Traffic goes only to these addresses. Faults, all undone by {@link #heal}:
 * <ul>
 *   <li>{@link #isolate}: the node's link goes down, nothing in or out;</li>
 *   <li>{@link #deafen}: the node sends but receives nothing from the bridge (policy rule: packets that
 *       arrive on its link are blackholed);</li>
 *   <li>{@link #mute}: the node receives but sends nothing to the subnet (its own packets are blackholed);</li>
 *   <li>{@link #cutFromPeers}: the node and the other nodes hear nothing from each other, while the bridge's
 *       address (the test's clients) still reaches it both ways.</li>
 * </ul>
 * {@link #close} deletes the namespaces and the bridge.
 */
final class NetworkNamespaces implements AutoCloseable {

    private final String prefix;
    private final int subnet;
    private final Map<String, Integer> nodes = new LinkedHashMap<>();
    private final List<String> namespaces = new ArrayList<>();

    private NetworkNamespaces(String prefix, int subnet) {
        this.prefix = prefix;
        this.subnet = subnet;
    }

    /** @return why namespaces cannot be made here, or empty when they can */
    static Optional<String> unavailable() {
        if (!"root".equals(System.getProperty("user.name"))) {
            return Optional.of("network namespaces need root (CI runs as root); running as " + System.getProperty("user.name"));
        }
        String probe = "mbxprobe" + ThreadLocalRandom.current().nextInt(100_000);
        try {
            run("ip", "netns", "add", probe);
            run("ip", "netns", "del", probe);
            return Optional.empty();
        } catch (IllegalStateException | IOException e) {
            return Optional.of("cannot make a network namespace with iproute2: " + e.getMessage());
        }
    }

    /**
     * @param ids the nodes, each in its own namespace
     * @return the network, up
     */
    static NetworkNamespaces create(List<String> ids) throws IOException {
        int tag = ThreadLocalRandom.current().nextInt(10_000, 100_000);
        NetworkNamespaces net = new NetworkNamespaces("mbx" + tag, 16 + tag % 200);
        try {
            net.build(ids);
        } catch (IOException | RuntimeException e) {
            net.close();
            throw e;
        }
        return net;
    }

    private void build(List<String> ids) throws IOException {
        run("ip", "link", "add", bridge(), "type", "bridge");
        run("ip", "addr", "add", "10." + subnet + ".0.1/24", "dev", bridge());
        run("ip", "link", "set", bridge(), "up");
        for (int i = 0; i < ids.size(); i++) {
            String id = ids.get(i);
            String ns = namespace(id);
            run("ip", "netns", "add", ns);
            namespaces.add(ns);
            nodes.put(id, 10 + i);
            run("ip", "link", "add", hostSide(id), "type", "veth", "peer", "name", "eth0", "netns", ns);
            run("ip", "link", "set", hostSide(id), "master", bridge(), "up");
            run("ip", "-n", ns, "addr", "add", address(id) + "/24", "dev", "eth0");
            run("ip", "-n", ns, "link", "set", "eth0", "up");
            run("ip", "-n", ns, "link", "set", "lo", "up");
            // the local table's rule comes first (priority 0) and would deliver what deafen() means to drop:
            // move it behind the fault rules
            run("ip", "-n", ns, "rule", "add", "priority", "1000", "lookup", "local");
            run("ip", "-n", ns, "rule", "del", "priority", "0");
        }
    }

    /** @return the bridge's address, where this JVM (the test's clients) sits on the network */
    String bridgeAddress() {
        return "10." + subnet + ".0.1";
    }

    /** @return the node's address inside its namespace */
    String address(String id) {
        return "10." + subnet + ".0." + nodes.get(id);
    }

    /** @return the command prefix that runs a program inside the node's namespace */
    List<String> exec(String id) {
        return List.of("ip", "netns", "exec", namespace(id));
    }

    /** Cuts the node off entirely. */
    void isolate(String id) throws IOException {
        run("ip", "link", "set", hostSide(id), "down");
    }

    /** The node hears nothing from the network, but what it sends still arrives. */
    void deafen(String id) throws IOException {
        run("ip", "-n", namespace(id), "rule", "add", "iif", "eth0", "blackhole", "priority", "100");
    }

    /** The node hears everything, but nothing it sends to the subnet leaves. */
    void mute(String id) throws IOException {
        run("ip", "-n", namespace(id), "rule", "add", "to", "10." + subnet + ".0.0/24", "iif", "lo", "blackhole",
                "priority", "101");
    }

    /** The node and the other nodes no longer hear each other; the test's clients still reach the node. */
    void cutFromPeers(String id) throws IOException {
        for (String other : nodes.keySet()) {
            if (!other.equals(id)) {
                run("ip", "-n", namespace(id), "rule", "add", "from", address(other), "iif", "eth0", "blackhole",
                        "priority", "102");
                run("ip", "-n", namespace(id), "rule", "add", "to", address(other), "iif", "lo", "blackhole",
                        "priority", "102");
            }
        }
    }

    /** Undoes every fault on the node. */
    void heal(String id) throws IOException {
        run("ip", "link", "set", hostSide(id), "up");
        for (String priority : List.of("100", "101", "102")) {
            while (true) { // cutFromPeers puts several rules at one priority
                try {
                    run("ip", "-n", namespace(id), "rule", "del", "priority", priority);
                } catch (IllegalStateException absent) {
                    break; // none (left) of that fault
                }
            }
        }
    }

    @Override
    public void close() {
        for (String ns : namespaces) {
            try {
                run("ip", "netns", "del", ns); // takes its end of the veth pair, and so the pair, with it
            } catch (IOException | RuntimeException e) {
                System.err.println("could not delete network namespace " + ns + ": " + e.getMessage());
            }
        }
        try {
            run("ip", "link", "del", bridge());
        } catch (IOException | RuntimeException e) {
            System.err.println("could not delete bridge " + bridge() + ": " + e.getMessage());
        }
    }

    private String bridge() {
        return prefix + "br";
    }

    private String namespace(String id) {
        return prefix + "-" + id;
    }

    private String hostSide(String id) {
        return prefix + "v" + nodes.get(id); // interface names are at most 15 characters
    }

    private static void run(String... command) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + ": timed out");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running " + String.join(" ", command), e);
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (p.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", command) + ": exit " + p.exitValue() + ": " + out);
        }
    }
}
