package dev.mailbox.examples.orders;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.testkit.redis.RedisServerProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/** Runs the application as its main method does, against a real redis-server, and uses it over HTTP. */
class OrdersApplicationTest {

    static RedisServerProcess redis;
    static ConfigurableApplicationContext app;
    static String base;
    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeAll
    static void start() {
        redis = RedisServerProcess.start();
        app = SpringApplication.run(OrdersApplication.class, "--server.port=0",
                "--spring.data.redis.port=" + redis.port());
        base = "http://127.0.0.1:" + ((WebServerApplicationContext) app).getWebServer().getPort();
    }

    @AfterAll
    static void stop() {
        if (app != null) {
            SpringApplication.exit(app);
        }
        redis.close();
    }

    private static HttpResponse<String> get(String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(base + path)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aPostedOrderIsPricedByTheListenerThroughTheHandler() throws Exception {
        HttpResponse<String> posted = HTTP.send(HttpRequest.newBuilder(URI.create(base + "/orders"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"item\":\"book\",\"quantity\":3}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(posted.statusCode()).isEqualTo(202);
        Matcher id = Pattern.compile("\"id\":\"([^\"]+)\"").matcher(posted.body());
        assertThat(id.find()).isTrue();

        // the listener works in the background: poll the order until it is priced
        HttpResponse<String> priced = get("/orders/" + id.group(1));
        long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (priced.statusCode() == 404 && System.nanoTime() < until) {
            Thread.sleep(50);
            priced = get("/orders/" + id.group(1));
        }
        assertThat(priced.statusCode()).isEqualTo(200);
        assertThat(priced.body()).contains("\"totalCents\":870"); // (250 + 10 * 4) * 3
        assertThat(redis.call("LLEN", "mailbox:{orders}:ready")).isEqualTo(0L);
    }

    @Test
    void aQuoteIsARequestResponseCall() throws Exception {
        HttpResponse<String> quote = get("/quotes?item=pen&quantity=2");
        assertThat(quote.statusCode()).isEqualTo(200);
        assertThat(quote.body()).contains("\"totalCents\":560"); // (250 + 10 * 3) * 2
    }

    @Test
    void eachMailboxsMessageCountIsAMetric() throws Exception {
        // counted in the background on the first read: read until the count is there
        HttpResponse<String> count = get("/actuator/metrics/mailbox.messages?tag=mailbox:orders-dlq");
        long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!count.body().contains("\"value\":0.0") && System.nanoTime() < until) {
            Thread.sleep(50);
            count = get("/actuator/metrics/mailbox.messages?tag=mailbox:orders-dlq");
        }
        assertThat(count.statusCode()).isEqualTo(200);
        assertThat(count.body()).contains("\"value\":0.0").contains("\"backend\"");
    }

    @Test
    void healthCoversTheMailboxes() throws Exception {
        HttpResponse<String> health = get("/actuator/health");
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(health.body()).contains("\"mailbox\":{\"status\":\"UP\"").contains("\"orders-dlq\"");
    }
}
