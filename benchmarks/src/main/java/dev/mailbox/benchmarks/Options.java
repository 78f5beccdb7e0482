package dev.mailbox.benchmarks;

import java.util.AbstractMap.SimpleImmutableEntry;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The command-line options of the harnesses and probes. Every harness reads {@code --name value} and
 * {@code --name=value} alike (issue 36: {@code --kills=12} was read by one harness and {@code --kills 12} silently
 * ignored by it, the other way round by another).
 */
final class Options {

    private final List<String> args;

    Options(String[] args) {
        this.args = Arrays.asList(args);
    }

    /** The value of {@code name} ({@code name value} or {@code name=value}), or {@code otherwise} if it is absent. */
    String string(String name, String otherwise) {
        for (int i = 0; i < args.size(); i++) {
            String word = args.get(i);
            if (word.startsWith(name + "=")) {
                return word.substring(name.length() + 1);
            }
            if (word.equals(name)) {
                if (i + 1 >= args.size()) {
                    throw new IllegalArgumentException(name + " needs a value");
                }
                return args.get(i + 1);
            }
        }
        return otherwise;
    }

    /** The whole number after {@code name}, or {@code otherwise} if the option is absent. */
    int integer(String name, int otherwise) {
        String value = string(name, null);
        if (value == null) {
            return otherwise;
        }
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a whole number, was '" + value + "'", e);
        }
    }

    /**
     * Reads a harness's whole command line strictly: each option in order with its value, {@code --name value} and
     * {@code --name=value} alike. A value may itself start with {@code --} ({@code --flag --x=1} passes
     * {@code --x=1} on), so only the words where an option is expected are split at their first {@code =}.
     *
     * @param args     the command line
     * @param switches the options that take no value
     * @param valued   the options that take one
     * @return each option given and its value (null for a switch), in order; an option given twice appears twice
     * @throws IllegalArgumentException naming the word, for an unknown option, a positional word, a value missing,
     *                                  or a value given to a switch
     */
    static List<Map.Entry<String, String>> parse(String[] args, Set<String> switches, Set<String> valued) {
        List<Map.Entry<String, String>> out = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String word = args[i];
            int eq = word.indexOf('=');
            String name = word.startsWith("--") && eq > 0 ? word.substring(0, eq) : word;
            if (switches.contains(name)) {
                if (eq > 0 && word.startsWith("--")) {
                    throw new IllegalArgumentException(name + " takes no value: " + word);
                }
                out.add(new SimpleImmutableEntry<>(name, (String) null));
            } else if (valued.contains(name)) {
                if (name.length() < word.length()) {
                    out.add(new SimpleImmutableEntry<>(name, word.substring(eq + 1)));
                } else if (i + 1 < args.length) {
                    out.add(new SimpleImmutableEntry<>(name, args[++i]));
                } else {
                    throw new IllegalArgumentException(name + " needs a value");
                }
            } else {
                throw new IllegalArgumentException("unknown argument " + word + "; the options are "
                        + new TreeSet<>(union(switches, valued)));
            }
        }
        return out;
    }

    private static Set<String> union(Set<String> a, Set<String> b) {
        Set<String> all = new TreeSet<>(a);
        all.addAll(b);
        return all;
    }
}
