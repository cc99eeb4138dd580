package dev.aura.realtime.testkit;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * The bytes of a WebSocket client on a plain socket, for tests that must control the connection
 * below any WebSocket library: a client that never reads, dribbles its handshake, or sends frames
 * a library would refuse to. Frames are client frames (masked, RFC 6455 section 5.3).
 */
public final class RawWebSocket {
    private static final byte[] MASK = {1, 2, 3, 4};

    private RawWebSocket() {}

    /** The HTTP upgrade request for {@code pathAndQuery} (e.g. {@code /realtime/v1/websocket?vsn=1.0.0&apikey=...}). */
    public static byte[] upgradeRequest(String pathAndQuery) {
        return ("GET " + pathAndQuery + " HTTP/1.1\r\n"
                        + "Host: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII);
    }

    /** One masked text frame carrying {@code text} (up to 65,535 bytes of UTF-8). */
    public static byte[] maskedText(String text) {
        byte[] data = text.getBytes(StandardCharsets.UTF_8);
        if (data.length > 0xFFFF) {
            throw new IllegalArgumentException(
                    "text frame of " + data.length + " bytes: only 16-bit lengths are built");
        }
        ByteArrayOutputStream frame = new ByteArrayOutputStream();
        frame.write(0x81); // FIN, text
        if (data.length < 126) {
            frame.write(0x80 | data.length);
        } else {
            frame.write(0x80 | 126);
            frame.write(data.length >>> 8);
            frame.write(data.length & 0xFF);
        }
        frame.writeBytes(MASK);
        for (int i = 0; i < data.length; i++) {
            frame.write(data[i] ^ MASK[i % 4]);
        }
        return frame.toByteArray();
    }

    /**
     * One masked frame: {@code fin} and {@code opcode} as given (1 text, 2 binary, 0 continuation),
     * any payload length (7, 16 or 64-bit length field), for fragmented messages.
     */
    public static byte[] maskedFrame(boolean fin, int opcode, byte[] payload) {
        ByteArrayOutputStream frame = new ByteArrayOutputStream();
        frame.write((fin ? 0x80 : 0) | opcode);
        if (payload.length < 126) {
            frame.write(0x80 | payload.length);
        } else if (payload.length <= 0xFFFF) {
            frame.write(0x80 | 126);
            frame.write(payload.length >>> 8);
            frame.write(payload.length & 0xFF);
        } else {
            frame.write(0x80 | 127);
            for (int shift = 56; shift >= 0; shift -= 8) {
                frame.write((int) ((long) payload.length >>> shift) & 0xFF);
            }
        }
        frame.writeBytes(MASK);
        for (int i = 0; i < payload.length; i++) {
            frame.write(payload[i] ^ MASK[i % 4]);
        }
        return frame.toByteArray();
    }

    /**
     * Reads server frames (unmasked) from {@code in} until a close frame, skipping the others.
     *
     * @return the close code (1005 when the close frame carries none) and reason, as {@code "1009 reason"}
     * @throws IOException when the connection ends before a close frame
     */
    public static String readClose(InputStream in) throws IOException {
        while (true) {
            int b0 = readByte(in);
            int b1 = readByte(in);
            long length = b1 & 0x7F;
            if (length == 126) {
                length = ((long) readByte(in) << 8) | readByte(in);
            } else if (length == 127) {
                length = 0;
                for (int i = 0; i < 8; i++) {
                    length = (length << 8) | readByte(in);
                }
            }
            byte[] payload = in.readNBytes((int) length);
            if (payload.length < length) {
                throw new IOException("connection closed inside a frame");
            }
            if ((b0 & 0x0F) == 8) {
                if (payload.length < 2) {
                    return "1005";
                }
                int code = ((payload[0] & 0xFF) << 8) | (payload[1] & 0xFF);
                return code + " " + new String(payload, 2, payload.length - 2, StandardCharsets.UTF_8);
            }
        }
    }

    private static int readByte(InputStream in) throws IOException {
        int b = in.read();
        if (b < 0) {
            throw new IOException("connection closed before a close frame");
        }
        return b;
    }

    /** A masked ping frame without payload. */
    public static byte[] maskedPing() {
        byte[] ping = {(byte) 0x89, (byte) 0x80, 0, 0, 0, 0};
        System.arraycopy(MASK, 0, ping, 2, 4);
        return ping;
    }

    /**
     * Reads {@code in} byte by byte until {@code marker} (ASCII) has been read, e.g.
     * {@code "\r\n\r\n"} for the end of the handshake response or {@code "phx_reply"} inside a
     * server frame (server frames are not masked). Blocks at most the socket's read timeout per
     * read.
     *
     * @return everything read, as ISO-8859-1 text
     * @throws IOException when the connection closes first, with what was read
     */
    public static String readUntil(InputStream in, String marker) throws IOException {
        StringBuilder seen = new StringBuilder();
        while (seen.indexOf(marker) < 0) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("connection closed before " + marker + " arrived; read: " + seen);
            }
            seen.append((char) b);
        }
        return seen.toString();
    }
}
