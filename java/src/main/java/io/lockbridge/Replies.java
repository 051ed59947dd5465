package io.lockbridge;

import java.nio.charset.StandardCharsets;
import java.util.List;

/** Reading script replies (Long, byte[], List of them, null), strictly. */
final class Replies {
    private Replies() {}

    static List<?> list(Script s, List<?> l, int min) {
        if (l.size() >= min) {
            return l;
        }
        throw unexpected(s, l);
    }

    static long num(Script s, Object r) {
        if (r instanceof Long n) {
            return n;
        }
        throw unexpected(s, r);
    }

    static byte[] bytes(Script s, Object r) {
        if (r instanceof byte[] b) {
            return b;
        }
        if (r instanceof String t) {
            return t.getBytes(StandardCharsets.UTF_8);
        }
        throw unexpected(s, r);
    }

    static String text(Script s, Object r) {
        return new String(bytes(s, r), StandardCharsets.UTF_8);
    }

    static LockbridgeException unexpected(Script s, Object r) {
        return new LockbridgeException("lockbridge: " + s.name() + ": unexpected reply " + r);
    }
}
