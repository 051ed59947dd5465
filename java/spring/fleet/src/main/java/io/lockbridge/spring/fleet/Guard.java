package io.lockbridge.spring.fleet;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts who is inside a critical section, apart from the lock under test:
 * a holder that finds another inside is an overlap.
 */
public interface Guard {
    /** who enters the critical section. */
    void enter(String who);

    /** who leaves it. */
    void exit(String who);

    /** A guard in this JVM (every contender in one process): an atomic counter. */
    final class Local implements Guard {
        private final AtomicInteger inside = new AtomicInteger();
        private final AtomicLong overlaps = new AtomicLong();

        @Override
        public void enter(String who) {
            if (inside.incrementAndGet() != 1) {
                overlaps.incrementAndGet();
            }
        }

        @Override
        public void exit(String who) {
            inside.decrementAndGet();
        }

        /** The overlaps counted so far. */
        public long overlaps() {
            return overlaps.get();
        }
    }
}
