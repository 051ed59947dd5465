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
        int count = 0;
        int fallback = 0;
        for (Map<String, Object> vector : VectorsTest.list(VectorsTest.load("keys.json"), "keys")) {
            byte[] key = VectorsTest.HEX.parseHex((String) vector.get("key"));
            assertEquals(((Long) vector.get("slot")).intValue(), Keys.slot(key), vector.toString());
            byte[] modern = Keys.modernKey(key);
            assertArrayEquals(VectorsTest.HEX.parseHex((String) vector.get("modern")), modern, vector.toString());
            assertEquals(Keys.slot(key), Keys.slot(modern), vector.toString());
            fallback += Boolean.TRUE.equals(vector.get("fallback")) ? 1 : 0;
            count++;
        }
        assertTrue(count > 0 && fallback > 0, "the vectors cover both forms");
    }

    @Test
    void slotTagTableCoversEverySlot() {
        for (int slot = 0; slot < Keys.SLOTS; slot++) {
            assertEquals(slot, Keys.slot(Keys.ascii(Keys.slotTag(slot))));
        }
        byte[] odd = Keys.ascii("a}b");
        Keys.modernKey(odd);
        long start = System.nanoTime();
        for (int i = 0; i < 10_000; i++) {
            Keys.modernKey(odd);
        }
        long perCallUs = (System.nanoTime() - start) / 10_000 / 1000;
        assertTrue(perCallUs < 100, "modernKey's fallback is cheap: " + perCallUs + " µs a call");
    }
}
