package io.lockbridge;

import java.util.Arrays;

/**
 * One Lua script lockbridge sends: its name in the manifest (such as
 * {@code migrate/scripts/acquire.lua}), its assembled source and the
 * lower-case hex SHA1 that EVALSHA names it by.
 */
public final class Script {
    private final String name;
    private final byte[] source;
    private final String sha1;

    Script(String name, byte[] source, String sha1) {
        this.name = name;
        this.source = source;
        this.sha1 = sha1;
    }

    /** The script's name in the manifest. */
    public String name() {
        return name;
    }

    /** The assembled source: the fragments, each followed by a newline, then the body. */
    public byte[] source() {
        return Arrays.copyOf(source, source.length);
    }

    /** The lower-case hex SHA1 of the source. */
    public String sha1() {
        return sha1;
    }

    @Override
    public String toString() {
        return name + " (" + sha1 + ")";
    }
}
