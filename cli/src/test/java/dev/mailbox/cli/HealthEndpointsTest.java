package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.coordination.server.TestingCluster;
import dev.mailbox.testkit.redis.RedisServerProcess;
import java.io.IOException;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code /health/live} and {@code /health/ready} on the metrics port of real {@code mailboxctl} processes, through
 * the faults a probe exists for: a coordinator leader SIGKILLed (the survivors are live throughout and ready again
 * under a new leader), a node's Redis stopped and started (ready follows the backend, live stays), a node SIGKILLed
 * (its probes stop answering, the other node's do not) and every coordinator gone (a node's registration lapses).
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class HealthEndpointsTest {

    private static final Duration PATIENCE = Duration.ofSeconds(60);
    private static final Pattern LEADER = Pattern.compile("\"leader\":\"([^\"]+)\"");

    @TempDir
    Path dir;

    private final List<Child> children = new ArrayList<>();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private RedisServerProcess redis;

    @AfterEach
    void stopAll() {
        children.forEach(Child::kill);
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    @DisplayName("a coordinator is ready when it knows a leader; after the leader is SIGKILLed the survivors stay "
            + "live, and are ready again under a new leader, while the dead one answers nothing")
    void throughALeaderKill() throws Exception {
        Map<String, Child> members = startCoordinators(3);
        Map<String, String> metrics = metricsOf(members);
        for (String id : members.keySet()) {
            awaitStatus(metrics.get(id) + "/health/ready", 200);
            Probe live = get(metrics.get(id) + "/health/live");
            assertThat(live.status()).isEqualTo(200);
            assertThat(live.body()).contains("\"status\":\"UP\"");
        }
        String leader = leaderSeenBy(metrics.values().iterator().next());
        members.get(leader).kill();

        List<String> survivors = new ArrayList<>(members.keySet());
        survivors.remove(leader);
        TestingCluster.await(PATIENCE, () -> survivors.stream().allMatch(id -> {
            Probe ready = get(metrics.get(id) + "/health/ready");
            return ready.status() == 200 && !leader.equals(leaderIn(ready.body()));
        }), "the survivors are ready under a new leader");
        for (String id : survivors) {
            assertThat(get(metrics.get(id) + "/health/live").status()).as(id + " stayed live").isEqualTo(200);
        }
        assertThat(get(metrics.get(leader) + "/health/live").status()).as("a dead process answers no probe")
                .isEqualTo(-1);
    }

    @Test
    @DisplayName("a node is ready while registered with its backend answering: Redis stopped makes it not ready "
            + "(and live), Redis back makes it ready; a SIGKILLed node answers nothing while the other stays ready; "
            + "with every coordinator gone its registration lapses")
    void throughANodeKillAndABackendLoss() throws Exception {
        redis = RedisServerProcess.start();
        Map<String, Child> members = startCoordinators(1);
        String coordinator = "127.0.0.1:" + controlPlanes.get("c1");
        int metricsA = freePort();
        int metricsB = freePort();
        Child a = start("node-a.log", "node", "start", "--id", "node-a", "--listen", "127.0.0.1:" + freePort(),
                "--coordinator", coordinator, "--backend", redis.uri(), "--metrics", "127.0.0.1:" + metricsA);
        Child b = start("node-b.log", "node", "start", "--id", "node-b", "--listen", "127.0.0.1:" + freePort(),
                "--coordinator", coordinator, "--backend", redis.uri(), "--metrics", "127.0.0.1:" + metricsB);
        String nodeA = "http://127.0.0.1:" + metricsA;
        String nodeB = "http://127.0.0.1:" + metricsB;
        awaitStatus(nodeA + "/health/ready", 200);
        awaitStatus(nodeB + "/health/ready", 200);

        redis.kill();
        Probe down = awaitStatus(nodeA + "/health/ready", 503);
        assertThat(down.body()).contains("\"status\":\"DOWN\"").contains("\"backend\"").doesNotContain("answers");
        assertThat(get(nodeA + "/health/live").status()).as("a lost backend is not a reason to restart").isEqualTo(200);
        redis.restart();
        awaitStatus(nodeA + "/health/ready", 200);
        awaitStatus(nodeB + "/health/ready", 200);

        a.kill();
        assertThat(get(nodeA + "/health/ready").status()).as("a dead node answers no probe").isEqualTo(-1);
        assertThat(get(nodeB + "/health/ready").status()).as("the other node stays ready").isEqualTo(200);

        members.get("c1").kill();
        Probe lapsed = awaitStatus(nodeB + "/health/ready", 503);
        assertThat(lapsed.body()).contains("\"registration\":\"missing or lapsed\"");
        assertThat(get(nodeB + "/health/live").status()).isEqualTo(200);
        assertThat(b.output()).contains("health " + nodeB + "/health/{live,ready}");
    }

    // ---- processes

    private final Map<String, Integer> controlPlanes = new LinkedHashMap<>();
    private final Map<String, Integer> metricsPorts = new LinkedHashMap<>();

    private Map<String, Child> startCoordinators(int size) throws IOException {
        Map<String, Integer> raft = new LinkedHashMap<>();
        for (int i = 1; i <= size; i++) {
            raft.put("c" + i, freePort());
            controlPlanes.put("c" + i, freePort());
            metricsPorts.put("c" + i, freePort());
        }
        Map<String, Child> members = new LinkedHashMap<>();
        for (String id : raft.keySet()) {
            List<String> args = new ArrayList<>(List.of("coordinator", "start", "--id", id, "--data-dir",
                    dir.resolve(id).toString(), "--raft", "127.0.0.1:" + raft.get(id), "--control-plane",
                    "127.0.0.1:" + controlPlanes.get(id), "--metrics", "127.0.0.1:" + metricsPorts.get(id)));
            for (String peer : raft.keySet()) {
                if (!peer.equals(id)) {
                    args.addAll(List.of("--peer", peer + "=127.0.0.1:" + raft.get(peer)));
                }
            }
            members.put(id, start(id + ".log", args.toArray(String[]::new)));
        }
        for (Child c : members.values()) {
            c.awaitOutput("health http://", PATIENCE);
        }
        return members;
    }

    private Map<String, String> metricsOf(Map<String, Child> members) {
        Map<String, String> urls = new LinkedHashMap<>();
        members.keySet().forEach(id -> urls.put(id, "http://127.0.0.1:" + metricsPorts.get(id)));
        return urls;
    }

    private Child start(String log, String... args) throws IOException {
        Child c = Child.start(dir.resolve(log), args);
        children.add(c);
        return c;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    // ---- probes

    /** A probe's answer: status -1 when nothing answered (connection refused). */
    private record Probe(int status, String body) {
    }

    private Probe get(String url) {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5))
                    .GET().build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.headers().firstValue("Content-Type")).hasValue("application/json");
            assertThat(r.headers().firstValue("Cache-Control")).hasValue("no-store");
            return new Probe(r.statusCode(), r.body());
        } catch (ConnectException e) {
            return new Probe(-1, "");
        } catch (IOException e) {
            return new Probe(-1, String.valueOf(e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private Probe awaitStatus(String url, int status) throws Exception {
        Probe[] last = {null};
        TestingCluster.await(PATIENCE, () -> (last[0] = get(url)).status() == status,
                url + " answers " + status);
        return last[0];
    }

    private String leaderSeenBy(String metrics) {
        String leader = leaderIn(get(metrics + "/health/ready").body());
        assertThat(leader).as("a ready coordinator names the leader").isNotNull();
        return leader;
    }

    private static String leaderIn(String body) {
        Matcher m = LEADER.matcher(body);
        return m.find() && !m.group(1).equals("none known") ? m.group(1) : null;
    }
}
