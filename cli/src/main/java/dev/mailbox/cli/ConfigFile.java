package dev.mailbox.cli;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/**
 * A command's {@code --config FILE}: a properties file whose every key must be a setting the command reads. A
 * key it does not know (a misspelled {@code initial-cluster-state}, say) is an error naming the key and the
 * nearest known one, never a setting silently left at its default (issue 30, finding 6).
 *
 * <p>The settings come back as {@link Properties} that refuse, with an {@link IllegalStateException}, to be
 * asked for a key the command did not declare: a command that reads a key it forgot to list is caught by its
 * first test, instead of rejecting that key in every operator's file.
 */
final class ConfigFile {

    private ConfigFile() {
    }

    /**
     * @param file  the file, or null when the command was given none
     * @param known every key the command reads
     * @return the file's settings (empty without a file)
     * @throws IllegalArgumentException naming the first unknown key, the nearest known one and the file
     * @throws IOException              if the file cannot be read
     */
    static Properties load(@Nullable Path file, Set<String> known) throws IOException {
        Properties p = new Strict(Set.copyOf(known));
        if (file == null) {
            return p;
        }
        Properties read = new Properties();
        try (InputStream in = Files.newInputStream(file)) {
            read.load(in);
        }
        for (String key : new TreeSet<>(read.stringPropertyNames())) {
            if (!known.contains(key)) {
                throw new IllegalArgumentException("unknown key '" + key + "' in " + file + "; did you mean '"
                        + nearest(key, known) + "'? (this command's keys: " + String.join(", ", new TreeSet<>(known))
                        + ")");
            }
            p.setProperty(key, read.getProperty(key));
        }
        return p;
    }

    /** @return the known key fewest single-character edits away from {@code key} (the first in order on a tie) */
    static String nearest(String key, Set<String> known) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String candidate : new TreeSet<>(known)) {
            int d = distance(key, candidate);
            if (d < bestDistance) {
                best = candidate;
                bestDistance = d;
            }
        }
        return best == null ? "" : best;
    }

    /** Levenshtein distance: insertions, deletions and substitutions. */
    static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] row = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            row[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitute = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                row[j] = Math.min(substitute, Math.min(previous[j] + 1, row[j - 1] + 1));
            }
            int[] t = previous;
            previous = row;
            row = t;
        }
        return previous[b.length()];
    }

    /** Settings that only answer for the keys declared. */
    private static final class Strict extends Properties {
        private final Set<String> known;

        Strict(Set<String> known) {
            this.known = known;
        }

        @Override
        public String getProperty(String key) {
            require(key);
            return super.getProperty(key);
        }

        @Override
        public String getProperty(String key, String defaultValue) {
            require(key);
            return super.getProperty(key, defaultValue);
        }

        private void require(String key) {
            if (!known.contains(key)) {
                throw new IllegalStateException("this command reads config key '" + key + "' without declaring it "
                        + "among its keys " + new TreeSet<>(known));
            }
        }
    }
}
