package dev.mailbox.api;

/** Raw bytes, defensively copied. */
enum BytesCodec implements Codec<byte[]> {
    INSTANCE;

    @Override
    public byte[] encode(byte[] value) {
        return value.clone();
    }

    @Override
    public byte[] decode(byte[] bytes) {
        return bytes.clone();
    }

    @Override
    public String toString() {
        return "Codec.bytes()";
    }
}
