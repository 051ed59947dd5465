package io.lockbridge;

import java.util.List;

/**
 * One attempt at the modern lock, sent as Go's modern lock sends it
 * (modernproto.Node.Acquire): without fencing, the plain command
 * {@code SET key token NX PX ttl}, and only when that finds the key taken
 * a second round trip, modern/ttl.lua, a read that learns the holder's
 * remaining lease (and tells a key of another type, which SET NX leaves
 * alone without an error, from a holder: WRONGTYPE). With fencing, until
 * a script has run on the server once, and for a waiting lock()'s attempts
 * after a miss, the attempt is the script modern/acquire.lua instead,
 * which learns the PTTL in the same round trip: a user the ACL forbids
 * scripts is refused before anything is written, rather than left with a
 * lock no script can release. The same lock either way, on the same key
 * and token: the script's acquire is that SET. The SET saves the server
 * the script's run (an uncontended cycle then sends what a bare lock
 * sends).
 */
final class ModernAcquire {
    /**
     * An attempt's outcome: acquired with its fence (0 without fencing), or
     * not, with the holder's PTTL in ms (-1 no expiry; 0 gone since).
     */
    record Reply(boolean acquired, long value) {}

    private final Redis redis;
    private volatile boolean scripted; // a script ran on the server: scripts are permitted

    ModernAcquire(Redis redis) {
        this.redis = redis;
    }

    /**
     * Sends the attempt once. again: a waiting lock()'s attempt after a
     * miss, which the script makes in one round trip whether it wins or not
     * (the SET, losing, takes two; a release wakes every waiter of the key,
     * and all but one lose). A reply that never came is an
     * {@link UnknownOutcomeException} (the caller settles it by reading the
     * key back); an error reply a {@link RedisErrorException}.
     */
    Reply once(byte[] key, byte[] fence, byte[] token, long ttlMillis, boolean again) {
        if (fence == null && scripted && !again) {
            if (redis.setNxPx(key, token, ttlMillis)) {
                return new Reply(true, 0);
            }
            Script script = Scripts.MODERN_TTL;
            List<?> raw = redis.evalList(script, new byte[][] {key}, token);
            List<?> reply = Replies.list(script, raw, 2);
            long code = Replies.num(script, reply.get(0));
            if (code == 0) {
                return new Reply(false, Replies.num(script, reply.get(1)));
            }
            if (code == -1) {
                return new Reply(false, 0); // released or expired since the SET
            }
            throw Replies.unexpected(script, raw); // ours cannot be: the token is fresh and its SET was refused
        }
        Script script = Scripts.MODERN_ACQUIRE;
        byte[][] keys = fence == null ? new byte[][] {key} : new byte[][] {key, fence};
        List<?> raw;
        try {
            raw = redis.evalList(script, keys, token, Redis.arg(ttlMillis));
        } catch (RedisErrorException e) {
            if (!(e.getCause() != null && String.valueOf(e.getCause().getMessage()).startsWith("NOPERM"))) {
                scripted = true; // answered, not refused for the user's rights
            }
            throw e;
        }
        scripted = true;
        List<?> reply = Replies.list(script, raw, 2);
        long code = Replies.num(script, reply.get(0));
        if (code != 0 && code != 1) {
            throw Replies.unexpected(script, raw);
        }
        return new Reply(code == 1, Replies.num(script, reply.get(1)));
    }
}
