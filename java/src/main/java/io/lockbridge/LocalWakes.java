package io.lockbridge;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A locker's own release wake-ups, for the locks whose release publishes no
 * notice: the legacy lock's (Java's legacy releasers publish none, so the
 * protocol has none) and a key whose release channel would leave its hash
 * slot. A lock() of the locker waiting on a name is woken when a lock of
 * the same locker on that name is released — as Go's lockers wake the
 * waiters of their own key — instead of at its next backoff (up to 100 ms,
 * or 512 ms in a migration). Waiters in other processes still poll.
 */
final class LocalWakes {
    private final ConcurrentHashMap<String, Set<Runnable>> waiting = new ConcurrentHashMap<>();

    /** Calls wake on each release of name until the returned handle is closed. */
    AutoCloseable add(String name, Runnable wake) {
        waiting.compute(name, (key, waiters) -> {
            Set<Runnable> wakes = waiters == null ? ConcurrentHashMap.newKeySet() : waiters;
            wakes.add(wake);
            return wakes;
        });
        return () -> waiting.computeIfPresent(name, (key, waiters) -> {
            waiters.remove(wake);
            return waiters.isEmpty() ? null : waiters;
        });
    }

    /** A lock on name was released: wakes its waiters. */
    void released(String name) {
        Set<Runnable> waiters = waiting.get(name);
        if (waiters != null) {
            waiters.forEach(Runnable::run);
        }
    }
}
