package io.lockbridge.spring;

/**
 * What {@link Locks} reports as it locks, with the meaning of Go's
 * OpenTelemetry instruments (docs/observability.md). {@link LockbridgeMeters}
 * records it with Micrometer; {@link #NONE} drops it.
 */
public interface LockObserver {
    /** Drops everything. */
    LockObserver NONE = new LockObserver() {};

    /** A tryLock or lock call ended: operation try_lock or lock, outcome obtained, not_obtained, unknown, invalid or error. */
    default void acquired(String system, String operation, String outcome, long nanos) {}

    /** A lock call waited this long after its first attempt found the lock held. */
    default void waited(String system, long nanos) {}

    /** An attempt found the lock held by another. */
    default void contended(String system) {}

    /** A refresh through the held lock: outcome refreshed, not_held or error. */
    default void refreshed(String system, String outcome) {}

    /** A held lock was lost (its done() completed with a LostException). */
    default void lost(String system) {}

    /** The fence of an acquire (only fenced locks have one). */
    default void fence(String system, long fence) {}
}
