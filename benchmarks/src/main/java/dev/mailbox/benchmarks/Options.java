package dev.mailbox.benchmarks;

import java.util.Arrays;
import java.util.List;

/** The command-line options of the small probes: {@code --name value} pairs, each with a default. */
final class Options {

    private final List<String> args;

    Options(String[] args) {
        this.args = Arrays.asList(args);
    }

    /** The value after {@code name}, or {@code otherwise} if the option is absent. */
    String string(String name, String otherwise) {
        int i = args.indexOf(name);
        if (i < 0) {
            return otherwise;
        }
        if (i + 1 >= args.size()) {
            throw new IllegalArgumentException(name + " needs a value");
        }
        return args.get(i + 1);
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
}
