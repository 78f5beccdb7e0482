package dev.mailbox.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;

/** How a command prints what it found: a table for people (default) or JSON for scripts. */
final class Output {

    /** The output format. */
    enum Format { table, json }

    @Option(names = {"-o", "--output"}, defaultValue = "table",
            description = "table, for people, or json, for scripts (default: ${DEFAULT-VALUE})")
    Format format = Format.table;

    private static final ObjectMapper JSON = new ObjectMapper().registerModule(new JavaTimeModule())
            .enable(SerializationFeature.INDENT_OUTPUT);

    /**
     * Prints rows, or the value as JSON.
     *
     * @param out     where
     * @param value   what JSON shows (records, lists, maps)
     * @param headers the table's column names
     * @param rows    the table's cells
     */
    void print(PrintWriter out, Object value, List<String> headers, List<List<?>> rows) {
        if (format == Format.json) {
            json(out, value);
            return;
        }
        table(out, headers, rows);
    }

    static void json(PrintWriter out, Object value) {
        try {
            out.println(JSON.writeValueAsString(value));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("cannot write JSON: " + e.getMessage(), e);
        }
        out.flush();
    }

    static void table(PrintWriter out, List<String> headers, List<List<?>> rows) {
        List<String[]> cells = new ArrayList<>();
        cells.add(headers.toArray(String[]::new));
        for (List<?> row : rows) {
            cells.add(row.stream().map(x -> x == null ? "-" : String.valueOf(x)).toArray(String[]::new));
        }
        int[] width = new int[headers.size()];
        for (String[] row : cells) {
            for (int i = 0; i < row.length; i++) {
                width[i] = Math.max(width[i], row[i].length());
            }
        }
        for (String[] row : cells) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < row.length; i++) {
                line.append(i == row.length - 1 ? row[i] : String.format("%-" + width[i] + "s  ", row[i]));
            }
            out.println(line.toString().stripTrailing());
        }
        if (rows.isEmpty()) {
            out.println("(none)");
        }
        out.flush();
    }
}
