package dev.mailbox.cli;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A scrape of a {@code /metrics} endpoint, read the way Prometheus reads its text format (0.0.4). */
record PrometheusText(Map<String, Double> series) {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final Pattern LINE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{[^}]*})?\\s+(\\S+)");

    /** GETs {@code http://127.0.0.1:PORT/metrics} and parses it. */
    static PrometheusText scrape(MetricsEndpoint endpoint) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                + endpoint.address().getPort() + "/metrics")).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new AssertionError("GET /metrics: " + r.statusCode() + " " + r.body());
        }
        return parse(r.body());
    }

    static PrometheusText parse(String text) {
        Map<String, Double> out = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            Matcher m = LINE.matcher(line);
            if (!m.find()) {
                throw new AssertionError("not a Prometheus sample line: " + line);
            }
            out.put(m.group(1) + (m.group(2) == null ? "" : m.group(2)), Double.parseDouble(m.group(3)));
        }
        return new PrometheusText(out);
    }

    /** @return every metric name (the part before the labels) */
    Set<String> names() {
        Set<String> names = new TreeSet<>();
        series.keySet().forEach(k -> names.add(k.contains("{") ? k.substring(0, k.indexOf('{')) : k));
        return names;
    }

    /**
     * @param name   a metric name
     * @param labels label=value pairs the series must carry (others may be there too)
     * @return the value of the one series that matches
     * @throws AssertionError if none or several match
     */
    double value(String name, String... labels) {
        Double found = null;
        for (Map.Entry<String, Double> e : series.entrySet()) {
            if (matches(e.getKey(), name, labels)) {
                if (found != null) {
                    throw new AssertionError("several series " + name + " " + String.join(",", labels) + ": " + series);
                }
                found = e.getValue();
            }
        }
        if (found == null) {
            throw new AssertionError("no series " + name + " " + String.join(",", labels) + " in " + names());
        }
        return found;
    }

    /** @return how many series of this name carry these labels */
    long count(String name, String... labels) {
        return series.keySet().stream().filter(k -> matches(k, name, labels)).count();
    }

    private static boolean matches(String key, String name, String... labels) {
        if (!(key.equals(name) || key.startsWith(name + "{"))) {
            return false;
        }
        for (String label : labels) {
            int eq = label.indexOf('=');
            String pair = label.substring(0, eq) + "=\"" + label.substring(eq + 1) + "\"";
            if (!key.contains("{" + pair) && !key.contains("," + pair)) {
                return false;
            }
        }
        return true;
    }
}
