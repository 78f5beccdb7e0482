package dev.mailbox.coordination.settings;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * One setting of a server, written once: its config key, its flag, its help, its default and the values it
 * accepts. The server's builder, {@code mailboxctl}'s flags, the config file and the generated reference all read
 * it, so they cannot disagree about what the default is or which values are refused, and a refusal names the
 * setting the way its reader gave it ({@code snapshotEvery} to a builder, {@code --snapshot-every (key
 * snapshot-every)} on the command line, {@code key snapshot-every in --config} from a file).
 *
 * <p>A setting may have two defaults: the library's (what an embedded builder starts with) and the process's
 * (what {@code mailboxctl} starts with), for the few settings where a process and an embedding differ on
 * purpose: a fixed, documented port for the process and a free port for the library, say. Where only one is
 * given, both are the same. A default may depend on other settings (the longest election timeout is twice the
 * shortest); it then comes with the text that documents it.
 *
 * <p>Instances are immutable; declare each as a constant of a registry class next to the builder that reads it.
 *
 * @param <T> the type of its value
 */
public final class Setting<T> {

    /** How the command line gives a setting. */
    public enum Form {
        /** {@code --flag VALUE}; the config key holds the value. */
        VALUE,
        /** {@code --flag} alone means true ({@code --flag=false} says false); the config key holds true or false. */
        SWITCH,
        /** {@code --flag VALUE}, repeatable; the config key holds a comma-separated list. */
        LIST
    }

    /**
     * A default value, constant or computed from other settings.
     *
     * @param <T> the value's type
     */
    @FunctionalInterface
    public interface Default<T> {
        /**
         * @param settings the other settings, as they are (given, or their own defaults)
         * @return the default, or null for none
         */
        @Nullable T in(Settings.View settings);
    }

    /**
     * The values a setting accepts.
     *
     * @param <T> the value's type
     */
    @FunctionalInterface
    public interface Check<T> {
        /**
         * @param value    a value given for the setting
         * @param settings the other settings, as they are
         * @return what is wrong with it, as "must be ..., was ..." (the caller puts the setting's name before it),
         *         or null if it is accepted
         */
        @Nullable String problem(T value, Settings.View settings);
    }

    /**
     * Reads a setting's value from text.
     *
     * @param <T> the value's type
     */
    @FunctionalInterface
    public interface Parser<T> {
        /**
         * @param text the text given, as is
         * @return the value
         * @throws IllegalArgumentException saying "must be ..., was '...'" for text it cannot read
         */
        T parse(String text);
    }

    private final String key;
    private final List<String> flags;
    private final String name;
    private final String label;
    private final String help;
    private final @Nullable String range;
    private final Form form;
    private final Parser<T> parser;
    private final Check<T> check;
    private final Check<T> rule;
    private final Function<T, String> format;
    private final Default<T> libraryDefault;
    private final String libraryDefaultText;
    private final Default<T> processDefault;
    private final String processDefaultText;

    private Setting(Builder<T> b) {
        this.key = b.key;
        this.flags = b.flags.isEmpty() ? List.of("--" + b.key) : List.copyOf(b.flags);
        this.name = b.name != null ? b.name : b.key;
        this.label = b.label;
        this.help = Objects.requireNonNull(b.help, () -> "setting " + b.key + " has no help text");
        this.range = b.range;
        this.form = b.form;
        this.parser = b.parser;
        this.check = b.check;
        this.rule = b.rule;
        this.format = b.format;
        this.libraryDefault = b.libraryDefault;
        this.libraryDefaultText = b.libraryDefaultText;
        this.processDefault = b.processDefault != null ? b.processDefault : b.libraryDefault;
        this.processDefaultText = b.processDefaultText != null ? b.processDefaultText : b.libraryDefaultText;
    }

    /** @return the config key, as a file writes it: {@code snapshot-every} */
    public String key() {
        return key;
    }

    /** @return the flag's names, the long one last: {@code --snapshot-every}; {@code -c, --coordinator} */
    public List<String> flags() {
        return flags;
    }

    /** @return the long flag: {@code --snapshot-every} */
    public String flag() {
        return flags.get(flags.size() - 1);
    }

    /** @return what a builder's refusal calls it: its setter's name, such as {@code snapshotEvery} */
    public String name() {
        return name;
    }

    /** @return the placeholder of its value in help: {@code MS}, {@code HOST:PORT} */
    public String label() {
        return label;
    }

