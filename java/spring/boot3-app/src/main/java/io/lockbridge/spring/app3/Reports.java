package io.lockbridge.spring.app3;

import io.lockbridge.Lock;
import io.lockbridge.spring.Locks;
import org.springframework.stereotype.Service;

/** A job only one instance of the fleet runs at a time per report. */
@Service
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
