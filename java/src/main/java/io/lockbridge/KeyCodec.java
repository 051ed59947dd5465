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
        ByteArrayOutputStream b = new ByteArrayOutputStream(utf.length + 13);
        b.write(0xac);
        b.write(0xed);
        b.write(0x00);
        b.write(0x05);
        if (utf.length <= 0xffff) {
            b.write(0x74);
            b.write(utf.length >> 8);
            b.write(utf.length);
        } else {
            b.write(0x7c);
            long n = utf.length;
            for (int i = 7; i >= 0; i--) {
                b.write((int) (n >> (8 * i)));
            }
        }
        b.writeBytes(utf);
        return b.toByteArray();
    }

    /** DataOutput.writeUTF's encoding, without its length limit. */
    static byte[] modifiedUtf8(String s) {
        ByteArrayOutputStream b = new ByteArrayOutputStream(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c >= 0x0001 && c <= 0x007f) {
                b.write(c);
            } else if (c <= 0x07ff) {
                b.write(0xc0 | (c >> 6));
                b.write(0x80 | (c & 0x3f));
            } else {
                b.write(0xe0 | (c >> 12));
                b.write(0x80 | ((c >> 6) & 0x3f));
                b.write(0x80 | (c & 0x3f));
            }
        }
        return b.toByteArray();
    }
}
