package io.lockbridge;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * Redis key names as lockbridge derives them (byte strings: a JDK-serialized
 * legacy key is not text): Redis Cluster hash slots, the companion names in
 * a key's slot, the migrate modern key and the namespace keys.
 */
final class Keys {
    static final int SLOTS = 16384;
    static final byte[] MODERN_SUFFIX = ascii(":modern");
    static final byte[] RELEASED_SUFFIX = ascii(":released");

    private Keys() {}

    static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /** The hash tag's bounds [from, to) in key, or null when key has none ("{}" is none). */
    static int[] tag(byte[] key) {
        for (int i = 0; i < key.length; i++) {
            if (key[i] != '{') {
                continue;
            }
            for (int j = i + 1; j < key.length; j++) {
                if (key[j] == '}') {
                    return j == i + 1 ? null : new int[] {i + 1, j};
                }
            }
            return null;
        }
        return null;
    }

    /** CRC16-XMODEM (polynomial 0x1021) of each byte value: a byte at a time, not a bit. */
    private static final int[] CRC16 = crc16Table();

    private static int[] crc16Table() {
        int[] table = new int[256];
        for (int value = 0; value < 256; value++) {
            int crc = value << 8;
            for (int bit = 0; bit < 8; bit++) {
                crc = (crc & 0x8000) != 0 ? ((crc << 1) ^ 0x1021) : (crc << 1);
                crc &= 0xffff;
            }
            table[value] = crc;
        }
        return table;
    }

    /** The key's Redis Cluster hash slot: CRC16-XMODEM of its tag (or of all of it), mod 16384. */
    static int slot(byte[] key) {
        int[] bounds = tag(key);
        int from = bounds == null ? 0 : bounds[0];
        int to = bounds == null ? key.length : bounds[1];
        int crc = 0;
        for (int i = from; i < to; i++) {
            crc = ((crc << 8) ^ CRC16[((crc >>> 8) ^ key[i]) & 0xff]) & 0xffff;
        }
        return crc % SLOTS;
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] part : parts) {
            out.writeBytes(part);
        }
        return out.toByteArray();
    }

    /**
     * key + suffix when key has a hash tag, else "{" + key + "}" + suffix;
     * null when that is not in key's slot (an untagged key holding '}').
     */
    static byte[] companion(byte[] key, byte[] suffix) {
        byte[] name = tag(key) != null ? concat(key, suffix) : concat(ascii("{"), key, ascii("}"), suffix);
        return slot(name) == slot(key) ? name : null;
    }

    /**
     * The migrate modern key of a legacy key: its companion with ":modern",
     * or, when that leaves the slot, "{T}" + key + ":modern" with T the
     * first decimal number 0, 1, 2, … whose slot is key's.
     */
    static byte[] modernKey(byte[] legacyKey) {
        byte[] tagged = companion(legacyKey, MODERN_SUFFIX);
        if (tagged != null) {
            return tagged;
        }
        return concat(ascii("{"), ascii(slotTag(slot(legacyKey))), ascii("}"), legacyKey, MODERN_SUFFIX);
    }

    /**
     * SLOT_TAGS[s]: the first decimal number 0, 1, 2, … whose slot is s (Go's
     * migrate.slotTag); built once, on first use.
     */
    private static final class SlotTags {
        static final String[] SLOT_TAGS = build();

        private static String[] build() {
            String[] tags = new String[SLOTS];
            int left = SLOTS;
            for (int i = 0; left > 0; i++) {
                String number = Integer.toString(i);
                int slot = slot(ascii(number));
                if (tags[slot] == null) {
                    tags[slot] = number;
                    left--;
                }
            }
            return tags;
        }
    }

    /** The first decimal number whose slot is slot, as Go's slotTag. */
    static String slotTag(int slot) {
        return SlotTags.SLOT_TAGS[slot];
    }

    /** A name for messages: the text when printable, else its hex. */
    static String show(String name) {
        return name == null ? "null" : '"' + name + '"';
    }

    static String show(byte[] key) {
        for (byte keyByte : key) {
            if (keyByte < 0x20 || keyByte == 0x7f) {
                return "0x" + HexFormat.of().formatHex(key);
            }
        }
        return '"' + new String(key, StandardCharsets.UTF_8) + '"';
    }

    static boolean same(byte[] left, byte[] right) {
        return Arrays.equals(left, right);
    }
}
