package io.lockbridge.spring;

import io.lockbridge.LockListener;

/**
 * What {@link Locks} reports as it locks, with the meaning of Go's
 * OpenTelemetry instruments (docs/observability.md): the calls' outcomes
 * and fences, which Locks sees, and — as the {@link LockListener} Locks
 * hands to the locker it builds — what only the locker sees (each attempt
 * that found the lock held, the time lock() waited, the background
 * refreshes, the losses, the legacy sightings). {@link LockbridgeMeters}
 * records it with Micrometer; {@link #NONE} drops it.
 */
public interface LockObserver extends LockListener {
    /** Drops everything (and Locks then gives its locker no listener). */
    LockObserver NONE = new LockObserver() {};

    /**
     * A tryLock or lock call ended: operation try_lock or lock, outcome
     * obtained, not_obtained, unknown, invalid or error.
     */
    default void acquired(String system, String operation, String outcome, long nanos) {}

    /** The fence of an acquire (only fenced locks have one). */
    default void fence(String system, long fence) {}
}
