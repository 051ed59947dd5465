package io.lockbridge;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * testdata/vectors/keys.json (written by Go's interop/keys_vectors_test.go):
 * Keys.slot and Keys.modernKey give Go's slot and derived modern key, the
 * "{T}" fallback included; and the fallback is a table look-up, not a search.
 */
class KeysVectorsTest {
    @Test
    void slotsAndModernKeysAreGos() throws Exception {
        int n = 0;
        int fallback = 0;
        for (Map<String, Object> k : VectorsTest.list(VectorsTest.load("keys.json"), "keys")) {
            byte[] key = VectorsTest.HEX.parseHex((String) k.get("key"));
            assertEquals(((Long) k.get("slot")).intValue(), Keys.slot(key), k.toString());
            byte[] m = Keys.modernKey(key);
            assertArrayEquals(VectorsTest.HEX.parseHex((String) k.get("modern")), m, k.toString());
            assertEquals(Keys.slot(key), Keys.slot(m), k.toString());
            fallback += Boolean.TRUE.equals(k.get("fallback")) ? 1 : 0;
            n++;
        }
        assertTrue(n > 0 && fallback > 0, "the vectors cover both forms");
    }

    @Test
    void slotTagTableCoversEverySlot() {
        for (int s = 0; s < Keys.SLOTS; s++) {
            assertEquals(s, Keys.slot(Keys.ascii(Keys.slotTag(s))));
        }
        byte[] odd = Keys.ascii("a}b");
        Keys.modernKey(odd);
        long t = System.nanoTime();
        for (int i = 0; i < 10_000; i++) {
            Keys.modernKey(odd);
        }
        long perCallUs = (System.nanoTime() - t) / 10_000 / 1000;
        assertTrue(perCallUs < 100, "modernKey's fallback is cheap: " + perCallUs + " µs a call");
    }
}
