package io.lockbridge;

/**
 * A locker's {@link LockListener} bound to its system, with what the
 * listener throws dropped: a listener never fails a lock call nor stops a
 * refresher. Lockers without a listener hold null and call nothing.
 */
final class Events {
    final String system;
    private final LockListener l;

    private Events(String system, LockListener l) {
        this.system = system;
        this.l = l;
    }

    /** The events of l for system; null when l is null (no listener). */
    static Events of(String system, LockListener l) {
        return l == null ? null : new Events(system, l);
    }

    void contended() {
        try {
            l.contended(system);
        } catch (RuntimeException ignored) {
            // a listener's failure is not the lock's
        }
    }

    void waited(long nanos) {
        if (nanos <= 0) {
            return;
        }
        try {
            l.waited(system, nanos);
        } catch (RuntimeException ignored) {
            // a listener's failure is not the lock's
        }
    }

    void refreshed(LockListener.Refresh outcome) {
        try {
            l.refreshed(system, outcome);
        } catch (RuntimeException ignored) {
            // a listener's failure is not the lock's
        }
    }

    void lost() {
        try {
            l.lost(system);
        } catch (RuntimeException ignored) {
            // a listener's failure is not the lock's
        }
    }

    void sighted(String namespace) {
        try {
            l.sighted(namespace);
        } catch (RuntimeException ignored) {
            // a listener's failure is not the lock's
        }
    }
}