    /** @return what it does, one or two sentences without the default or the range */
    public String help() {
        return help;
    }

    /** @return the values it accepts, in words ({@code at least 50}), or null if any value of its type will do */
    public @Nullable String range() {
        return range;
    }

    /** @return how the command line gives it */
    public Form form() {
        return form;
    }

    /**
     * @param profile whose default
     * @return the default as the help, the reference and the builder's documentation show it: {@code 300},
     *         {@code twice the shortest}, {@code none}
     */
    public String defaultText(Settings.Profile profile) {
        return profile == Settings.Profile.PROCESS ? processDefaultText : libraryDefaultText;
    }

    /**
     * @param profile whose default
     * @return the help text with the range and the default: what {@code --help} and the reference show
     */
    public String description(Settings.Profile profile) {
        return help + " (" + (range == null ? "" : range + "; ") + "default: " + defaultText(profile) + ")";
    }

    /**
     * @param profile  whose default
     * @param settings the other settings
     * @return the default in those settings, or null for none
     */
    public @Nullable T defaultIn(Settings.Profile profile, Settings.View settings) {
        return (profile == Settings.Profile.PROCESS ? processDefault : libraryDefault).in(settings);
    }

    /**
     * @return the library's default when every other setting is at its own library default, or null for none:
     *         what an untouched builder uses
     */
    public @Nullable T defaultValue() {
        return defaultIn(Settings.Profile.LIBRARY, DEFAULTS);
    }

    /** @return the process's default when every other setting is at its process default, or null for none */
    public @Nullable T processDefaultValue() {
        return defaultIn(Settings.Profile.PROCESS, PROCESS_DEFAULTS);
    }

    private static final Settings.View DEFAULTS = new Settings.View() {
        @Override
        public <V> @Nullable V get(Setting<V> s) {
            return s.defaultValue();
        }
    };

    private static final Settings.View PROCESS_DEFAULTS = new Settings.View() {
        @Override
        public <V> @Nullable V get(Setting<V> s) {
            return s.processDefaultValue();
        }
    };

    /**
     * @param text text as a flag or a config file gives it (one element, for a {@link Form#LIST} setting)
     * @return the value
     * @throws IllegalArgumentException saying "must be ..., was '...'"
     */
    public T parse(String text) {
        return parser.parse(text);
    }

    /**
     * @param value    a value
     * @param settings the other settings
     * @return what is wrong with the value ("must be ..."), or null: its range, then its rules with the others
     */
    public @Nullable String problem(T value, Settings.View settings) {
        String p = check.problem(value, settings);
        return p != null ? p : rule.problem(value, settings);
    }

    /**
     * @param value    a value
     * @param settings the other settings
     * @return what is wrong with the value by its range alone (what a builder's setter refuses at once), or null
     */
    public @Nullable String rangeProblem(T value, Settings.View settings) {
        return check.problem(value, settings);
    }

    /**
     * A builder's check of a value that depends on no other setting.
     *
     * @param value a value
     * @return the value
     * @throws IllegalArgumentException "NAME must be ...", if the setting refuses it
     */
    public T require(T value) {
        String problem = rangeProblem(Objects.requireNonNull(value, name), DEFAULTS);
        if (problem != null) {
            throw new IllegalArgumentException(name + " " + problem);
        }
        return value;
    }

    /**
     * @param value a value
     * @return it as a flag or a config file writes it
     */
    public String format(T value) {
        return format.apply(value);
    }

    @Override
    public String toString() {
        return flag();
    }

    // ---- factories --------------------------------------------------------------------------------------------

    /**
     * @param key the config key
     * @return a text setting
     */
    public static Builder<String> text(String key) {
        return new Builder<String>(key, "TEXT", t -> t.strip(), t -> t);
    }

    /**
     * @param key the config key
     * @return a file setting
     */
    public static Builder<Path> path(String key) {
        return new Builder<Path>(key, "FILE", t -> {
            if (t.isBlank()) {
                throw new IllegalArgumentException("must be a file, was '" + t + "'");
            }
            return Path.of(t.strip());
        }, Path::toString);
    }

    /**
     * @param key the config key (its flag ends in {@code -ms})
     * @return a duration given in whole milliseconds
     */
    public static Builder<Duration> millis(String key) {
        return new Builder<Duration>(key, "MS", t -> Duration.ofMillis(whole(t, "a whole number of milliseconds")),
                d -> Long.toString(d.toMillis()));
    }

