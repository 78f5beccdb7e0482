package dev.mailbox.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mailbox.http.HttpHandler;
import dev.mailbox.http.HttpRequest;
import dev.mailbox.http.HttpResponder;
import dev.mailbox.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * {@code GET} (or {@code HEAD}) {@code /health/live} and {@code /health/ready}: {@code 200} when the process is live
 * or ready, {@code 503} when not, with a small JSON body that says which checks decided it, for example
 * {@code {"status":"DOWN","checks":{"role":"FOLLOWER","fault":"none","leader":"none known"}}}. Answers are never
 * cached by clients. Before the process it reports on has started ({@link #serve}), live is UP and ready DOWN,
 * both with the check {@code "process":"starting"}.
 */
final class HealthProbes implements HttpHandler {

    static final String LIVE = "/health/live";
    static final String READY = "/health/ready";

    private final AtomicReference<@Nullable ProcessHealth> health = new AtomicReference<>();

    /** @param process what to report from now on */
    void serve(ProcessHealth process) {
        health.set(process);
    }

    @Override
    public @Nullable HttpResponse admit(HttpRequest head) {
        if (!head.method().equals("GET") && !head.method().equals("HEAD")) {
            return HttpResponse.text(405, "only GET and HEAD\n").withHeader("Allow", "GET, HEAD");
        }
        return null;
    }

    @Override
    public void handle(HttpRequest request, HttpResponder responder) {
        boolean ready = request.rawPath().equals(READY);
        Map<String, String> checks = ProcessHealth.checks();
        ProcessHealth process = health.get();
        boolean up;
        if (process == null) {
            checks.put("process", "starting");
            up = !ready;
        } else {
            try {
                up = ready ? process.ready(checks) : process.live(checks);
            } catch (RuntimeException e) {
                checks.put("error", String.valueOf(e.getMessage()));
                up = false;
            }
        }
        responder.respond(HttpResponse.of(up ? 200 : 503, "application/json", json(up, checks)
                .getBytes(StandardCharsets.UTF_8)).withHeader("Cache-Control", "no-store"));
    }

    static String json(boolean up, Map<String, String> checks) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("status", up ? "UP" : "DOWN");
        body.put("checks", checks);
        try {
            return JSON.writeValueAsString(body);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a map of strings always serializes", e);
        }
    }

    private static final ObjectMapper JSON = new ObjectMapper();
}
