package io.lockbridge;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every script lockbridge sends, assembled from the jar's copy of the Go
 * packages' .lua files by the manifest (lockbridge/lua/scripts.json, the
 * same file as testdata/vectors/scripts.json): the fragment files in order,
 * each followed by one newline byte, then the body file, byte for byte. A
 * script whose SHA1 or length differs from the manifest's is refused at
 * class load: the jar is then broken, and no lock may run on it.
 */
public final class Scripts {
    /** Where the build puts the Lua files and the manifest in the jar. */
    static final String ROOT = "/lockbridge/lua/";

    private static final Map<String, Script> ALL = load();

    // The scripts this library runs, by their manifest names.
    static final Script LEGACY_ACQUIRE = get("legacy/scripts/acquire.lua");
    static final Script LEGACY_RELEASE = get("legacy/scripts/release.lua");
    static final Script LEGACY_REFRESH = get("legacy/scripts/refresh.lua");
    static final Script MIGRATE_ACQUIRE = get("migrate/scripts/acquire.lua");
    static final Script MIGRATE_RELEASE = get("migrate/scripts/release.lua");
    static final Script MIGRATE_REFRESH = get("migrate/scripts/refresh.lua");
    static final Script HEARTBEAT = get("migrate/scripts/heartbeat.lua");
    static final Script SIGHTING = get("migrate/scripts/sighting.lua");
    static final Script FORGET = get("migrate/scripts/forget.lua");
    static final Script MODERN_ACQUIRE = get("modern/acquire.lua");
    static final Script MODERN_RELEASE = get("modern/release.lua");
    static final Script MODERN_REFRESH = get("modern/refresh.lua");
    static final Script MODERN_TTL = get("modern/ttl.lua");

    private Scripts() {}

    /** Every script of the manifest, by name, in the manifest's order. */
    public static Map<String, Script> all() {
        return Collections.unmodifiableMap(ALL);
    }

    /** The script called name; IllegalArgumentException when there is none. */
    public static Script get(String name) {
        Script script = ALL.get(name);
        if (script == null) {
            throw new IllegalArgumentException("lockbridge: no script " + name + " in the manifest");
        }
        return script;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Script> load() {
        Map<String, Script> scripts = new LinkedHashMap<>();
        Map<String, Object> manifest = (Map<String, Object>) Json.parse(
                new String(resource("scripts.json"), StandardCharsets.UTF_8));
        for (Object item : (List<Object>) manifest.get("scripts")) {
            Map<String, Object> entry = (Map<String, Object>) item;
            String name = (String) entry.get("name");
            ByteArrayOutputStream src = new ByteArrayOutputStream();
            for (Object fragment : (List<Object>) entry.get("fragments")) {
                src.writeBytes(resource((String) fragment));
                src.write('\n');
            }
            src.writeBytes(resource((String) entry.get("body")));
            byte[] source = src.toByteArray();
            String sha1 = sha1(source);
            if (!sha1.equals(entry.get("sha1")) || source.length != ((Long) entry.get("bytes")).intValue()) {
                throw new IllegalStateException("lockbridge: script " + name + " assembles to SHA1 " + sha1
                        + " (" + source.length + " bytes), the manifest says " + entry.get("sha1")
                        + " (" + entry.get("bytes") + " bytes): rebuild lockbridge-java");
            }
            scripts.put(name, new Script(name, source, sha1));
        }
        return scripts;
    }

    static String sha1(byte[] data) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(data));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] resource(String path) {
        try (InputStream in = Scripts.class.getResourceAsStream(ROOT + path)) {
            if (in == null) {
                throw new IllegalStateException("lockbridge: " + ROOT + path
                        + " is missing from the jar: rebuild lockbridge-java");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new IllegalStateException("lockbridge: reading " + ROOT + path, e);
        }
    }
}
