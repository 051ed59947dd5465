package io.lockbridge;

/**
 * The benchmarks' door into lockbridge-java's package: the floor's two
 * commands sent through lockbridge's own connections ({@link Redis}),
 * without any lock logic — the connections' share of a lock cycle.
 */
public final class BenchAccess {
    private static final Script DEL = new Script("bench/floor-release.lua",
            Keys.ascii("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"),
            sha1("if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"));

    private BenchAccess() {}

    /** SET key token NX PX ms through r: whether it was set. */
    public static boolean setNxPx(Redis r, byte[] key, byte[] token, long ms) {
        return r.setNxPx(key, token, ms);
    }

    /** The floor's compare-and-delete (EVALSHA, EVAL after NOSCRIPT) through r: 1 when it deleted. */
    public static long compareAndDelete(Redis r, byte[] key, byte[] token) {
        return r.evalLong(DEL, new byte[][] {key}, token);
    }

    private static String sha1(String s) {
        try {
            return java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-1").digest(Keys.ascii(s)));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
