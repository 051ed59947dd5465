package io.lockbridge;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/** How a legacy profile turns a lock name into the Redis key the Java services use. */
public enum KeyCodec {
    /** The name's UTF-8 bytes: StringRedisTemplate, Jedis, getBytes() (the default). */
    RAW("raw"),
    /**
     * The JDK serialization of the name as a String (Spring Boot's default
     * RedisTemplate): ac ed 00 05 74 &lt;u16 length&gt; &lt;modified UTF-8&gt;, or
     * 7c &lt;u64 length&gt; above 65535 bytes.
     */
    JDK_STRING("jdk-string");

    private final String id;

    KeyCodec(String id) {
        this.id = id;
    }

    /** The codec's id, as Go's legacy.KeyCodec names it. */
    public String id() {
        return id;
    }

    /** The key bytes of name. */
    public byte[] encode(String name) {
        if (this == RAW) {
            return name.getBytes(StandardCharsets.UTF_8);
        }
        byte[] utf = modifiedUtf8(name);
        ByteArrayOutputStream out = new ByteArrayOutputStream(utf.length + 13);
        out.write(0xac);
        out.write(0xed);
        out.write(0x00);
        out.write(0x05);
        if (utf.length <= 0xffff) {
            out.write(0x74);
            out.write(utf.length >> 8);
            out.write(utf.length);
        } else {
            out.write(0x7c);
            long length = utf.length;
            for (int i = 7; i >= 0; i--) {
                out.write((int) (length >> (8 * i)));
            }
        }
        out.writeBytes(utf);
        return out.toByteArray();
    }

    /** DataOutput.writeUTF's encoding, without its length limit. */
    static byte[] modifiedUtf8(String text) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(text.length());
        for (int i = 0; i < text.length(); i++) {
            char character = text.charAt(i);
            if (character >= 0x0001 && character <= 0x007f) {
                out.write(character);
            } else if (character <= 0x07ff) {
                out.write(0xc0 | (character >> 6));
                out.write(0x80 | (character & 0x3f));
            } else {
                out.write(0xe0 | (character >> 12));
                out.write(0x80 | ((character >> 6) & 0x3f));
                out.write(0x80 | (character & 0x3f));
            }
        }
        return out.toByteArray();
    }
}
