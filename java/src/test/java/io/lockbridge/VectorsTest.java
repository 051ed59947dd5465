package io.lockbridge;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/**
 * The golden vectors of testdata/vectors, which the Go tests check too:
 * every script the jar assembles has the SHA1 and length of scripts.json,
 * and is the repository's files assembled by the rule (so the jar's copies
 * are the Go packages' files); every key, value and decoding of legacy.json
 * is what this library's profiles produce.
 */
class VectorsTest {
    static final HexFormat HEX = HexFormat.of();
    static final Path VECTORS = Path.of(System.getProperty("lockbridge.vectors", "../testdata/vectors"));
    static final Path ROOT = Path.of(System.getProperty("lockbridge.root", ".."));

    @SuppressWarnings("unchecked")
    static Map<String, Object> load(String file) throws Exception {
        return (Map<String, Object>) Json.parse(Files.readString(VECTORS.resolve(file)));
    }

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> list(Map<String, Object> m, String k) {
        return (List<Map<String, Object>>) m.get(k);
    }

    @Test
    @SuppressWarnings("unchecked")
    void scriptsAreTheGoFilesWithTheirSha1() throws Exception {
        List<Map<String, Object>> scripts = list(load("scripts.json"), "scripts");
        assertEquals(scripts.size(), Scripts.all().size(), "the jar has every script of the vectors");
        for (Map<String, Object> v : scripts) {
            String name = (String) v.get("name");
            ByteArrayOutputStream src = new ByteArrayOutputStream();
            for (Object f : (List<Object>) v.get("fragments")) {
                src.writeBytes(Files.readAllBytes(ROOT.resolve((String) f)));
                src.write('\n');
            }
            src.writeBytes(Files.readAllBytes(ROOT.resolve((String) v.get("body"))));
            Script s = Scripts.get(name);
            assertArrayEquals(src.toByteArray(), s.source(), name + ": the jar's source is the repository's files");
            assertEquals(v.get("sha1"), s.sha1(), name);
            assertEquals(v.get("sha1"), Scripts.sha1(src.toByteArray()), name);
            assertEquals(((Long) v.get("bytes")).intValue(), s.source().length, name);
        }
    }

    @Test
    void keys() throws Exception {
        int n = 0;
        for (Map<String, Object> k : list(load("legacy.json"), "keys")) {
            KeyCodec c = keyCodec((String) k.get("codec"));
            byte[] want = HEX.parseHex((String) k.get("key"));
            String name = (String) k.get("name");
            assertArrayEquals(want, LegacyProfile.defaults().keyCodec(c).encodeKey(name), k.toString());
            n++;
        }
        assertTrue(n > 0);
    }

    @Test
    void values() throws Exception {
        int n = 0;
        for (Map<String, Object> v : list(load("legacy.json"), "values")) {
            LegacyProfile p = LegacyProfile.defaults().valueCodec(valueCodec((String) v.get("codec")))
                    .unit("s".equals(v.get("unit")) ? TimeUnit.SECONDS : TimeUnit.MILLISECONDS)
                    .plusOne((Boolean) v.get("plus_one"));
            long now = (Long) v.get("now");
            long lease = (Long) v.get("lease");
            Instant at = p.unit() == TimeUnit.SECONDS ? Instant.ofEpochSecond(now) : Instant.ofEpochMilli(now);
            Duration d = p.unit() == TimeUnit.SECONDS ? Duration.ofSeconds(lease) : Duration.ofMillis(lease);
            long w = p.expiry(at, d);
            assertEquals(v.get("expiry"), w, v.toString());
            assertArrayEquals(HEX.parseHex((String) v.get("value")), p.valueCodec().encode(w), v.toString());
            n++;
        }
        assertTrue(n > 0);
    }

    @Test
    void decoding() throws Exception {
        int n = 0;
        for (Map<String, Object> d : list(load("legacy.json"), "decode")) {
            ValueCodec c = valueCodec((String) d.get("codec"));
            Long got = c.decode(HEX.parseHex((String) d.get("stored")));
            if (d.containsKey("expiry")) {
                assertEquals(d.get("expiry"), got, d.toString());
            } else {
                assertTrue((Boolean) d.get("foreign"), d.toString());
                assertNull(got, "foreign: " + d);
            }
            n++;
        }
        assertTrue(n > 0);
    }

    @Test
    void registryEntryIsWhatGoWrites() {
        // The example of docs/protocol.md, which Go's encoding/json writes.
        Entry e = new Entry("web-1-4242-9f86d081884c", Phase.DUAL_WRITE, null, "web-1", 4242, 1717171717171717L, 1717171717171718L, 42, null, null,
                -1);
        assertEquals("{\"v\":3,\"seq\":42,\"id\":\"web-1-4242-9f86d081884c\",\"phase\":\"dual-write\",\"host\":\"web-1\",\"pid\":4242,"
                + "\"ns_init\":1717171717171717,\"gen\":1717171717171718}", e.json());
        Entry h = new Entry("a<b", Phase.LEGACY, Phase.DUAL_WRITE, "h\"", 1, 0, 0, 7, Phase.LEGACY, Phase.LEGACY, 250);
        assertEquals("{\"v\":3,\"seq\":7,\"id\":\"a\\u003cb\",\"phase\":\"legacy\",\"next\":\"dual-write\",\"host\":\"h\\\"\",\"pid\":1,"
                + "\"ns_init\":0,\"gen\":0,\"held_oldest\":\"legacy\",\"held_newest\":\"legacy\",\"held_ms\":250}", h.json());
    }

    @Test
    void modernKeys() {
        assertEquals("{orders}:modern", new String(Keys.modernKey(bytes("orders")), StandardCharsets.UTF_8));
        assertEquals("{tenant-1}:orders:modern", new String(Keys.modernKey(bytes("{tenant-1}:orders")), StandardCharsets.UTF_8));
        // An untagged key with a '}' that leaves the slot: "{T}" + key + ":modern".
        byte[] odd = bytes("a}b");
        byte[] m = Keys.modernKey(odd);
        assertEquals(Keys.slot(odd), Keys.slot(m));
        assertTrue(new String(m, StandardCharsets.UTF_8).endsWith("}a}b:modern"));
        assertEquals(12182, Keys.slot(bytes("foo")));
        assertEquals(Keys.slot(bytes("{user1000}.following")), Keys.slot(bytes("{user1000}.followers")));
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static KeyCodec keyCodec(String id) {
        for (KeyCodec c : KeyCodec.values()) {
            if (c.id().equals(id)) {
                return c;
            }
        }
        throw new AssertionError("unknown key codec " + id);
    }

    static ValueCodec valueCodec(String id) {
        for (ValueCodec c : ValueCodec.values()) {
            if (c.id().equals(id)) {
                return c;
            }
        }
        throw new AssertionError("unknown value codec " + id);
    }
}
