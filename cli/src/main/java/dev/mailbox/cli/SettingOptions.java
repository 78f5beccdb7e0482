package dev.mailbox.cli;

import dev.mailbox.coordination.settings.Setting;
import dev.mailbox.coordination.settings.Settings;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The flags and config keys of a server command, made from its {@link Setting}s: each setting is a flag whose
 * help shows its range and its process default, and a key of the command's {@code --config} file. A flag wins
 * over the file's key; every value is checked by the setting's own rule, and a refusal names the flag or the key
 * it came from.
 */
final class SettingOptions {

    private SettingOptions() {
    }

    /**
     * Adds one option per setting (what a command's model transformer does).
     *
     * @param spec     the command
     * @param settings its settings
     * @return the command
     */
    static CommandSpec add(CommandSpec spec, List<Setting<?>> settings) {
        for (Setting<?> s : settings) {
            OptionSpec.Builder o = OptionSpec.builder(s.flags().toArray(String[]::new))
                    .description(s.description(Settings.Profile.PROCESS).replace("%", "%%"))
                    .userObject(s);
            switch (s.form()) {
                case SWITCH -> o.type(Boolean.class).arity("0..1").paramLabel("true|false");
                case LIST -> o.type(List.class).auxiliaryTypes(String.class).arity("1").paramLabel(s.label());
                case VALUE -> o.type(String.class).arity("1").paramLabel(s.label());
            }
            spec.addOption(o.build());
        }
        return spec;
    }

    /**
     * @param settings a command's settings
     * @return their config keys
     */
    static Set<String> keys(List<Setting<?>> settings) {
        Set<String> keys = new LinkedHashSet<>();
        settings.forEach(s -> keys.add(s.key()));
        return Set.copyOf(keys);
    }

    /**
     * Reads the settings: the config file's keys first, then the flags given, then every value checked.
     *
     * @param spec     the command, parsed
     * @param settings its settings
     * @param config   its {@code --config} file, or null
     * @return the settings, with the process's defaults for the rest
     * @throws CommandLine.ParameterException naming the flag or key, for a value refused or a key unknown
     * @throws IOException                    if the file cannot be read
     */
    static Settings read(CommandSpec spec, List<Setting<?>> settings, @Nullable Path config) throws IOException {
        try {
            Properties file = ConfigFile.load(config, keys(settings)); // an unknown key names the nearest known one
            Settings.Builder b = Settings.builder(settings, Settings.Profile.PROCESS);
            for (Setting<?> s : settings) {
                String v = file.getProperty(s.key());
                if (v != null) {
                    b.file(s, v);
                }
            }
            CommandLine.ParseResult parsed = spec.commandLine().getParseResult();
            for (Setting<?> s : settings) {
                if (!parsed.hasMatchedOption(s.flag())) {
                    continue;
                }
                Object given = parsed.matchedOption(s.flag()).getValue();
                if (given instanceof List<?> list) {
                    for (Object one : list) {
                        b.flag(s, String.valueOf(one));
                    }
                } else if (given != null) {
                    b.flag(s, String.valueOf(given));
                }
            }
            return b.build();
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
    }
}
