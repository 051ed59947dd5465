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

    /** The stored bytes of expiry. */
    public byte[] encode(long expiry) {
        byte[] dec = Long.toString(expiry).getBytes(StandardCharsets.US_ASCII);
        switch (this) {
            case JDK_STRING -> {
                byte[] out = Arrays.copyOf(JDK_STRING_PREFIX, 7 + dec.length);
                out[5] = (byte) (dec.length >> 8);
                out[6] = (byte) dec.length;
                System.arraycopy(dec, 0, out, 7, dec.length);
                return out;
            }
            case JDK_LONG -> {
                byte[] out = Arrays.copyOf(JDK_LONG_PREFIX, 82);
                for (int i = 0; i < 8; i++) {
                    out[74 + i] = (byte) (expiry >> (8 * (7 - i)));
                }
                return out;
            }
            case JSON_STRING -> {
                byte[] out = new byte[dec.length + 2];
                out[0] = '"';
                System.arraycopy(dec, 0, out, 1, dec.length);
                out[out.length - 1] = '"';
                return out;
            }
            default -> {
                return dec;
            }
        }
    }

    /**
     * The expiry stored, or null when stored does not decode under this
     * codec (a foreign value). Strict, as the scripts' legacy_decode: an
     * optional sign and 1 to 19 ASCII digits within the int64 range, in the
     * codec's framing.
     */
    public Long decode(byte[] stored) {
        switch (this) {
            case JSON_STRING -> {
                if (stored.length < 3 || stored[0] != '"' || stored[stored.length - 1] != '"') {
                    return null;
                }
                return decimal(stored, 1, stored.length - 1);
            }
            case JDK_STRING -> {
                if (stored.length < 7 || !Arrays.equals(stored, 0, 5, JDK_STRING_PREFIX, 0, 5)) {
                    return null;
                }
                if (((stored[5] & 0xff) << 8 | (stored[6] & 0xff)) != stored.length - 7) {
                    return null;
                }
                return decimal(stored, 7, stored.length);
            }
            case JDK_LONG -> {
                if (stored.length != 82 || !Arrays.equals(stored, 0, 74, JDK_LONG_PREFIX, 0, 74)) {
                    return null;
                }
                long expiry = 0;
                for (int i = 74; i < 82; i++) {
                    expiry = (expiry << 8) | (stored[i] & 0xff);
                }
                return expiry;
            }
            default -> {
                return decimal(stored, 0, stored.length);
            }
        }
    }

    private static Long decimal(byte[] bytes, int from, int to) {
        int i = from;
        if (i < to && (bytes[i] == '+' || bytes[i] == '-')) {
            i++;
        }
        int digits = to - i;
        if (digits < 1 || digits > 19) {
            return null;
        }
        for (int j = i; j < to; j++) {
            if (bytes[j] < '0' || bytes[j] > '9') {
                return null;
            }
        }
        try {
            return Long.parseLong(new String(bytes, from, to - from, StandardCharsets.US_ASCII));
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
