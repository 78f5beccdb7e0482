package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.coordination.server.TestingCluster;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The example alert rules in {@code ops/prometheus/} cannot rot: the file is valid YAML in Prometheus's
 * rule-file shape, holds RFC-038's alerts, and every metric its expressions name is one a running
 * coordinator cluster exports.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class AlertRulesTest {

    static final Path RULES = Path.of("ops", "prometheus", "mailbox-coordinator-alerts.yml");

    /** PromQL words that are not metric names. */
    private static final Set<String> KEYWORDS = Set.of("by", "without", "on", "ignoring", "group_left",
            "group_right", "and", "or", "unless", "bool", "offset", "inf", "nan");
    private static final Pattern GROUPING = Pattern.compile("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)");
    private static final Pattern IDENTIFIER = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");

    private static List<Map<String, Object>> rules;

    @BeforeAll
    @SuppressWarnings("unchecked")
    static void load() throws Exception {
        Path file = repositoryRoot().resolve(RULES);
        Map<String, Object> doc;
        try (InputStream in = Files.newInputStream(file)) {
            doc = new Yaml(new SafeConstructor(new LoaderOptions())).load(in);
        }
        List<Map<String, Object>> groups = (List<Map<String, Object>>) doc.get("groups");
        assertThat(groups).as("groups in " + file).isNotEmpty();
        rules = new ArrayList<>();
        for (Map<String, Object> g : groups) {
            assertThat(g).containsKeys("name", "rules");
            rules.addAll((List<Map<String, Object>>) g.get("rules"));
        }
    }

    static Path repositoryRoot() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.isRegularFile(dir.resolve(RULES))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new AssertionError("no " + RULES + " above " + Path.of("").toAbsolutePath());
        }
        return dir;
    }

    @Test
    @DisplayName("the file holds RFC-038's alerts, each with an expression, a severity and a summary")
    @SuppressWarnings("unchecked")
    void rfcAlerts() {
        List<String> names = rules.stream().map(r -> (String) r.get("alert")).toList();
        assertThat(names).containsExactlyInAnyOrder("MailboxCoordinatorNoLeader", "MailboxCoordinatorLeaderFlapping",
                "MailboxCoordinatorQuorumLoss", "MailboxCoordinatorSnapshotFailure",
                "MailboxCoordinatorHighCommitLatency", "MailboxCoordinatorLogGrowth",
                "MailboxCoordinatorSnapshotOverdue", "MailboxCoordinatorFollowerLag");
        for (Map<String, Object> r : rules) {
            assertThat(r.get("expr")).as(r.get("alert") + " expr").isInstanceOf(String.class);
            assertThat((Map<String, Object>) r.get("labels")).as(r.get("alert") + " labels")
                    .containsKey("severity");
            assertThat(((Map<String, Object>) r.get("labels")).get("severity")).isIn("critical", "warning");
            assertThat((Map<String, Object>) r.get("annotations")).as(r.get("alert") + " annotations")
                    .containsKey("summary");
            if (r.containsKey("for")) {
                assertThat(String.valueOf(r.get("for"))).as(r.get("alert") + " for").matches("\\d+[smh]");
            }
        }
        assertThat(expr("MailboxCoordinatorNoLeader")).contains("== 0");
        assertThat(rule("MailboxCoordinatorNoLeader").get("for")).isEqualTo("5s");
        assertThat(expr("MailboxCoordinatorLeaderFlapping")).contains("[5m]").contains("> 3");
        assertThat(expr("MailboxCoordinatorHighCommitLatency")).contains("histogram_quantile(0.99").contains("> 0.1");
        assertThat(expr("MailboxCoordinatorLogGrowth")).contains("> 100000");
        assertThat(expr("MailboxCoordinatorFollowerLag")).contains("> 1000");
    }

    @Test
    @DisplayName("every metric an expression names is exported by a running coordinator cluster")
    void metricsExist() throws Exception {
        Set<String> referenced = new TreeSet<>();
        for (Map<String, Object> r : rules) {
            Set<String> names = metricNames((String) r.get("expr"));
            assertThat(names).as(r.get("alert") + " names a metric").isNotEmpty();
            referenced.addAll(names);
        }
        try (MetricsEndpoint endpoint = MetricsEndpoint.start(new InetSocketAddress("127.0.0.1", 0));
             TestingCluster cluster = TestingCluster.builder().size(3)
                     .configure(b -> b.meterRegistry(endpoint.registry())).start()) {
            cluster.awaitLeader(Duration.ofSeconds(30));
            Set<String> exported = PrometheusText.scrape(endpoint).names();
            assertThat(exported).as("what the alert rules reference").containsAll(referenced);
        }
    }

    @Test
    @DisplayName("the metric-name reader finds names behind functions, label matchers, ranges and groupings")
    void readerSeesNames() {
        assertThat(metricNames("histogram_quantile(0.99, sum by (job, le) (rate(a_bucket{x=\"y\"}[5m]))) > 0.1"))
                .containsExactly("a_bucket");
        assertThat(metricNames("(count by (job) (b{role=~\"L|F\"} == 1) or max by (job) (c) * 0) < on (job) "
                + "(floor(max by (job) (c) / 2) + 1)")).containsExactly("b", "c");
        assertThat(metricNames("d > 2 * e")).containsExactly("d", "e");
    }

    private Map<String, Object> rule(String alert) {
        return rules.stream().filter(r -> alert.equals(r.get("alert"))).findFirst().orElseThrow();
    }

    private String expr(String alert) {
        return (String) rule(alert).get("expr");
    }

    /** The metric names a PromQL expression reads (a careful reading, enough for the rules we write). */
    static Set<String> metricNames(String expr) {
        String e = expr.replaceAll("\"(\\\\.|[^\"\\\\])*\"", "\"\"") // label values and strings
                .replaceAll("\\{[^}]*}", " ") // label matchers
                .replaceAll("\\[[^]]*]", " "); // ranges
        e = GROUPING.matcher(e).replaceAll(" ");
        Set<String> out = new TreeSet<>();
        Matcher m = IDENTIFIER.matcher(e);
        while (m.find()) {
            String word = m.group();
            int after = m.end();
            while (after < e.length() && Character.isWhitespace(e.charAt(after))) {
                after++;
            }
            boolean function = after < e.length() && e.charAt(after) == '(';
            boolean number = m.start() > 0 && (Character.isDigit(e.charAt(m.start() - 1)) || e.charAt(m.start() - 1) == '.');
            if (!function && !number && !KEYWORDS.contains(word.toLowerCase(java.util.Locale.ROOT))) {
                out.add(word);
            }
        }
        return out;
    }
}
