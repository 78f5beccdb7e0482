package dev.mailbox.console.internal;

import dev.mailbox.http.HttpRequest;
import dev.mailbox.http.HttpResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;

/** The page: three files read once from the jar and served from memory, with the console's security headers. */
public final class StaticFiles {

    private record File(String type, byte[] bytes) {
    }

    private static final Map<String, File> FILES = Map.of(
            "/ui/", load("index.html", "text/html; charset=utf-8"),
            "/ui/console.js", load("console.js", "text/javascript; charset=utf-8"),
            "/ui/console.css", load("console.css", "text/css; charset=utf-8"));

    private StaticFiles() {
    }

    private static File load(String name, String type) {
        try (InputStream in = StaticFiles.class.getResourceAsStream("/dev/mailbox/console/ui/" + name)) {
            if (in == null) {
                throw new IllegalStateException("the console's " + name + " is missing from the jar");
            }
            return new File(type, in.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * @param request a request for a path under {@code /ui/} but not under {@code /ui/api/}
     * @return the file, 404 or 405
     */
    public static HttpResponse serve(HttpRequest request) {
        if (!request.method().equals("GET") && !request.method().equals("HEAD")) {
            return Api.secured(HttpResponse.text(405, "the console's pages take GET\n").withHeader("Allow", "GET, HEAD"));
        }
        File f = FILES.get(request.rawPath());
        if (f == null) {
            return Api.secured(HttpResponse.text(404, "no such page: the console is at /ui/\n"));
        }
        byte[] body = request.method().equals("HEAD") ? new byte[0] : f.bytes();
        return Api.secured(HttpResponse.of(200, f.type(), body).withHeader("Cache-Control", "no-cache"));
    }
}
