package io.lockbridge;

/**
 * What a locker reports of what happens inside its calls and in the
 * background, where a caller cannot see it: the events behind Go's
 * OpenTelemetry instruments (docs/observability.md) that no wrapper can
 * observe from outside. Pass one with the lockers' {@code listener(...)}
 * builder option; the default is none, and a locker without one makes no
 * calls and reads no extra clock.
 *
 * <p>{@code system} is the locker's {@code lockbridge.lock.system}:
 * {@code legacy}, {@code modern} or {@code migrate}. Methods are called on
 * the caller's thread (contended, waited, sighted) or on lockbridge's own
 * (refreshed, lost): they must return quickly, must not call back into the
 * lock, and what they throw is dropped. Every method does nothing by
 * default.
 */
public interface LockListener {
    /** How a background refresh ended: {@code lockbridge.lock.outcome} refreshed, not_held or error. */
    enum Refresh {
        /** The lease was extended. */
        REFRESHED("refreshed"),
        /** The lock was found gone or taken (the lock is then lost). */
        NOT_HELD("not_held"),
        /** Redis failed or did not answer (retried while the lease allows, else lost). */
        ERROR("error");

        private final String tag;

        Refresh(String tag) {
            this.tag = tag;
        }

        /** The outcome's attribute value, as Go names it. */
        public String tag() {
            return tag;
        }
    }

    /**
     * An attempt found the lock held by another: each tryLock not obtained,
     * each failed attempt of a lock() call (Go's lockbridge.lock.contention).
     */
    default void contended(String system) {}

    /**
     * A lock() call that waited spent nanos waiting between its attempts
     * (its sleeps and waits for a release notice, not the attempts' round
     * trips); called once per call, when it ends, only if it waited (Go's
     * lockbridge.lock.wait.duration).
     */
    default void waited(String system, long nanos) {}

    /**
     * The background refresher (auto-refresh) refreshed a held lock, with
     * this outcome (Go's lockbridge.lock.refreshes). A caller's own
     * {@link Lock#refresh} is not reported.
     */
    default void refreshed(String system, Refresh outcome) {}

    /**
     * A held lock was lost (Go's lockbridge.lock.lost): of the locks an
     * auto-refresh keeps, a refresh, unlock or ttl() found it gone or
     * taken, or no refresh succeeded before its give-up point; and every
     * {@link MigrateLocker} lock, including those a phase move ended.
     * Called once per lock, just after its {@link Lock#done()} completed
     * (never before: a listener that blocks must not hold the loss signal).
     */
    default void lost(String system) {}

    /**
     * A {@link MigrateLocker} with a namespace met a legacy-only holder and
     * recorded it in namespace's registry (at most once a second per
     * locker; Go's lockbridge.migrate.sightings).
     */
    default void sighted(String namespace) {}
}
