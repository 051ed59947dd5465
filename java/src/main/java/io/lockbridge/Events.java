package io.lockbridge;

/**
 * A locker's {@link LockListener} bound to its system, with what the
 * listener throws dropped: a listener never fails a lock call nor stops a
 * refresher. Lockers without a listener hold null and call nothing.
 */
final class Events {
    final String system;
    private final LockListener listener;

    private Events(String system, LockListener listener) {
        this.system = system;
        this.listener = listener;
    }

    /** The events of listener for system; null when listener is null (none). */
    static Events of(String system, LockListener listener) {
        return listener == null ? null : new Events(system, listener);
    }

    void contended() {
        try {
            listener.contended(system);
        } catch (RuntimeException ignored) {
            // a listener's failure is not the lock's
        }
    }

    void waited(long nanos) {
        if (nanos <= 0) {
            return;
        }
        try {
            listener.waited(system, nanos);
        } catch (RuntimeException ignored) {
            // a listener's failure is not the lock's
        }
    }

    void refreshed(LockListener.Refresh outcome) {
        try {
            listener.refreshed(system, outcome);
        } catch (RuntimeException ignored) {
            // a listener's failure is not the lock's
        }
    }

    void lost() {
        try {
            listener.lost(system);
        } catch (RuntimeException ignored) {
            // a listener's failure is not the lock's
        }
    }

    void sighted(String namespace) {
        try {
            listener.sighted(namespace);
        } catch (RuntimeException ignored) {
            // a listener's failure is not the lock's
        }
    }
}
