package io.lockbridge;

/**
 * The benchmarks' door into lockbridge-java's package: the floor's two
 * commands sent through lockbridge's own connections ({@link Redis}),
 * without any lock logic — the connections' share of a lock cycle.
 */
public final class BenchAccess {
    private static final Script DEL = new Script("bench/floor-release.lua",
            Keys.ascii("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1])"
                    + " else return 0 end"),
            sha1("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"));

    private BenchAccess() {}

    /** SET key token NX PX millis through redis: whether it was set. */
    public static boolean setNxPx(Redis redis, byte[] key, byte[] token, long millis) {
        return redis.setNxPx(key, token, millis);
    }

    /** The floor's compare-and-delete (EVALSHA, EVAL after NOSCRIPT) through redis: 1 when it deleted. */
    public static long compareAndDelete(Redis redis, byte[] key, byte[] token) {
        return redis.evalLong(DEL, new byte[][] {key}, token);
    }

    private static String sha1(String script) {
        try {
            return java.util.HexFormat.of()
                    .formatHex(java.security.MessageDigest.getInstance("SHA-1").digest(Keys.ascii(script)));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