    /**
     * @param key the config key
     * @return a whole number
     */
    public static Builder<Long> wholeNumber(String key) {
        return new Builder<Long>(key, "N", t -> whole(t, "a whole number"), v -> Long.toString(v));
    }

    /**
     * @param key the config key
     * @return a whole number that fits an int
     */
    public static Builder<Integer> integer(String key) {
        return new Builder<Integer>(key, "N", t -> {
            long v = whole(t, "a whole number");
            if (v != (int) v) {
                throw new IllegalArgumentException("must be a whole number up to " + Integer.MAX_VALUE + ", was '"
                        + t + "'");
            }
            return (int) v;
        }, v -> Integer.toString(v));
    }

    /**
     * @param key the config key
     * @return a number with a fraction
     */
    public static Builder<Double> number(String key) {
        return new Builder<Double>(key, "NUMBER", t -> {
            try {
                return Double.parseDouble(t.strip());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("must be a number, was '" + t + "'");
            }
        }, v -> Double.toString(v));
    }

    /**
     * @param key the config key
     * @return true or false, given as a value ({@code --pre-vote false}); any case, surrounding space ignored
     */
    public static Builder<Boolean> bool(String key) {
        return new Builder<Boolean>(key, "true|false", Setting::trueOrFalse, v -> Boolean.toString(v));
    }

    /**
     * @param key the config key
     * @return true or false, given as a switch ({@code --require-security}); default false
     */
    public static Builder<Boolean> onOff(String key) {
        Builder<Boolean> b = new Builder<Boolean>(key, "", Setting::trueOrFalse, v -> Boolean.toString(v));
        b.form = Form.SWITCH;
        return b.defaults(false);
    }

    /**
     * @param key the config key
     * @return a {@code host:port} address
     */
    public static Builder<InetSocketAddress> address(String key) {
        return new Builder<InetSocketAddress>(key, "HOST:PORT", Setting::hostPort, Setting::hostPort);
    }

    /**
     * @param key    the config key
     * @param values the enum's constants; each is written lower case, with dashes for underscores
     * @param <E>    the enum
     * @return one of the constants
     */
    public static <E extends Enum<E>> Builder<E> choice(String key, Class<E> values) {
        List<String> names = new ArrayList<>();
        for (E e : values.getEnumConstants()) {
            names.add(lower(e));
        }
        String expected = names.size() == 1 ? names.get(0) : String.join(", ", names.subList(0, names.size() - 1))
                + " or " + names.get(names.size() - 1);
        return new Builder<E>(key, String.join("|", names), t -> {
            String want = t.strip().toUpperCase(Locale.ROOT).replace('-', '_');
            for (E e : values.getEnumConstants()) {
                if (e.name().equals(want)) {
                    return e;
                }
            }
            throw new IllegalArgumentException("must be " + expected + ", was '" + t + "'");
        }, Setting::lower);
    }

    /**
     * A repeatable setting: each flag gives one element, the config key a comma-separated list. Flags replace the
     * file's list rather than adding to it.
     *
     * @param key     the config key (a plural: {@code peers}; name its singular flag with {@link Builder#flags})
     * @param label   the placeholder of one element in help
     * @param element reads one element
     * @param format  writes one element
     * @param <E>     an element's type
     * @return the setting's builder, empty by default
     */
    public static <E> Builder<List<E>> list(String key, String label, Parser<E> element, Function<E, String> format) {
        Builder<List<E>> b = new Builder<List<E>>(key, label, t -> List.of(element.parse(t)),
                l -> String.join(",", l.stream().map(format).toList()));
        b.form = Form.LIST;
        return b.defaults(List.of(), "none");
    }

