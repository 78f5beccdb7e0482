package dev.mailbox.coordination.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.mailbox.api.Codec;
import dev.mailbox.api.ReceiveOptions;
import dev.mailbox.api.RedrivePolicy;
import dev.mailbox.console.Console;
import dev.mailbox.coordination.ClientSecurity;
import dev.mailbox.coordination.CoordinationClient;
import dev.mailbox.coordination.LeaseHolder;
import dev.mailbox.coordination.LeaseKeeper;
import dev.mailbox.coordination.LeasePolicy;
import dev.mailbox.http.HttpListener;
import dev.mailbox.inmemory.InMemoryMailbox;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The web console in a real browser: headless Chromium (Debian's {@code chromium} and {@code chromium-driver}, the
 * system's chromedriver, never a downloaded one) through Selenium, against a coordinator and a mailbox node with
 * access rules. The pages render; a lease moves on screen when its runner is killed and another takes it; a redrive
 * moves messages; a reader cannot purge. Screenshots go to {@code target/console-screenshots/}. Without Chromium the
 * tests are skipped, saying how to install it.
 */
@DisplayName("The web console in headless Chromium")
class ConsoleBrowserTest {

    private static final Path CHROMEDRIVER = Path.of(System.getProperty("mailbox.chromedriver", "/usr/bin/chromedriver"));
    private static final Path CHROMIUM = Path.of(System.getProperty("mailbox.chromium", "/usr/bin/chromium"));
    private static final Path SCREENSHOTS = Path.of("target", "console-screenshots");
    private static final Duration PATIENCE = Duration.ofSeconds(30);
    private static final Map<String, String> TOKENS = new LinkedHashMap<>();

    @TempDir
    static Path dir;

    private static TestingCluster cluster;
    private static MailboxNode node;
    private static InMemoryMailbox<byte[]> orders;
    private static InMemoryMailbox<byte[]> deadLetters;
    private static HttpListener coordinatorUi;
    private static HttpListener nodeUi;
    private static final List<AutoCloseable> CLOSE = new ArrayList<>();

    /** Why the tests are skipped, or null when Chromium is there. */
    private static String missing;

    private WebDriver browser;
    private Path profile;
    private String testName;

    @BeforeAll
    static void start() throws IOException {
        if (!Files.isExecutable(CHROMEDRIVER) || !Files.isExecutable(CHROMIUM)) {
            // each test is then skipped with this message (an assumption here would report no test at all)
            missing = "Chromium is not installed (no " + (Files.isExecutable(CHROMIUM) ? CHROMEDRIVER : CHROMIUM)
                    + "), so the console's browser test is skipped: install Debian's chromium and chromium-driver "
                    + "(apt-get install chromium chromium-driver), or point -Dmailbox.chromium and "
                    + "-Dmailbox.chromedriver at a Chromium and its chromedriver";
            System.err.println(missing);
            return;
        }
        StringBuilder tokens = new StringBuilder();
        for (String p : List.of("ops", "watcher", "node-a", "r1", "r2")) {
            String token = Access.newToken();
            TOKENS.put(p, token);
            tokens.append(Access.tokenLine(p, token)).append('\n');
        }
        Path tokenFile = Files.writeString(dir.resolve("tokens"), tokens.toString());
        Path rules = Files.writeString(dir.resolve("rules"), """
                ops      admin   *
                watcher  reader  *
                node-a   node    *
                r1       runner  orders
                r2       runner  orders
                """);
        Access access = Access.fromFiles(tokenFile, rules);
        cluster = TestingCluster.builder().size(1).configure(b -> b.access(access)).clientSecurity(as("ops")).start();
        String leader = cluster.awaitLeader(PATIENCE);
        cluster.client().namespaces().create("orders", new LeasePolicy(Duration.ofSeconds(2), Duration.ofMillis(500),
                Duration.ZERO), Map.of("team", "shop"));

        CoordinationClient nodeClient = client("node-a");
        node = MailboxNode.builder("node-a").coordinator(nodeClient).access(access).peerSecurity(as("node-a")).start();
        CLOSE.add(node);
        deadLetters = InMemoryMailbox.builder("orders-dlq", Codec.bytes()).build();
        orders = InMemoryMailbox.builder("orders", Codec.bytes()).redrivePolicy(RedrivePolicy.of(1, deadLetters)).build();
        node.host(orders).host(deadLetters);

        coordinatorUi = Console.mount(HttpListener.builder("metrics"), Console.builder().access(access.forConsole())
                .source(cluster.node(leader).consoleSource()).build()).start();
        nodeUi = Console.mount(HttpListener.builder("metrics"), Console.builder().access(access.forConsole())
                .source(node.consoleSource()).build()).start();
        CLOSE.add(coordinatorUi);
        CLOSE.add(nodeUi);
    }

    private static ClientSecurity as(String principal) {
        return ClientSecurity.none().withToken(TOKENS.get(principal));
    }

    private static CoordinationClient client(String principal) {
        CoordinationClient c = CoordinationClient.builder().endpoints(cluster.endpoints()).security(as(principal))
                .build();
        CLOSE.add(c);
        return c;
    }

    @AfterAll
    static void stop() throws Exception {
        for (int i = CLOSE.size() - 1; i >= 0; i--) {
            try {
                CLOSE.get(i).close();
            } catch (RuntimeException e) {
                // closing what a killed runner left
            }
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @BeforeEach
    void openBrowser(TestInfo info) throws IOException {
        Assumptions.assumeTrue(missing == null, missing);
        testName = info.getTestMethod().orElseThrow().getName();
        profile = Files.createTempDirectory("console-chromium-");
        ChromeOptions options = new ChromeOptions().setBinary(CHROMIUM.toFile()).addArguments("--headless",
                "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--user-data-dir=" + profile.toAbsolutePath(),
                "--window-size=1400,900");
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(CHROMEDRIVER.toFile())
                .usingAnyFreePort().build();
        browser = new ChromeDriver(service, options);
    }

    @AfterEach
    void closeBrowser() throws IOException {
        if (browser != null) {
            screenshot("end");
            browser.quit();
        }
        if (profile == null) {
            return;
        }
        try (var files = Files.walk(profile)) {
            files.sorted(java.util.Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        }
    }

    private void screenshot(String step) throws IOException {
        Files.createDirectories(SCREENSHOTS);
        File shot = ((ChromeDriver) browser).getScreenshotAs(OutputType.FILE);
        Files.copy(shot.toPath(), SCREENSHOTS.resolve(testName + "-" + step + ".png"),
                StandardCopyOption.REPLACE_EXISTING);
    }

    /** Opens a console and signs in with the principal's token, as a user pastes it. */
    private void signIn(HttpListener ui, String principal) {
        browser.get(ui.url() + "/ui/");
        await(() -> browser.findElement(By.id("signin")).isDisplayed(), "the sign-in form");
        browser.findElement(By.id("token")).sendKeys(TOKENS.get(principal));
        browser.findElement(By.id("use-token")).click();
        await(() -> browser.findElement(By.id("principal")).getText().equals(principal), "signed in as " + principal);
    }

    private void tab(String name) {
        click("nav button[data-tab='" + name + "']");
    }

    /** Clicks what the selector finds, finding it again if the page redrew it in between. */
    private void click(String css) {
        await(() -> {
            browser.findElement(By.cssSelector(css)).click();
            return true;
        }, "clicking " + css);
    }

    private String text(String css) {
        List<WebElement> found = browser.findElements(By.cssSelector(css));
        return found.isEmpty() ? "" : found.get(0).getText();
    }

    private void await(java.util.function.BooleanSupplier condition, String what) {
        new WebDriverWait(browser, PATIENCE).withMessage(() -> "waited for " + what + "; the status line says '"
                + text("#status") + "'").ignoring(org.openqa.selenium.NoSuchElementException.class)
                .ignoring(org.openqa.selenium.StaleElementReferenceException.class)
                .until(d -> condition.getAsBoolean());
    }

    @Test
    @DisplayName("the pages render: coordinators, namespaces, nodes, routes, and the node's mailboxes")
    void pagesRender() throws IOException {
        signIn(coordinatorUi, "ops");
        await(() -> text("#cluster tbody td.role").equals("LEADER"), "the leader in the cluster table");
        assertThat(text("#process")).startsWith("coordinator ");
        assertThat(text("#cluster tbody td.health")).isEqualTo("serving");
        screenshot("cluster");
        tab("namespaces");
        await(() -> text("#namespaces tr[data-namespace='orders']").contains("team=shop"), "namespace orders");
        tab("nodes");
        await(() -> text("#nodes tr[data-node='node-a'] td.up").equals("up"), "node-a up");
        assertThat(browser.findElement(By.cssSelector("nav button[data-tab='mailboxes']")).isDisplayed())
                .as("a coordinator holds no mailboxes").isFalse();

        orders.send("hello".getBytes(StandardCharsets.UTF_8));
        signIn(nodeUi, "ops");
        assertThat(text("#process")).isEqualTo("node node-a");
        tab("mailboxes");
        await(() -> text("#mailboxes tr[data-mailbox='orders'] td.queued").equals("1"), "orders with one message");
        click("#mailboxes tr[data-mailbox='orders'] button.peek");
        await(() -> text("#peek tbody td.body").equals("hello"), "the peeked body");
        assertThat(orders.receive().get(0).deliveryCount()).as("a peek is not a delivery").isEqualTo(1);
        screenshot("mailboxes");
        orders.purge();
    }

    @Test
    @DisplayName("a lease moves on screen when its runner is killed and another runner takes the mailbox")
    void leaseMovesAfterKill() throws IOException {
        CoordinationClient runner1 = client("r1");
        LeaseKeeper first = runner1.leases().keeper("orders", new LeaseHolder("r1", "node-a", node.address()))
                .ttl(Duration.ofSeconds(2)).build();
        CLOSE.add(first);
        long epoch = first.acquire().epoch();

        signIn(coordinatorUi, "ops");
        tab("leases");
        await(() -> text("#leases tr[data-lease='orders'] td.holder").equals("r1"), "r1 holding orders");
        assertThat(text("#leases tr[data-lease='orders'] td.epoch")).isEqualTo(Long.toString(epoch));
        assertThat(text("#leases tr[data-lease='orders'] td.left")).as("the leader shows time left").isNotEqualTo("—");
        screenshot("before-kill");

        // the runner dies: its connection goes and its renewals stop, without a release
        runner1.close();
        CoordinationClient runner2 = client("r2");
        LeaseKeeper second = runner2.leases().keeper("orders", new LeaseHolder("r2", "node-a", node.address()))
                .ttl(Duration.ofSeconds(2)).build();
        CLOSE.add(second);
        CompletableFuture<Long> taken = CompletableFuture.supplyAsync(() -> second.acquire(PATIENCE).epoch());

        await(() -> text("#leases tr[data-lease='orders'] td.holder").equals("r2"), "r2 holding orders");
        assertThat(Long.parseLong(text("#leases tr[data-lease='orders'] td.epoch"))).isGreaterThan(epoch)
                .isEqualTo(taken.join());
        assertThat(text("#leases tr[data-lease='orders'] td.state")).isEqualTo("ACTIVE");
        screenshot("after-kill");
        second.close();
    }

    @Test
    @DisplayName("a redrive moves the dead letters back into the mailbox they came from")
    void redriveMovesMessages() throws IOException {
        for (int i = 0; i < 3; i++) {
            orders.send(("order " + i).getBytes(StandardCharsets.UTF_8));
        }
        // delivered once and never acknowledged: the policy allows one delivery, so the next receive dead-letters them
        orders.receive(ReceiveOptions.defaults().withMaxMessages(10).withVisibilityTimeout(Duration.ZERO));
        assertThat(orders.receive(ReceiveOptions.defaults().withMaxMessages(10))).isEmpty();
        assertThat(deadLetters.approximateCount()).isEqualTo(3);

        signIn(nodeUi, "ops");
        tab("mailboxes");
        await(() -> text("#mailboxes tr[data-mailbox='orders-dlq'] td.total").equals("3"), "three dead letters");
        assertThat(text("#mailboxes tr[data-mailbox='orders'] td.deadletters")).startsWith("orders-dlq: 3");
        screenshot("before-redrive");
        click("#mailboxes tr[data-mailbox='orders-dlq'] button.redrive");

        await(() -> text("#status").contains("redrove 3 message(s) from orders-dlq to orders"), "the redrive's report");
        await(() -> text("#mailboxes tr[data-mailbox='orders'] td.queued").equals("3"), "orders holding three again");
        assertThat(deadLetters.approximateCount()).isZero();
        assertThat(orders.approximateCount()).isEqualTo(3);
        screenshot("after-redrive");
        orders.purge();
    }

    @Test
    @DisplayName("a reader cannot purge: the button is refused and nothing changes")
    void readerCannotPurge() throws IOException {
        orders.sendBatch(List.of(new byte[] {1}, new byte[] {2}));

        signIn(nodeUi, "watcher");
        tab("mailboxes");
        await(() -> text("#mailboxes tr[data-mailbox='orders'] td.queued").equals("2"), "orders with two messages");
        click("#mailboxes tr[data-mailbox='orders'] button.purge");
        await(() -> text("#mailboxes tr[data-mailbox='orders'] button.purge").equals("Confirm purge"), "the confirm");
        click("#mailboxes tr[data-mailbox='orders'] button.purge");

        await(() -> text("#status").startsWith("purge refused: watcher may not purge mailbox 'orders'"), "the refusal");
        assertThat(browser.findElement(By.id("status")).getAttribute("class")).isEqualTo("error");
        assertThat(orders.approximateCount()).isEqualTo(2);
        assertThat(text("#mailboxes tr[data-mailbox='orders'] td.queued")).isEqualTo("2");
        screenshot("refused");
        orders.purge();
    }
}
