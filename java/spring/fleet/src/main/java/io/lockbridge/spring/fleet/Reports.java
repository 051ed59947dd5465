package io.lockbridge.spring.fleet;

import io.lockbridge.Lock;
import io.lockbridge.spring.Locks;

/**
 * A job only one instance of the fleet runs at a time per report: the
 * test applications' service on the starter's {@link Locks} (each
 * application declares it as a bean).
 */
public class Reports {
    private final Locks locks;

    public Reports(Locks locks) {
        this.locks = locks;
    }

    /** Builds report id under its lock; the phase the lock was taken in. */
    public String build(String id) {
        try (Lock lock = locks.lock("report:" + id)) {
            return lock.phase().wireName();
        }
    }
}
