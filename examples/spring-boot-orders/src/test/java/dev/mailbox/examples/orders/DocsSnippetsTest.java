package dev.mailbox.examples.orders;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every java and yaml block of docs/spring-boot.md is a piece of this example, so the documentation's code
 * compiles and runs (this module's other tests run it).
 */
class DocsSnippetsTest {

    private static final Path EXAMPLE = Path.of("").toAbsolutePath();
    private static final Path DOC = EXAMPLE.resolve("../../docs/spring-boot.md").normalize();

    @Test
    void everyCodeBlockOfTheGuideIsInTheExample() throws IOException {
        String doc = Files.readString(DOC);
        StringBuilder sources = new StringBuilder();
        try (Stream<Path> files = Files.walk(EXAMPLE.resolve("src"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java") || p.toString().endsWith(".yml")).toList()) {
                sources.append(Files.readString(f)).append('\n');
            }
        }
        String haystack = squeeze(sources.toString());
        Matcher block = Pattern.compile("```(java|yaml)\\n(.*?)```", Pattern.DOTALL).matcher(doc);
        List<String> checked = new ArrayList<>();
        while (block.find()) {
            String code = block.group(2);
            if (code.contains("coordination:")) {
                continue; // the coordinated mode needs coordinators this example does not run
            }
            assertThat(haystack.contains(squeeze(code)))
                    .as("a %s block of %s is not in the example:%n%s", block.group(1), DOC, code).isTrue();
            checked.add(block.group(1));
        }
        assertThat(checked).contains("java", "yaml").hasSizeGreaterThanOrEqualTo(5);
    }

    private static String squeeze(String s) {
        return s.replaceAll("\\s+", " ").trim();
    }
}
