package dev.mailbox.coordination.settings;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Values of a set of {@link Setting}s: those given (by a builder's setters, a config file or flags) and, for the
 * rest, their defaults. Immutable. A value is checked by its setting's own rule wherever it comes from, and the
 * refusal names it as its reader gave it.
 */
public final class Settings {

    /** Whose defaults apply: an embedding's or {@code mailboxctl}'s (see {@link Setting}). */
    public enum Profile {
        /** An application that builds a server itself. */
        LIBRARY,
        /** A server started by {@code mailboxctl}. */
        PROCESS
    }

    /** Settings as they are at some point: given, or their defaults. */
    public interface View {
        /**
         * @param setting a setting
         * @param <T>     its type
         * @return its value, or null if it has none (no default, nothing given)
         */
        <T> @Nullable T get(Setting<T> setting);
    }

    /** Where a value came from. */
    private enum Source {
        BUILDER, FLAG, FILE
    }

    private final List<Setting<?>> known;
    private final Profile profile;
    private final Map<Setting<?>, Object> values;
    private final Map<Setting<?>, Source> sources;
    private final View view;

    private Settings(Builder b) {
        this.known = List.copyOf(b.known);
        this.profile = b.profile;
        this.values = Map.copyOf(b.values);
        this.sources = Map.copyOf(b.sources);
        this.view = this::get;
    }

    /**
     * @param known   the settings these may hold
     * @param profile whose defaults apply
     * @return a builder holding no values yet
     */
    public static Builder builder(Collection<? extends Setting<?>> known, Profile profile) {
        return new Builder(known, profile);
    }

    /**
     * @param setting one of these settings
     * @param <T>     its type
     * @return its value: the one given, else its default; null if it has neither
     * @throws IllegalArgumentException if it is not one of these settings
     */
    @SuppressWarnings("unchecked")
    public <T> @Nullable T get(Setting<T> setting) {
        requireKnown(known, setting);
        Object v = values.get(setting);
        return v != null ? (T) v : setting.defaultIn(profile, view);
    }

    /**
     * @param setting one of these settings
     * @return whether a value was given for it
     */
    public boolean isSet(Setting<?> setting) {
        requireKnown(known, setting);
        return values.containsKey(setting);
    }

    /**
     * @param setting one of these settings
     * @return whether its value was given on the command line (not in a config file, not by default)
     */
    public boolean fromFlag(Setting<?> setting) {
        return sources.get(setting) == Source.FLAG;
    }

    /**
     * @param setting one of these settings
     * @return how a message names it: as its flag when it was given as one, else as its config key
     */
    public String describe(Setting<?> setting) {
        Source s = sources.get(setting);
        return subject(setting, s == null ? Source.FILE : s);
    }

    /** @return the settings these may hold, in their order */
    public List<Setting<?>> settings() {
        return known;
    }

    /** @return whose defaults apply */
    public Profile profile() {
        return profile;
    }

    private static String subject(Setting<?> s, Source source) {
        return switch (source) {
            case BUILDER -> s.name();
            case FLAG -> s.flag() + " (key " + s.key() + ")";
            case FILE -> "key " + s.key() + " in --config";
        };
    }

    private static void requireKnown(List<Setting<?>> known, Setting<?> setting) {
        if (!known.contains(setting)) {
            throw new IllegalArgumentException("not one of these settings: " + setting);
        }
    }

    /** Collects values, each checked, then checks them together. */
    public static final class Builder implements View {
        private final List<Setting<?>> known;
        private Profile profile;
        private final Map<Setting<?>, Object> values = new LinkedHashMap<>();
        private final Map<Setting<?>, Source> sources = new LinkedHashMap<>();

        private Builder(Collection<? extends Setting<?>> known, Profile profile) {
            Set<String> keys = new LinkedHashSet<>();
            for (Setting<?> s : known) {
                if (!keys.add(s.key())) {
                    throw new IllegalArgumentException("two settings with the key " + s.key());
                }
            }
            this.known = List.copyOf(known);
            this.profile = Objects.requireNonNull(profile, "profile");
        }

        @Override
        @SuppressWarnings("unchecked")
        public <T> @Nullable T get(Setting<T> setting) {
            requireKnown(known, setting);
            Object v = values.get(setting);
            return v != null ? (T) v : setting.defaultIn(profile, this);
        }

        /**
         * @param profile whose defaults apply from now on to the settings not given
         * @return this builder
         */
        public Builder profile(Profile profile) {
            this.profile = Objects.requireNonNull(profile, "profile");
            return this;
        }

        /**
         * A builder's setter: the value is checked at once by its range, against the other settings as they are
         * now; its rules with settings that may still change wait for {@link #build}.
         *
         * @param setting one of these settings
         * @param value   its value
         * @param <T>     its type
         * @return this builder
         * @throws IllegalArgumentException "NAME must be ...", if the setting refuses the value
         */
        public <T> Builder set(Setting<T> setting, T value) {
            requireKnown(known, setting);
            Objects.requireNonNull(value, setting.name());
            String problem = setting.rangeProblem(value, new Overlay<>(this, setting, value));
            if (problem != null) {
                throw new IllegalArgumentException(setting.name() + " " + problem);
            }
            values.put(setting, value);
            sources.put(setting, Source.BUILDER);
            return this;
        }

        /**
         * @param setting one of these settings
         * @return this builder, the setting back at its default
         */
        public Builder unset(Setting<?> setting) {
            requireKnown(known, setting);
            values.remove(setting);
            sources.remove(setting);
            return this;
        }

        /**
         * A value from the command line: it wins over the config file's. A {@link Setting.Form#LIST} setting
         * takes one element per call; the first replaces the file's list.
         *
         * @param setting one of these settings
         * @param text    the flag's value
         * @param <T>     its type
         * @return this builder
         * @throws IllegalArgumentException "--FLAG (key KEY) must be ...", if the text does not parse
         */
        public <T> Builder flag(Setting<T> setting, String text) {
            return text(setting, List.of(text), Source.FLAG);
        }

        /**
         * A value from a config file, unless the command line gave one. A {@link Setting.Form#LIST} setting's key
         * holds a comma-separated list.
         *
         * @param setting one of these settings
         * @param text    the key's value
         * @param <T>     its type
         * @return this builder
         * @throws IllegalArgumentException "key KEY in --config must be ...", if the text does not parse
         */
        public <T> Builder file(Setting<T> setting, String text) {
            if (sources.get(setting) == Source.FLAG) {
                return this;
            }
            List<String> parts = setting.form() == Setting.Form.LIST
                    ? List.of(text.split(",")).stream().map(String::strip).filter(p -> !p.isEmpty()).toList()
                    : List.of(text);
            return text(setting, parts, Source.FILE);
        }

        @SuppressWarnings("unchecked")
        private <T> Builder text(Setting<T> setting, List<String> texts, Source source) {
            requireKnown(known, setting);
            Object value;
            try {
                if (setting.form() == Setting.Form.LIST) {
                    List<Object> all = new ArrayList<>();
                    if (sources.get(setting) == source) {
                        all.addAll((List<Object>) values.get(setting)); // more of the same flag
                    }
                    for (String t : texts) {
                        all.addAll((List<Object>) setting.parse(t));
                    }
                    value = List.copyOf(all);
                } else {
                    value = setting.parse(texts.get(0));
                }
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(subject(setting, source) + " " + e.getMessage(), e);
            }
            values.put(setting, value);
            sources.put(setting, source);
            return this;
        }

        /**
         * @return the settings, every value given checked against the others
         * @throws IllegalArgumentException naming the first value refused, as it was given
         */
        @SuppressWarnings("unchecked")
        public Settings build() {
            for (Setting<?> s : known) {
                Object v = values.get(s);
                if (v != null) {
                    String problem = ((Setting<Object>) s).problem(v, this);
                    if (problem != null) {
                        throw new IllegalArgumentException(subject(s, sources.get(s)) + " " + problem);
                    }
                }
            }
            return new Settings(this);
        }
    }

    /** The builder's settings with one more value, to check that value against them before it is kept. */
    private record Overlay<V>(View base, Setting<V> setting, V value) implements View {
        @Override
        @SuppressWarnings("unchecked")
        public <T> @Nullable T get(Setting<T> s) {
            return s == (Object) setting ? (T) value : base.get(s);
        }
    }
}
