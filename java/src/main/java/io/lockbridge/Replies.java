package io.lockbridge;

import java.nio.charset.StandardCharsets;
import java.util.List;

/** Reading script replies (Long, byte[], List of them, null), strictly. */
final class Replies {
    private Replies() {}

    static List<?> list(Script script, List<?> reply, int min) {
        if (reply.size() >= min) {
            return reply;
        }
        throw unexpected(script, reply);
    }

    static long num(Script script, Object reply) {
        if (reply instanceof Long value) {
            return value;
        }
        throw unexpected(script, reply);
    }

    static byte[] bytes(Script script, Object reply) {
        if (reply instanceof byte[] raw) {
            return raw;
        }
        if (reply instanceof String string) {
            return string.getBytes(StandardCharsets.UTF_8);
        }
        throw unexpected(script, reply);
    }

    static String text(Script script, Object reply) {
        return new String(bytes(script, reply), StandardCharsets.UTF_8);
    }

    static LockbridgeException unexpected(Script script, Object reply) {
        return new LockbridgeException("lockbridge: " + script.name() + ": unexpected reply " + reply);
    }
}
