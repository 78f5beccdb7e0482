package dev.mailbox.api;

import java.nio.charset.StandardCharsets;

/** UTF-8 text. */
enum Utf8Codec implements Codec<String> {
    INSTANCE;

    @Override
    public byte[] encode(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public String decode(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    @Override
    public String toString() {
        return "Codec.utf8()";
    }
}