    private static long whole(String t, String what) {
        try {
            return Long.parseLong(t.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("must be " + what + ", was '" + t + "'");
        }
    }

    private static Boolean trueOrFalse(String t) {
        String v = t.strip().toLowerCase(Locale.ROOT);
        if (!v.equals("true") && !v.equals("false")) {
            throw new IllegalArgumentException("must be true or false, was '" + t + "'");
        }
        return v.equals("true");
    }

    private static InetSocketAddress hostPort(String t) {
        String s = t.strip();
        int colon = s.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("must be host:port, was '" + t + "'");
        }
        int port;
        try {
            port = Integer.parseInt(s.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("must be host:port, was '" + t + "'");
        }
        if (port < 0 || port > 65_535) {
            throw new IllegalArgumentException("must be host:port with a port from 0 to 65535, was '" + t + "'");
        }
        String host = s.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1); // [::1]:7000
        }
        return new InetSocketAddress(host, port); // looked up now, as a server binds or dials it
    }

    /**
     * @param address an address
     * @return it as {@code host:port}
     */
    public static String hostPort(InetSocketAddress address) {
        String host = address.getHostString();
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + address.getPort();
    }

    private static String lower(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /**
     * Builds a {@link Setting}.
     *
     * @param <T> the type of its value
     */
    public static final class Builder<T> {
        private final String key;
        private final List<String> flags = new ArrayList<>();
        private @Nullable String name;
        private String label;
        private @Nullable String help;
        private @Nullable String range;
        private Form form = Form.VALUE;
        private final Parser<T> parser;
        private Check<T> check = (v, s) -> null;
        private Check<T> rule = (v, s) -> null;
        private final Function<T, String> format;
        private Default<T> libraryDefault = s -> null;
        private String libraryDefaultText = "none";
        private @Nullable Default<T> processDefault;
        private @Nullable String processDefaultText;

        private Builder(String key, String label, Parser<T> parser, Function<T, String> format) {
            if (!key.matches("[a-z][a-z0-9]*(-[a-z0-9]+)*")) {
                throw new IllegalArgumentException("a config key is lower case words joined by dashes, was '" + key
                        + "'");
            }
            this.key = key;
            this.label = label;
            this.parser = parser;
            this.format = format;
        }

        /**
         * @param names the flag's names, the long one last, when they are not {@code --KEY} (a plural key's
         *              repeatable flag is singular: {@code --peer} for {@code peers})
         * @return this builder
         */
        public Builder<T> flags(String... names) {
            flags.clear();
            flags.addAll(List.of(names));
            return this;
        }

        /**
         * @param name what a builder's refusal calls it (its setter's name); default the key
         * @return this builder
         */
        public Builder<T> name(String name) {
            this.name = name;
            return this;
        }

        /**
         * @param label the placeholder of its value in help
         * @return this builder
         */
        public Builder<T> label(String label) {
            this.label = label;
            return this;
        }

        /**
         * @param help what it does, without the default or the range (they are added)
         * @return this builder
         */
        public Builder<T> help(String help) {
            this.help = help;
            return this;
        }

        /**
         * @param words the values it accepts, as help shows them ({@code at least 50})
         * @param check the same, as code: what is wrong with a value, or null
         * @return this builder
         */
        public Builder<T> range(String words, Check<T> check) {
            this.range = words;
            this.check = check;
            return this;
        }

        /**
         * @param check what is wrong with a value, or null; for rules help need not spell out (the longest election
         *              timeout is more than the shortest)
         * @return this builder
         */
        public Builder<T> check(Check<T> check) {
            this.check = check;
            return this;
        }

        /**
         * A rule between this setting and others that may be given in any order (a Raft request timeout at least
         * the longest election timeout): checked once they all are, when the settings are built, not by a
         * builder's setter.
         *
         * @param words the rule, as help shows it
         * @param rule  what is wrong with a value, given the others, or null
         * @return this builder
         */
        public Builder<T> rule(String words, Check<T> rule) {
            this.range = range == null ? words : range + ", " + words;
            this.rule = rule;
            return this;
        }

        /**
         * @param value the default of the library and the process, shown as it is written
         * @return this builder
         */
        public Builder<T> defaults(T value) {
            return defaults(value, format.apply(value));
        }

        /**
         * @param value the default of the library and the process
         * @param text  how it is documented
         * @return this builder
         */
        public Builder<T> defaults(T value, String text) {
            return defaults(s -> value, text);
        }

        /**
         * @param value a default computed from other settings, or null for none
         * @param text  how it is documented: {@code twice the shortest}
         * @return this builder
         */
        public Builder<T> defaults(Default<T> value, String text) {
            this.libraryDefault = value;
            this.libraryDefaultText = text;
            return this;
        }

        /**
         * @param value the process's default, where it differs from the library's on purpose
         * @return this builder
         */
        public Builder<T> processDefault(T value) {
            return processDefault(s -> value, format.apply(value));
        }

        /**
         * @param value the process's default, computed from other settings
         * @param text  how it is documented
         * @return this builder
         */
        public Builder<T> processDefault(Default<T> value, String text) {
            this.processDefault = value;
            this.processDefaultText = text;
            return this;
        }

        /** @return the setting */
        public Setting<T> build() {
            return new Setting<>(this);
        }
    }
}
