package dev.mailbox.testkit.redis;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Just enough of the Redis protocol to set servers up (PING, CLUSTER, CONFIG), so the testkit needs
 * no Redis client library. Replies come back as strings, lists or longs; errors throw.
 */
final class Resp {

    private Resp() {
    }

    /**
     * Sends one command on a fresh connection.
     *
     * @return the reply: String, Long, List of replies, or null
     * @throws IllegalStateException on an error reply
     * @throws UncheckedIOException  if the server cannot be reached
     */
    static Object call(int port, Object... args) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 2000);
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            ByteArrayOutputStream cmd = new ByteArrayOutputStream();
            cmd.writeBytes(("*" + args.length + "\r\n").getBytes(StandardCharsets.UTF_8));
            for (Object a : args) {
                byte[] b = String.valueOf(a).getBytes(StandardCharsets.UTF_8);
                cmd.writeBytes(("$" + b.length + "\r\n").getBytes(StandardCharsets.UTF_8));
                cmd.writeBytes(b);
                cmd.writeBytes("\r\n".getBytes(StandardCharsets.UTF_8));
            }
            out.write(cmd.toByteArray());
            out.flush();
            return read(new BufferedInputStream(socket.getInputStream()));
        } catch (IOException e) {
            throw new UncheckedIOException("redis on 127.0.0.1:" + port + ": " + e.getMessage(), e);
        }
    }

    private static Object read(InputStream in) throws IOException {
        int type = in.read();
        String line = line(in);
        switch (type) {
            case '+':
                return line;
            case '-':
                throw new IllegalStateException(line);
            case ':':
                return Long.parseLong(line);
            case '$': {
                int len = Integer.parseInt(line);
                if (len < 0) {
                    return null;
                }
                byte[] b = in.readNBytes(len);
                line(in);
                return new String(b, StandardCharsets.UTF_8);
            }
            case '*': {
                int n = Integer.parseInt(line);
                if (n < 0) {
                    return null;
                }
                List<Object> items = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    items.add(read(in));
                }
                return items;
            }
            default:
                throw new IOException("unexpected reply type " + (char) type + line);
        }
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != '\r') {
            if (c < 0) {
                throw new IOException("connection closed");
            }
            b.write(c);
        }
        in.read(); // '\n'
        return b.toString(StandardCharsets.UTF_8);
    }
}
