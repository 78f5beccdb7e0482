package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mailbox.coordination.TlsFiles;
import dev.mailbox.coordination.internal.Tls;
import dev.mailbox.testkit.redis.RedisServerProcess;
import dev.mailbox.testkit.tls.TestCertificates;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The deployment files cannot rot: {@code deploy/kubernetes/*.yaml} and {@code deploy/systemd/*} are parsed, and the
 * very commands they run, with the very flags, are started on this machine (three coordinators and two nodes
 * each), with TLS, tokens and access rules as the files ask for. {@link LoopbackLauncher} stands in for
 * {@code /opt/mailboxctl/bin/mailboxctl} and only moves addresses and paths onto loopback, so a flag or config
 * key mailboxctl does not know, a wrong path or a port that does not match fails here. The Kubernetes cluster also
 * answers the probes' paths and serves every metric the Grafana dashboard ({@code ops/grafana}) queries.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
class DeploymentManifestsTest {

    static final Path ROOT = AlertRulesTest.repositoryRoot();
    static final Path KUBERNETES = ROOT.resolve("deploy/kubernetes");
    static final Path SYSTEMD = ROOT.resolve("deploy/systemd");
    static final Path DASHBOARD = ROOT.resolve("ops/grafana/mailbox-dashboard.json");
    static final String PROGRAM = "/opt/mailboxctl/bin/mailboxctl";

    @TempDir
    static Path work;
    static Path etc;
    static Path launcher;
    static TestCertificates ca;
    /** The systemd nodes: node.env's example and a second one. */
    static final List<String> SYSTEMD_NODES = List.of("node-1", "node-2");
    static RedisServerProcess redis;
    static String opsToken;
    static List<Map<String, Object>> kubernetes;
    static Cluster pods;

    @BeforeAll
    static void start() throws Exception {
        kubernetes = new ArrayList<>();
        try (Stream<Path> files = Files.list(KUBERNETES)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
                kubernetes.addAll(yamlDocuments(f));
            }
        }
        // the Secrets' and /etc/mailbox's files: one CA; the coordinators' certificate; each node's own, whose
        // common name is its node id (its principal); tokens; access rules granting each node the node role
        etc = Files.createDirectories(work.resolve("etc"));
        ca = TestCertificates.create(work.resolve("ca"), "deploy");
        TestCertificates.Issued coordinator = ca.issue("mailbox-coordinator");
        copy(coordinator, ca, etc.resolve("tls"), "tls.crt", "tls.key", "ca.crt");
        copy(coordinator, ca, etc.resolve("tls"), "coordinator.pem", "coordinator-key.pem", "ca.pem");
        StringBuilder access = new StringBuilder("ops  admin  *\n");
        Map<String, Object> nodes = resource("StatefulSet", "mailbox-node");
        for (int i = 0; i < (Integer) path(nodes, "spec.replicas"); i++) {
            String pod = name(nodes) + "-" + i;
            copy(ca.issue(pod), ca, etc.resolve("node-tls"), pod + ".crt", pod + ".key", "ca.crt");
            access.append(pod).append("  node  *\n");
        }
        for (String node : SYSTEMD_NODES) {
            access.append(node).append("  node  *\n");
        }
        Path auth = Files.createDirectories(etc.resolve("auth"));
        opsToken = token("ops", auth.resolve("tokens"));
        Files.writeString(auth.resolve("access"), access);
        redis = RedisServerProcess.start();
        launcher = work.resolve("bin/mailboxctl");
        Files.createDirectories(launcher.getParent());
        Files.writeString(launcher, "#!/bin/sh\nexec '" + Path.of(System.getProperty("java.home"), "bin", "java")
                + "' $JAVA_OPTS -Xmx256m -XX:TieredStopAtLevel=1 -cp '" + System.getProperty("java.class.path") + "' "
                + LoopbackLauncher.class.getName() + " \"$LOOPBACK_MAP\" \"$@\"\n");
        assertThat(launcher.toFile().setExecutable(true)).isTrue();
        pods = startKubernetes();
    }

    @AfterAll
    static void stop() {
        if (pods != null) {
            pods.close();
        }
        if (redis != null) {
            redis.close();
        }
    }

    // ---- Kubernetes ---------------------------------------------------------------------------------------------

    @Test
    @DisplayName("Kubernetes: three coordinators with stable ids elect a leader, two nodes register, and a message goes through")
    void kubernetesClusterWorks() throws Exception {
        Map<String, Object> sts = resource("StatefulSet", "mailbox-coordinator");
        assertThat(path(sts, "spec.replicas")).isEqualTo(3);
        assertThat(path(sts, "spec.podManagementPolicy")).isEqualTo("Parallel");
        assertThat(String.join(" ", args(container(sts)))).contains("--id=$(POD_NAME)")
                .contains("--initial-cluster-state=$(INITIAL_CLUSTER_STATE)");
        assertThat(path(resource("ConfigMap", "mailbox-coordinator"), "data.initial-cluster-state")).isEqualTo("new");
        assertThat(path(resource("StatefulSet", "mailbox-node"), "spec.replicas")).isEqualTo(2);
        pods.expectHealthy(List.of("mailbox-coordinator-0", "mailbox-coordinator-1", "mailbox-coordinator-2"));
    }

    @Test
    @DisplayName("Kubernetes: Services, the PodDisruptionBudgets and the Secret mounts fit the pods")
    void kubernetesWiring() {
        for (Map<String, Object> service : resources("Service")) {
            Map<String, Object> selector = map(path(service, "spec.selector"));
            List<Map<String, Object>> selected = workloads().stream()
                    .filter(w -> map(path(w, "spec.template.metadata.labels")).entrySet().containsAll(selector.entrySet()))
                    .toList();
            assertThat(selected).as("workloads of Service " + name(service)).hasSize(1);
            Set<String> portNames = ports(container(selected.get(0))).keySet();
            for (Map<String, Object> port : list(path(service, "spec.ports"))) {
                assertThat(portNames).as("Service " + name(service) + " targetPort").contains((String) port.get("targetPort"));
            }
        }
        for (Map<String, Object> w : workloads()) {
            Map<String, Object> labels = map(path(w, "spec.template.metadata.labels"));
            List<Map<String, Object>> budgets = resources("PodDisruptionBudget").stream()
                    .filter(b -> labels.entrySet().containsAll(map(path(b, "spec.selector.matchLabels")).entrySet())).toList();
            assertThat(budgets).as("PodDisruptionBudget of " + name(w)).hasSize(1);
            assertThat(path(budgets.get(0), "spec.maxUnavailable")).isEqualTo(1);
            // every /etc/mailbox file the command names is in a volume mounted from a Secret
            Map<String, Object> c = container(w);
            Map<String, String> secretMounts = new HashMap<>();
            for (Map<String, Object> m : list(c.get("volumeMounts"))) {
                Map<String, Object> volume = list(path(w, "spec.template.spec.volumes")).stream()
                        .filter(v -> v.get("name").equals(m.get("name"))).findFirst().orElse(Map.of());
                if (volume.containsKey("secret")) {
                    secretMounts.put((String) m.get("mountPath"), (String) path(volume, "secret.secretName"));
                }
            }
            Matcher files = Pattern.compile("/etc/mailbox/[\\w./-]+").matcher(String.join(" ", args(c)));
            while (files.find()) {
                String file = files.group();
                assertThat(secretMounts.keySet()).as(file + " in " + name(w) + " comes from a Secret")
                        .anyMatch(mount -> file.startsWith(mount + "/"));
            }
        }
    }

    @Test
    @DisplayName("Kubernetes: each probe points at the metrics port, which answers its path")
    void kubernetesProbes() throws Exception {
        HttpClient https = pods.https();
        for (Map<String, Object> w : workloads()) {
            Map<String, Object> c = container(w);
            int metricsPort = ports(c).get("metrics");
            assertThat(String.join(" ", args(c))).contains("--metrics=0.0.0.0:" + metricsPort);
            for (String probe : List.of("startupProbe", "livenessProbe", "readinessProbe")) {
                Map<String, Object> get = map(path(c, probe + ".httpGet"));
                assertThat(get).as(name(w) + " " + probe).isNotEmpty();
                assertThat(get.get("port")).as(name(w) + " " + probe + " port").isEqualTo("metrics");
                assertThat(get.get("scheme")).as("the metrics endpoint serves HTTPS with the server's certificate")
                        .isEqualTo("HTTPS");
                for (Proc p : pods.of(name(w))) {
                    String base = "https://127.0.0.1:" + p.port(metricsPort);
                    assertThat(status(https, base + "/metrics")).as(p.name + " /metrics on the probes' port").isEqualTo(200);
                    assertThat(status(https, base + get.get("path"))).as(p.name + " " + probe + " " + get.get("path"))
                            .isEqualTo(200);
                }
            }
        }
    }

    @Test
    @DisplayName("Grafana: every metric the dashboard queries is on a running cluster's /metrics, with the labels it uses")
    void dashboardMetricsExist() throws Exception {
        JsonNode dashboard = new ObjectMapper().readTree(DASHBOARD.toFile());
        assertThat(dashboard.path("uid").asText()).isNotBlank();
        List<String> queries = new ArrayList<>();
        for (JsonNode panel : dashboard.path("panels")) {
            if (panel.path("type").asText().equals("row")) {
                continue;
            }
            assertThat(panel.path("gridPos").path("w").asInt()).as(panel.path("title").asText()).isPositive();
            assertThat(panel.path("targets").size()).as(panel.path("title") + " queries something").isPositive();
            panel.path("targets").forEach(t -> queries.add(t.path("expr").asText()));
        }
        for (JsonNode variable : dashboard.path("templating").path("list")) {
            Matcher lv = Pattern.compile("label_values\\((\\w+), *(\\w+)\\)").matcher(variable.path("definition").asText());
            if (lv.find()) {
                queries.add(lv.group(1));
            }
        }
        // traffic first, so that the per-method meters exist
        pods.sendThroughNodes();
        Map<String, Set<String>> labelsOf = new HashMap<>();
        for (Proc p : pods.procs) {
            String text = pods.https().send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + p.port(9100) + "/metrics"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()).body();
            PrometheusText.parse(text).series().keySet().forEach(series -> {
                String name = series.contains("{") ? series.substring(0, series.indexOf('{')) : series;
                Set<String> labels = labelsOf.computeIfAbsent(name, k -> new TreeSet<>());
                Matcher l = Pattern.compile("(\\w+)=\"").matcher(series);
                while (l.find()) {
                    labels.add(l.group(1));
                }
            });
        }
        Pattern selector = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)\\{([^}]*)}");
        Pattern grouping = Pattern.compile("\\b(?:by|without)\\s*\\(([^)]*)\\)");
        Set<String> problems = new TreeSet<>();
        for (String q : queries) {
            Set<String> names = AlertRulesTest.metricNames(q);
            assertThat(names).as("metrics in " + q).isNotEmpty();
            Set<String> available = new TreeSet<>(Set.of("job", "instance", "le"));
            for (String n : names) {
                if (!labelsOf.containsKey(n)) {
                    problems.add("no metric " + n + " (in " + q + ")");
                } else {
                    available.addAll(labelsOf.get(n));
                }
            }
            Matcher s = selector.matcher(q);
            while (s.find()) {
                for (String matcher : s.group(2).split(",")) {
                    String label = matcher.trim().split("[=!~]")[0].trim();
                    if (!label.isEmpty() && !label.equals("job") && labelsOf.containsKey(s.group(1))
                            && !labelsOf.get(s.group(1)).contains(label)) {
                        problems.add(s.group(1) + " has no label " + label + " (in " + q + ")");
                    }
                }
            }
            Matcher g = grouping.matcher(q);
            while (g.find()) {
                for (String label : g.group(1).split(",")) {
                    if (!label.isBlank() && !available.contains(label.trim())) {
                        problems.add("no label " + label.trim() + " on " + names + " (in " + q + ")");
                    }
                }
            }
        }
        assertThat(problems).as("what the dashboard queries that the cluster does not export").isEmpty();
    }

    private static Cluster startKubernetes() throws Exception {
        Map<String, Object> sts = resource("StatefulSet", "mailbox-coordinator");
        Map<String, Object> nodeSet = resource("StatefulSet", "mailbox-node");
        Cluster cluster = new Cluster("k8s");
        List<Proc> coordinators = new ArrayList<>();
        int replicas = (Integer) path(sts, "spec.replicas");
        for (int i = 0; i < replicas; i++) {
            String pod = name(sts) + "-" + i; // a StatefulSet's pod names
            coordinators.add(cluster.pod(pod, "10.244.0." + (10 + i), sts));
        }
        List<Proc> nodes = new ArrayList<>();
        for (int i = 0; i < (Integer) path(nodeSet, "spec.replicas"); i++) {
            nodes.add(cluster.pod(name(nodeSet) + "-" + i, "10.244.1." + (20 + i), nodeSet));
        }
        cluster.address("redis:6379", redis.host() + ":" + redis.port());
        cluster.controlPlanePort = 7100;
        cluster.start(coordinators, "coordinator %s of cluster");
        cluster.start(nodes, "node %s serving at");
        return cluster;
    }

    // ---- systemd ------------------------------------------------------------------------------------------------

    @Test
    @DisplayName("systemd: the units' ExecStart with the example config files runs three coordinators and two nodes")
    void systemdUnits() throws Exception {
        Map<String, String> coordinatorUnit = unit(SYSTEMD.resolve("mailbox-coordinator.service"));
        Map<String, String> nodeUnit = unit(SYSTEMD.resolve("mailbox-node.service"));
        assertThat(coordinatorUnit.get("Restart")).as("a coordinator exits 70 after a fatal error and expects a restart")
                .isIn("always", "on-failure");
        assertThat(coordinatorUnit.get("ExecStart")).startsWith(PROGRAM + " coordinator start");
        assertThat(nodeUnit.get("ExecStart")).startsWith(PROGRAM + " node start");
        Properties coordinatorConfig = properties(SYSTEMD.resolve("coordinator.properties"));
        Properties nodeConfig = properties(SYSTEMD.resolve("node.properties"));
        assertKnownKeys(coordinatorConfig, "coordinator", "start");
        assertKnownKeys(nodeConfig, "node", "start");
        // the files are /etc/mailbox's
        Files.copy(SYSTEMD.resolve("coordinator.properties"), etc.resolve("coordinator.properties"));
        Files.copy(SYSTEMD.resolve("node.properties"), etc.resolve("node.properties"));

        Cluster cluster = new Cluster("systemd");
        try {
            Map<String, String> example = envFile(SYSTEMD.resolve("coordinator.env"));
            assertThat(example).containsKeys("MAILBOX_ID", "MAILBOX_ADDRESS");
            List<Proc> coordinators = new ArrayList<>();
            for (String peer : coordinatorConfig.getProperty("peers").split(",")) {
                String[] idAddress = peer.trim().split("=", 2);
                String host = idAddress[1].substring(0, idAddress[1].lastIndexOf(':'));
                coordinators.add(cluster.unit(idAddress[0], coordinatorUnit,
                        Map.of("MAILBOX_ID", idAddress[0], "MAILBOX_ADDRESS", host), List.of(7000, 7100, 9100)));
            }
            assertThat(coordinators).as("members in peers=").hasSize(3);
            assertThat(coordinators.get(0).name).isEqualTo(example.get("MAILBOX_ID"));
            Map<String, String> nodeExample = envFile(SYSTEMD.resolve("node.env"));
            assertThat(nodeExample.get("MAILBOX_ID")).isEqualTo(SYSTEMD_NODES.get(0));
            List<Proc> nodes = List.of(
                    cluster.unit(SYSTEMD_NODES.get(0), nodeUnit, nodeExample, List.of(9000, 9100)),
                    cluster.unit(SYSTEMD_NODES.get(1), nodeUnit, Map.of("MAILBOX_ID", SYSTEMD_NODES.get(1),
                            "MAILBOX_ADDRESS", "10.0.0.12"), List.of(9000, 9100)));
            for (Proc n : nodes) {
                // each host's own /etc/mailbox: the shared files, and its certificate, issued for its node id
                Path own = work.resolve("etc-" + n.name);
                try (Stream<Path> shared = Files.walk(etc)) {
                    for (Path f : shared.toList()) {
                        Path to = own.resolve(etc.relativize(f).toString());
                        if (Files.isDirectory(f)) {
                            Files.createDirectories(to);
                        } else {
                            Files.copy(f, to);
                        }
                    }
                }
                copy(ca.issue(n.name), ca, own.resolve("tls"), "node.pem", "node-key.pem", "ca.pem");
                cluster.map.setProperty("etc." + n.name, own.toString());
            }
            String backend = nodeConfig.getProperty("backend");
            Matcher redisAddress = Pattern.compile("//([^/:]+:\\d+)").matcher(backend);
            assertThat(redisAddress.find()).as(backend).isTrue();
            cluster.address(redisAddress.group(1), redis.host() + ":" + redis.port());
            cluster.controlPlanePort = 7100;
            cluster.start(coordinators, "coordinator %s of cluster");
            cluster.start(nodes, "node %s serving at");
            cluster.expectHealthy(List.of("n1", "n2", "n3"));
        } finally {
            cluster.close();
        }
    }

    /** Every key of an example config file is a flag of the command (peers and sqs-access-keys: repeatable ones). */
    private static void assertKnownKeys(Properties config, String... command) {
        picocli.CommandLine cli = MailboxCtl.commandLine();
        for (String c : command) {
            cli = cli.getSubcommands().get(c);
        }
        Set<String> known = cli.getCommandSpec().options().stream().map(o -> o.longestName().replaceFirst("^--", ""))
                .collect(Collectors.toCollection(TreeSet::new));
        known.addAll(List.of("peers", "sqs-access-keys"));
        assertThat(config.stringPropertyNames()).as("keys of `mailboxctl " + String.join(" ", command) + " --config`")
                .isSubsetOf(known);
    }

    // ---- starting processes -------------------------------------------------------------------------------------

    /** A process started from a manifest, its output and the loopback ports its addresses were given. */
    static final class Proc {
        final String name;
        final Map<Integer, Integer> ports = new LinkedHashMap<>();
        final List<String> command;
        final Map<String, String> env;
        final List<String> output = Collections.synchronizedList(new ArrayList<>());
        Process process;

        Proc(String name, List<String> command, Map<String, String> env) {
            this.name = name;
            this.command = command;
            this.env = env;
        }

        int port(int declared) {
            Integer p = ports.get(declared);
            if (p == null) {
                throw new AssertionError(name + " has no port " + declared + ": " + ports);
            }
            return p;
        }
    }

    static final class Cluster implements AutoCloseable {
        final String label;
        final List<Proc> procs = new ArrayList<>();
        final Properties map = new Properties();
        int controlPlanePort;
        private HttpClient https;

        Cluster(String label) throws IOException {
            this.label = label;
            map.setProperty("etc", etc.toString());
            map.setProperty("var", Files.createDirectories(work.resolve("var-" + label)).toString());
        }

        void address(String from, String to) {
            map.setProperty(from, to);
        }

        /** A pod of a workload: its container's env (downward API and ConfigMaps resolved) and $(VAR)-expanded command. */
        Proc pod(String podName, String podIp, Map<String, Object> workload) throws IOException {
            Map<String, Object> c = container(workload);
            Map<String, String> env = new LinkedHashMap<>();
            for (Map<String, Object> e : list(c.get("env"))) {
                String value;
                if (e.containsKey("value")) {
                    value = String.valueOf(e.get("value"));
                } else if (path(e, "valueFrom.fieldRef.fieldPath") != null) {
                    value = switch ((String) path(e, "valueFrom.fieldRef.fieldPath")) {
                        case "metadata.name" -> podName;
                        case "status.podIP" -> podIp;
                        default -> throw new AssertionError("unexpected fieldRef in " + e);
                    };
                } else {
                    Map<String, Object> ref = map(path(e, "valueFrom.configMapKeyRef"));
                    value = (String) path(resource("ConfigMap", (String) ref.get("name")), "data." + ref.get("key"));
                }
                assertThat(value).as("env " + e.get("name") + " of " + podName).isNotNull();
                env.put((String) e.get("name"), value);
            }
            List<String> command = new ArrayList<>();
            for (String part : Stream.concat(strings(c.get("command")).stream(), strings(c.get("args")).stream()).toList()) {
                command.add(expand(part, env).replace(PROGRAM, launcher.toString()));
            }
            assertThat(String.join(" ", command)).as("runs mailboxctl").contains(launcher.toString());
            Proc p = new Proc(podName, command, env);
            // the pod's name and its DNS names (<pod>.<service>, <dashed IP>.<service>) reach its declared ports
            for (int port : ports(c).values()) {
                int free = freePort();
                p.ports.put(port, free);
                map.setProperty(podName + ":" + port, "127.0.0.1:" + free);
                map.setProperty(podIp.replace('.', '-') + ":" + port, "127.0.0.1:" + free);
            }
            procs.add(p);
            return p;
        }

        /** A systemd unit's process: ExecStart with Environment= and the (test's) EnvironmentFile= values. */
        Proc unit(String name, Map<String, String> unit, Map<String, String> environmentFile, List<Integer> ports)
                throws IOException {
            Map<String, String> env = new LinkedHashMap<>();
            Matcher assignment = Pattern.compile("\"?(\\w+)=([^\"]*)\"?").matcher(unit.getOrDefault("Environment", ""));
            while (assignment.find()) {
                env.put(assignment.group(1), assignment.group(2));
            }
            env.putAll(environmentFile);
            List<String> command = new ArrayList<>();
            for (String word : unit.get("ExecStart").split("\\s+")) {
                command.add(expandShellStyle(word, env).replace(PROGRAM, launcher.toString()));
            }
            Proc p = new Proc(name, command, env);
            String host = env.get("MAILBOX_ADDRESS");
            for (int port : ports) {
                int free = freePort();
                p.ports.put(port, free);
                map.setProperty(host + ":" + port, "127.0.0.1:" + free);
            }
            procs.add(p);
            return p;
        }

        /** Starts them together and waits for each to print its ready line (a refused flag exits at once). */
        void start(List<Proc> group, String readyLine) throws Exception {
            Path mapFile = work.resolve("map-" + label + ".properties");
            try (var out = Files.newOutputStream(mapFile)) {
                map.store(out, null);
            }
            Map<Proc, CountDownLatch> ready = new HashMap<>();
            Set<Proc> printedReady = Collections.synchronizedSet(new java.util.HashSet<>());
            for (Proc p : group) {
                ProcessBuilder pb = new ProcessBuilder(p.command).redirectErrorStream(true);
                pb.environment().keySet().removeIf(k -> k.startsWith("MAILBOXCTL_") || k.startsWith("JAVA_"));
                pb.environment().putAll(p.env);
                pb.environment().put("LOOPBACK_MAP", mapFile.toString());
                pb.environment().put("LOOPBACK_SELF", p.name);
                p.process = pb.start();
                CountDownLatch latch = new CountDownLatch(1);
                ready.put(p, latch);
                String expected = String.format(readyLine, p.name);
                Thread reader = new Thread(() -> {
                    try (BufferedReader r = new BufferedReader(new InputStreamReader(p.process.getInputStream(),
                            StandardCharsets.UTF_8))) {
                        for (String line; (line = r.readLine()) != null; ) {
                            p.output.add(line);
                            if (line.startsWith(expected)) {
                                printedReady.add(p);
                                latch.countDown();
                            }
                        }
                    } catch (IOException ignored) {
                        // the process is gone
                    }
                    latch.countDown(); // ended: the wait below sees it is not alive
                }, "output-" + p.name);
                reader.setDaemon(true);
                reader.start();
            }
            for (Proc p : group) {
                ready.get(p).await(120, TimeUnit.SECONDS);
                // its ready line, not the end of its output (a refused flag ends it at once)
                assertThat(printedReady.contains(p) && p.process.isAlive()).as(p.name + " started (" + String.join(" ", p.command)
                        + "):\n" + String.join("\n", p.output)).isTrue();
            }
        }

        List<Proc> of(String workload) {
            return procs.stream().filter(p -> p.name.startsWith(workload)).toList();
        }

        String controlPlanes(List<String> coordinators) {
            return coordinators.stream().map(c -> "127.0.0.1:" + procs.stream().filter(p -> p.name.equals(c))
                    .findFirst().orElseThrow().port(controlPlanePort)).collect(Collectors.joining(","));
        }

        /** One leader and two followers, both nodes up, and a message sent through one node received through the other. */
        void expectHealthy(List<String> coordinators) throws Exception {
            String endpoints = controlPlanes(coordinators);
            CliRun status = client("cluster", "status", "--wait-ms", "90000", "-c", endpoints);
            assertThat(status.exitCode()).as(status.out() + status.err() + dump()).isZero();
            assertThat(status.out().lines().filter(l -> l.matches("\\S+\\s+\\S+\\s+LEADER\\s.*")).count()).as(status.out())
                    .isEqualTo(1);
            assertThat(status.out().lines().filter(l -> l.matches("\\S+\\s+\\S+\\s+FOLLOWER\\s.*")).count())
                    .as(status.out()).isEqualTo(2);
            List<Proc> nodes = procs.stream().filter(p -> p.ports.containsKey(9000)).toList();
            assertThat(nodes).hasSize(2);
            CliRun list = client("nodes", "list", "-c", endpoints);
            assertThat(list.exitCode()).as(list.err()).isZero();
            for (Proc n : nodes) {
                assertThat(list.out()).as("nodes list").containsPattern("(?m)^" + Pattern.quote(n.name) + "\\s+\\S+\\s+up\\b");
            }
            sendThroughNodes();
        }

        void sendThroughNodes() {
            List<Proc> nodes = procs.stream().filter(p -> p.ports.containsKey(9000)).toList();
            String body = "through-" + label + "-" + System.nanoTime();
            String mailbox = "deploy-check";
            CliRun sent = client("send", "node://127.0.0.1:" + nodes.get(0).port(9000) + "/" + mailbox, body);
            assertThat(sent.exitCode()).as(sent.out() + sent.err() + dump()).isZero();
            CliRun got = client("receive", "node://127.0.0.1:" + nodes.get(1).port(9000) + "/" + mailbox, "--wait-ms", "10000");
            assertThat(got.exitCode()).as(got.err()).isZero();
            assertThat(got.out()).contains(body);
        }

        CliRun client(String... args) {
            List<String> all = new ArrayList<>(List.of(args));
            all.addAll(List.of("--tls-ca", etc.resolve("tls/ca.crt").toString(), "--token", opsToken));
            return CliRun.of(all.toArray(String[]::new));
        }

        HttpClient https() throws Exception {
            if (https == null) {
                javax.net.ssl.SSLContext context = javax.net.ssl.SSLContext.getInstance("TLS");
                context.init(null, new javax.net.ssl.TrustManager[] {Tls.trustManager(TlsFiles.builder()
                        .trusted(etc.resolve("tls/ca.crt")).build())}, null);
                https = HttpClient.newBuilder().sslContext(context).connectTimeout(Duration.ofSeconds(5)).build();
            }
            return https;
        }

        private String dump() {
            StringBuilder b = new StringBuilder();
            for (Proc p : procs) {
                b.append("\n--- ").append(p.name).append(":\n").append(String.join("\n", p.output));
            }
            return b.toString();
        }

        @Override
        public void close() {
            for (Proc p : procs) {
                if (p.process != null) {
                    p.process.destroy(); // SIGTERM: they shut down as under a supervisor
                }
            }
            for (Proc p : procs) {
                try {
                    if (p.process != null && !p.process.waitFor(20, TimeUnit.SECONDS)) {
                        p.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    // ---- reading the files --------------------------------------------------------------------------------------

    /** Puts a certificate, its key and the CA in dir under the given names. */
    private static void copy(TestCertificates.Issued issued, TestCertificates ca, Path dir, String cert, String key,
                             String caName) throws IOException {
        Files.createDirectories(dir);
        Files.copy(issued.certificate(), dir.resolve(cert), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        Files.copy(issued.key(), dir.resolve(key), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        Files.copy(ca.caCertificate(), dir.resolve(caName), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }

    private static String token(String principal, Path tokens) {
        CliRun run = CliRun.of("security", "token", principal, "--append-to", tokens.toString());
        assertThat(run.exitCode()).as(run.err()).isZero();
        return run.out().trim();
    }

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> yamlDocuments(Path file) throws IOException {
        List<Map<String, Object>> out = new ArrayList<>();
        try (InputStream in = Files.newInputStream(file)) {
            for (Object doc : new Yaml(new SafeConstructor(new LoaderOptions())).loadAll(in)) {
                if (doc != null) {
                    Map<String, Object> m = (Map<String, Object>) doc;
                    assertThat(m).as("a Kubernetes object in " + file).containsKeys("apiVersion", "kind", "metadata");
                    out.add(m);
                }
            }
        }
        return out;
    }

    static List<Map<String, Object>> resources(String kind) {
        return kubernetes.stream().filter(r -> kind.equals(r.get("kind"))).toList();
    }

    static Map<String, Object> resource(String kind, String name) {
        return resources(kind).stream().filter(r -> name.equals(name(r))).findFirst()
                .orElseThrow(() -> new AssertionError("no " + kind + " " + name + " in " + KUBERNETES));
    }

    static List<Map<String, Object>> workloads() {
        return kubernetes.stream().filter(r -> r.get("kind").equals("StatefulSet") || r.get("kind").equals("Deployment"))
                .toList();
    }

    static String name(Map<String, Object> resource) {
        return (String) path(resource, "metadata.name");
    }

    static Map<String, Object> container(Map<String, Object> workload) {
        List<Map<String, Object>> containers = list(path(workload, "spec.template.spec.containers"));
        assertThat(containers).as("containers of " + name(workload)).hasSize(1);
        return containers.get(0);
    }

    static List<String> args(Map<String, Object> container) {
        return Stream.concat(strings(container.get("command")).stream(), strings(container.get("args")).stream()).toList();
    }

    static Map<String, Integer> ports(Map<String, Object> container) {
        Map<String, Integer> out = new LinkedHashMap<>();
        for (Map<String, Object> p : list(container.get("ports"))) {
            out.put((String) p.get("name"), (Integer) p.get("containerPort"));
        }
        return out;
    }

    static Object path(Map<String, Object> root, String dotted) {
        Object at = root;
        for (String key : dotted.split("\\.(?=[a-zA-Z])")) {
            if (!(at instanceof Map<?, ?> m)) {
                return null;
            }
            at = m.get(key);
        }
        return at;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Object o) {
        return o == null ? Map.of() : (Map<String, Object>) o;
    }

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> list(Object o) {
        return o == null ? List.of() : (List<Map<String, Object>>) o;
    }

    static List<String> strings(Object o) {
        return o == null ? List.of() : ((List<?>) o).stream().map(String::valueOf).toList();
    }

    /** Kubernetes' $(VAR) expansion of command and args ($$ escapes a $). */
    static String expand(String s, Map<String, String> env) {
        Matcher m = Pattern.compile("\\$\\$|\\$\\(([A-Za-z_][A-Za-z0-9_]*)\\)").matcher(s);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String v = m.group().equals("$$") ? "$" : env.getOrDefault(m.group(1), m.group());
            m.appendReplacement(out, Matcher.quoteReplacement(v));
        }
        m.appendTail(out);
        return out.toString();
    }

    /** systemd's ${VAR} and $VAR expansion in ExecStart. */
    static String expandShellStyle(String s, Map<String, String> env) {
        Matcher m = Pattern.compile("\\$\\{(\\w+)}|\\$(\\w+)").matcher(s);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String var = m.group(1) != null ? m.group(1) : m.group(2);
            assertThat(env).as("the unit's environment defines " + var).containsKey(var);
            m.appendReplacement(out, Matcher.quoteReplacement(env.get(var)));
        }
        m.appendTail(out);
        return out.toString();
    }

    /** A unit file's [Service] settings, continuation lines joined (Environment= lines joined with spaces). */
    static Map<String, String> unit(Path file) throws IOException {
        Map<String, String> out = new LinkedHashMap<>();
        String section = "";
        StringBuilder logical = new StringBuilder();
        for (String raw : Files.readAllLines(file)) {
            String line = raw.strip();
            if (logical.length() == 0 && (line.isEmpty() || line.startsWith("#") || line.startsWith(";"))) {
                continue;
            }
            if (line.endsWith("\\")) {
                logical.append(line, 0, line.length() - 1).append(' ');
                continue;
            }
            logical.append(line);
            String l = logical.toString().replaceAll("\\s+", " ").strip();
            logical.setLength(0);
            if (l.startsWith("[")) {
                section = l;
            } else if (section.equals("[Service]")) {
                int eq = l.indexOf('=');
                out.merge(l.substring(0, eq), l.substring(eq + 1), (a, b) -> a + " " + b);
            }
        }
        return out;
    }

    static Map<String, String> envFile(Path file) throws IOException {
        Map<String, String> out = new LinkedHashMap<>();
        for (String line : Files.readAllLines(file)) {
            if (!line.isBlank() && !line.startsWith("#")) {
                out.put(line.substring(0, line.indexOf('=')).trim(), line.substring(line.indexOf('=') + 1).trim());
            }
        }
        return out;
    }

    static Properties properties(Path file) throws IOException {
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(file)) {
            p.load(in);
        }
        return p;
    }

    static int status(HttpClient client, String url) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
