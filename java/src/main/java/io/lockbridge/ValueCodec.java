package io.lockbridge;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * How a legacy profile stores the expiry: the bytes the Java services'
 * serializers write, and the strict decoding lockbridge shares with its
 * scripts (a value that does not decode is foreign: never expired, never
 * taken over).
 */
public enum ValueCodec {
    /** ASCII decimal: String.valueOf(long) through getBytes() or StringRedisSerializer (the default). */
    DECIMAL("decimal"),
    /** The JDK serialization of the decimal String. */
    JDK_STRING("jdk-string"),
    /** The JDK serialization of a java.lang.Long (82 bytes). */
    JDK_LONG("jdk-long"),
    /** Jackson on a String: the decimal in double quotes. */
    JSON_STRING("json-string"),
    /** Jackson on a Long: the same bytes as decimal. */
    JSON_NUMBER("json-number");

    /** The 74 bytes the JDK writes before a Long's value. */
    static final byte[] JDK_LONG_PREFIX = HexFormat.of().parseHex(
            "aced00057372000e6a6176612e6c616e672e4c6f6e673b8be490cc8f23df0200014a000576616c7565787200106a6176612e6c616e"
                    + "672e4e756d62657286ac951d0b94e08b0200007870");
    private static final byte[] JDK_STRING_PREFIX = {(byte) 0xac, (byte) 0xed, 0x00, 0x05, 0x74};

    private final String id;

    ValueCodec(String id) {
        this.id = id;
    }

    /** The codec's id: the scripts' ARGV and Go's legacy.ValueCodec.String(). */
    public String id() {
        return id;
    }

    /** The stored bytes of expiry v. */
    public byte[] encode(long v) {
        byte[] dec = Long.toString(v).getBytes(StandardCharsets.US_ASCII);
        switch (this) {
            case JDK_STRING -> {
                byte[] b = Arrays.copyOf(JDK_STRING_PREFIX, 7 + dec.length);
                b[5] = (byte) (dec.length >> 8);
                b[6] = (byte) dec.length;
                System.arraycopy(dec, 0, b, 7, dec.length);
                return b;
            }
            case JDK_LONG -> {
                byte[] b = Arrays.copyOf(JDK_LONG_PREFIX, 82);
                for (int i = 0; i < 8; i++) {
                    b[74 + i] = (byte) (v >> (8 * (7 - i)));
                }
                return b;
            }
            case JSON_STRING -> {
                byte[] b = new byte[dec.length + 2];
                b[0] = '"';
                System.arraycopy(dec, 0, b, 1, dec.length);
                b[b.length - 1] = '"';
                return b;
            }
            default -> {
                return dec;
            }
        }
    }

    /**
     * The expiry stored in b, or null when b does not decode under this
     * codec (a foreign value). Strict, as the scripts' legacy_decode: an
     * optional sign and 1 to 19 ASCII digits within the int64 range, in the
     * codec's framing.
     */
    public Long decode(byte[] b) {
        switch (this) {
            case JSON_STRING -> {
                if (b.length < 3 || b[0] != '"' || b[b.length - 1] != '"') {
                    return null;
                }
                return decimal(b, 1, b.length - 1);
            }
            case JDK_STRING -> {
                if (b.length < 7 || !Arrays.equals(b, 0, 5, JDK_STRING_PREFIX, 0, 5)) {
                    return null;
                }
                if (((b[5] & 0xff) << 8 | (b[6] & 0xff)) != b.length - 7) {
                    return null;
                }
                return decimal(b, 7, b.length);
            }
            case JDK_LONG -> {
                if (b.length != 82 || !Arrays.equals(b, 0, 74, JDK_LONG_PREFIX, 0, 74)) {
                    return null;
                }
                long v = 0;
                for (int i = 74; i < 82; i++) {
                    v = (v << 8) | (b[i] & 0xff);
                }
                return v;
            }
            default -> {
                return decimal(b, 0, b.length);
            }
        }
    }

    private static Long decimal(byte[] b, int from, int to) {
        int i = from;
        if (i < to && (b[i] == '+' || b[i] == '-')) {
            i++;
        }
        int digits = to - i;
        if (digits < 1 || digits > 19) {
            return null;
        }
        for (int k = i; k < to; k++) {
            if (b[k] < '0' || b[k] > '9') {
                return null;
            }
        }
        try {
            return Long.parseLong(new String(b, from, to - from, StandardCharsets.US_ASCII));
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
