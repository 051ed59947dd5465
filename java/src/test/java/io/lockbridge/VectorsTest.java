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
    static List<Map<String, Object>> list(Map<String, Object> doc, String field) {
        return (List<Map<String, Object>>) doc.get(field);
    }

    @Test
    @SuppressWarnings("unchecked")
    void scriptsAreTheGoFilesWithTheirSha1() throws Exception {
        List<Map<String, Object>> scripts = list(load("scripts.json"), "scripts");
        assertEquals(scripts.size(), Scripts.all().size(), "the jar has every script of the vectors");
        for (Map<String, Object> vector : scripts) {
            String name = (String) vector.get("name");
            ByteArrayOutputStream src = new ByteArrayOutputStream();
            for (Object fragment : (List<Object>) vector.get("fragments")) {
                src.writeBytes(Files.readAllBytes(ROOT.resolve((String) fragment)));
                src.write('\n');
            }
            src.writeBytes(Files.readAllBytes(ROOT.resolve((String) vector.get("body"))));
            Script script = Scripts.get(name);
            assertArrayEquals(src.toByteArray(), script.source(), name
                    + ": the jar's source is the repository's files");
            assertEquals(vector.get("sha1"), script.sha1(), name);
            assertEquals(vector.get("sha1"), Scripts.sha1(src.toByteArray()), name);
            assertEquals(((Long) vector.get("bytes")).intValue(), script.source().length, name);
        }
    }

    @Test
    void keys() throws Exception {
        int count = 0;
        for (Map<String, Object> vector : list(load("legacy.json"), "keys")) {
            KeyCodec codec = keyCodec((String) vector.get("codec"));
            byte[] want = HEX.parseHex((String) vector.get("key"));
            String name = (String) vector.get("name");
            assertArrayEquals(want, LegacyProfile.defaults().keyCodec(codec).encodeKey(name), vector.toString());
            count++;
        }
        assertTrue(count > 0);
    }

    @Test
    void values() throws Exception {
        int count = 0;
        for (Map<String, Object> vector : list(load("legacy.json"), "values")) {
            LegacyProfile profile = LegacyProfile.defaults().valueCodec(valueCodec((String) vector.get("codec")))
                    .unit("s".equals(vector.get("unit")) ? TimeUnit.SECONDS : TimeUnit.MILLISECONDS)
                    .plusOne((Boolean) vector.get("plus_one"));
            long now = (Long) vector.get("now");
            long lease = (Long) vector.get("lease");
            Instant instant = profile.unit() == TimeUnit.SECONDS ? Instant.ofEpochSecond(now)
                    : Instant.ofEpochMilli(now);
            Duration leaseDuration = profile.unit() == TimeUnit.SECONDS ? Duration.ofSeconds(lease)
                    : Duration.ofMillis(lease);
            long expiry = profile.expiry(instant, leaseDuration);
            assertEquals(vector.get("expiry"), expiry, vector.toString());
            assertArrayEquals(HEX.parseHex((String) vector.get("value")), profile.valueCodec().encode(expiry),
                    vector.toString());
            count++;
        }
        assertTrue(count > 0);
    }

    @Test
    void decoding() throws Exception {
        int count = 0;
        for (Map<String, Object> vector : list(load("legacy.json"), "decode")) {
            ValueCodec codec = valueCodec((String) vector.get("codec"));
            Long got = codec.decode(HEX.parseHex((String) vector.get("stored")));
            if (vector.containsKey("expiry")) {
                assertEquals(vector.get("expiry"), got, vector.toString());
            } else {
                assertTrue((Boolean) vector.get("foreign"), vector.toString());
                assertNull(got, "foreign: " + vector);
            }
            count++;
        }
        assertTrue(count > 0);
    }

    @Test
    void registryEntryIsWhatGoWrites() {
        // The example of docs/protocol.md, which Go's encoding/json writes.
        Entry plain = new Entry("web-1-4242-9f86d081884c", Phase.DUAL_WRITE, null, "web-1", 4242, 1717171717171717L,
                1717171717171718L, 42, null, null, -1);
        assertEquals("{\"v\":3,\"seq\":42,\"id\":\"web-1-4242-9f86d081884c\",\"phase\":\"dual-write\","
                + "\"host\":\"web-1\",\"pid\":4242,\"ns_init\":1717171717171717,\"gen\":1717171717171718}",
                plain.json());
        Entry escaped = new Entry("a<b", Phase.LEGACY, Phase.DUAL_WRITE, "h\"", 1, 0, 0, 7, Phase.LEGACY, Phase.LEGACY,
                250);
        assertEquals("{\"v\":3,\"seq\":7,\"id\":\"a\\u003cb\",\"phase\":\"legacy\",\"next\":\"dual-write\","
                + "\"host\":\"h\\\"\",\"pid\":1,\"ns_init\":0,\"gen\":0,\"held_oldest\":\"legacy\","
                + "\"held_newest\":\"legacy\",\"held_ms\":250}", escaped.json());
    }

    @Test
    void modernKeys() {
        assertEquals("{orders}:modern", new String(Keys.modernKey(bytes("orders")), StandardCharsets.UTF_8));
        assertEquals("{tenant-1}:orders:modern",
                new String(Keys.modernKey(bytes("{tenant-1}:orders")), StandardCharsets.UTF_8));
        // An untagged key with a '}' that leaves the slot: "{T}" + key + ":modern".
        byte[] odd = bytes("a}b");
        byte[] modern = Keys.modernKey(odd);
        assertEquals(Keys.slot(odd), Keys.slot(modern));
        assertTrue(new String(modern, StandardCharsets.UTF_8).endsWith("}a}b:modern"));
        assertEquals(12182, Keys.slot(bytes("foo")));
        assertEquals(Keys.slot(bytes("{user1000}.following")), Keys.slot(bytes("{user1000}.followers")));
    }

    static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    static KeyCodec keyCodec(String id) {
        for (KeyCodec codec : KeyCodec.values()) {
            if (codec.id().equals(id)) {
                return codec;
            }
        }
        throw new AssertionError("unknown key codec " + id);
    }

    static ValueCodec valueCodec(String id) {
        for (ValueCodec codec : ValueCodec.values()) {
            if (codec.id().equals(id)) {
                return codec;
            }
        }
        throw new AssertionError("unknown value codec " + id);
    }
}
