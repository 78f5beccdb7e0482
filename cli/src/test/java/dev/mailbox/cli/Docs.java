package dev.mailbox.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The documentation as this build's tests read it: the Markdown pages under {@code docs/} (and README.md), their
 * fenced code blocks, links, headings and generated regions. A generated region is
 * {@code <!-- generated:NAME -->...<!-- /generated:NAME -->}: its text is what a generator in the tests
 * produces from the code, never typed (see {@link DocsGenerated}).
 */
final class Docs {

    /** A fenced code block: its language (the word after the fence, may be empty), its text, its first line. */
    record Block(Page page, String language, String text, int line) {
    }

    /** A Markdown link target, and where it was written. */
    record Link(Page page, String target, int line) {
    }

    /** A region a generator owns. */
    record Region(Page page, String name, String text, int start, int end) {
    }

    private static final Pattern FENCE = Pattern.compile("(?m)^```([A-Za-z0-9_+-]*)[^\\n]*\\n(.*?)^```[ \\t]*$",
            Pattern.DOTALL);
    private static final Pattern LINK = Pattern.compile("(?<!!)\\[(?:[^\\]\\[]|\\[[^\\]]*\\])*\\]\\(([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
    private static final Pattern IMAGE = Pattern.compile("!\\[[^\\]]*\\]\\(([^)\\s]+)\\)");
    private static final Pattern HEADING = Pattern.compile("(?m)^(#{1,6})\\s+(.+?)\\s*#*\\s*$");
    private static final Pattern HTML_ANCHOR = Pattern.compile("<a\\s+(?:id|name)=\"([^\"]+)\"");
    private static final Pattern REGION = Pattern.compile(
            "<!-- generated:([A-Za-z0-9_.:#-]+) -->(.*?)<!-- /generated:\\1 -->", Pattern.DOTALL);
    private static final Pattern INLINE_CODE = Pattern.compile("`([^`\\n]+)`");

    /** A Markdown page. */
    static final class Page {
        final Path path;
        final String text;

        Page(Path path) {
            this.path = path;
            try {
                this.text = Files.readString(path, StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /** @return the path from the repository's root, with forward slashes */
        String name() {
            return root().relativize(path).toString().replace('\\', '/');
        }

        int lineOf(int offset) {
            int line = 1;
            for (int i = 0; i < offset && i < text.length(); i++) {
                if (text.charAt(i) == '\n') {
                    line++;
                }
            }
            return line;
        }

        List<Block> blocks() {
            List<Block> blocks = new ArrayList<>();
            Matcher m = FENCE.matcher(text);
            while (m.find()) {
                blocks.add(new Block(this, m.group(1).toLowerCase(Locale.ROOT), m.group(2), lineOf(m.start())));
            }
            return blocks;
        }

        /** @return the text with every fenced block blanked out (same length, so offsets and lines hold) */
        String prose() {
            StringBuilder b = new StringBuilder(text);
            Matcher m = FENCE.matcher(text);
            while (m.find()) {
                for (int i = m.start(); i < m.end(); i++) {
                    if (b.charAt(i) != '\n') {
                        b.setCharAt(i, ' ');
                    }
                }
            }
            return b.toString();
        }

        /** @return the inline code spans of the prose, outside generated regions (what the code wrote is not checked) */
        List<String> inlineCode() {
            StringBuilder b = new StringBuilder(prose());
            for (Region r : regions()) {
                for (int i = r.start(); i < r.end(); i++) {
                    if (b.charAt(i) != '\n') {
                        b.setCharAt(i, ' ');
                    }
                }
            }
            List<String> spans = new ArrayList<>();
            Matcher m = INLINE_CODE.matcher(b);
            while (m.find()) {
                spans.add(m.group(1));
            }
            return spans;
        }

        List<Link> links() {
            String prose = prose();
            // a link written inside an inline code span is code, not a link
            Matcher code = INLINE_CODE.matcher(prose);
            StringBuilder b = new StringBuilder(prose);
            while (code.find()) {
                for (int i = code.start(); i < code.end(); i++) {
                    b.setCharAt(i, ' ');
                }
            }
            String plain = b.toString();
            List<Link> links = new ArrayList<>();
            for (Pattern p : List.of(LINK, IMAGE)) {
                Matcher m = p.matcher(plain);
                while (m.find()) {
                    links.add(new Link(this, m.group(1), lineOf(m.start())));
                }
            }
            return links;
        }

        /** @return the anchors GitHub makes for this page's headings, and explicit {@code <a id>} anchors */
        Set<String> anchors() {
            Set<String> anchors = new LinkedHashSet<>();
            Map<String, Integer> seen = new HashMap<>();
            Matcher m = HEADING.matcher(prose());
            while (m.find()) {
                String slug = slug(m.group(2));
                int n = seen.merge(slug, 1, Integer::sum);
                anchors.add(n == 1 ? slug : slug + "-" + (n - 1));
            }
            Matcher a = HTML_ANCHOR.matcher(text);
            while (a.find()) {
                anchors.add(a.group(1));
            }
            return anchors;
        }

        /** @return the page's first heading */
        String title() {
            Matcher m = HEADING.matcher(prose());
            return m.find() ? m.group(2).replace("`", "") : name();
        }

        List<Region> regions() {
            List<Region> regions = new ArrayList<>();
            Matcher m = REGION.matcher(text);
            while (m.find()) {
                regions.add(new Region(this, m.group(1), m.group(2), m.start(2), m.end(2)));
            }
            return regions;
        }

        @Override
        public String toString() {
            return name();
        }
    }

    private Docs() {
    }

    /** @return the repository's root: the first directory above the working directory holding docs/ and pom.xml */
    static Path root() {
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !(Files.isDirectory(p.resolve("docs")) && Files.exists(p.resolve("pom.xml"))
                && Files.exists(p.resolve("README.md")))) {
            p = p.getParent();
        }
        assertThat(p).as("the repository's root above " + Path.of("").toAbsolutePath()).isNotNull();
        return p;
    }

    /** @return every page under docs/, in a stable order */
    static List<Page> pages() {
        try (Stream<Path> files = Files.walk(root().resolve("docs"))) {
            return files.filter(f -> f.toString().endsWith(".md")).sorted().map(Page::new).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** @return the page at a path from the root */
    static Page page(String name) {
        return new Page(root().resolve(name));
    }

    /**
     * GitHub's heading anchor: lower case, code marks and punctuation dropped (but '-' and '_'), spaces as '-'.
     */
    static String slug(String heading) {
        String s = heading.replaceAll("<[^>]+>", "").replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1")
                .toLowerCase(Locale.ROOT);
        StringBuilder b = new StringBuilder();
        s.codePoints().forEach(c -> {
            if (Character.isLetterOrDigit(c) || c == '-' || c == '_') {
                b.appendCodePoint(c);
            } else if (c == ' ') {
                b.append('-');
            }
        });
        return b.toString();
    }

    /**
     * Compares every generated region of the pages with what its generator produces now. With
     * {@code -Dmailbox.docs.write=true} it rewrites the regions that differ instead of failing.
     *
     * @param generators every region name, with its generator
     * @return problems: a region that is out of date, or a region whose name no generator knows
     */
    static List<String> checkRegions(List<Page> pages, Map<String, java.util.function.Supplier<String>> generators) {
        boolean write = Boolean.getBoolean("mailbox.docs.write");
        List<String> problems = new ArrayList<>();
        Map<String, String> produced = new LinkedHashMap<>();
        for (Page page : pages) {
            List<Region> regions = page.regions();
            if (regions.isEmpty()) {
                continue;
            }
            StringBuilder rewritten = new StringBuilder(page.text);
            boolean changed = false;
            for (int i = regions.size() - 1; i >= 0; i--) {
                Region r = regions.get(i);
                java.util.function.Supplier<String> generator = generators.get(r.name());
                if (generator == null) {
                    problems.add(page.name() + ":" + page.lineOf(r.start()) + ": no generator makes the region '"
                            + r.name() + "'");
                    continue;
                }
                String now = produced.computeIfAbsent(r.name(), n -> generator.get());
                String expected = r.text().startsWith("\n") ? "\n" + now + "\n" : now;
                if (!r.text().equals(expected)) {
                    if (write) {
                        rewritten.replace(r.start(), r.end(), expected);
                        changed = true;
                    } else {
                        problems.add(page.name() + ":" + page.lineOf(r.start()) + ": the generated region '" + r.name()
                                + "' is out of date; run the docs check with -Dmailbox.docs.write=true to rewrite it. "
                                + "It should read:\n" + expected);
                    }
                }
            }
            if (changed) {
                try {
                    Files.writeString(page.path, rewritten.toString(), StandardCharsets.UTF_8);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
        return problems;
    }
}
