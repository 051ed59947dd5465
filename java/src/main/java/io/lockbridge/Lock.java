package io.lockbridge;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;

/**
 * A held lock. Release it with {@link #unlock()} (or close, in a
 * try-with-resources). A lock can be lost — taken, expired without a
 * refresh, ended because its locker moved to a phase that does not exclude
 * it, or after an operation of unknown outcome —: then {@link #done()}
 * completes exceptionally with a {@link LostException}, and is never
 * silently re-acquired. Safe for use from several threads.
 */
public interface Lock extends AutoCloseable {
    /** The lock name the caller gave. */
    String name();

    /** The phase the lock was taken in (LEGACY for a {@link LegacyLocker}'s). */
    Phase phase();

    /** The fence of the acquisition: a {@link ModernLocker}'s with fencing on; 0 for every other lock. */
    long fence();

    /** When the lease ends by this process's clock (without further refreshes). */
    Instant expiresAt();

    /**
     * How long the local lease has left, by this process's monotonic clock:
     * the send time of the last confirmed grant plus its ttl, minus now;
     * zero once the lock has ended (released or lost) or that time passed.
     * Nothing is sent. {@link #done()} signals the loss ttl/12 earlier.
     */
    Duration remaining();

    /**
     * The lock's remaining lease as the server counts it (Go's
     * {@code modern.Lock.TTL}), if the lock is still ours: one read
     * (modern/ttl.lua, PTTL if the key holds our token); negative when
     * someone removed the key's expiry. When the key is gone or holds
     * another token: {@link NotHeldException}, and the lock counts as lost
     * ({@link #done()} completes with a {@link LostException}). A read
     * without a reply: {@link UnknownOutcomeException} (it changed nothing;
     * the lock stays as it was). Only a {@link ModernLocker}'s locks read it;
     * the others throw {@link InvalidException}.
     */
    default Duration ttl() {
        throw new InvalidException("lockbridge: ttl() reads a ModernLocker's lock; this lock is a " + phase()
                + " lock");
    }

    /** Whether the lock is still held as far as this process knows. */
    boolean isHeld();

    /**
     * Completes normally once the lock is released, exceptionally with a
     * {@link LostException} once it is lost: the lost-lock signal. It is a
     * timer: at the latest ttl/12 before the local lease ends (the send time
     * of the last confirmed grant plus its ttl), refreshed or not, whatever
     * is in flight; the lock is then over, and no later refresh revives it.
     * Its callbacks never run on lockbridge's timer or watchdog threads.
     */
    CompletableFuture<Void> done();

    /**
     * Releases the lock. Throws {@link NotHeldException} when it was no
     * longer ours (or had ended), {@link UnknownOutcomeException} when the
     * release got no reply (the lock then counts as lost: it is not sent
     * again).
     */
    void unlock();

    /**
     * Extends the lease to ttl from now. Same exceptions as unlock; and a
     * {@link ModernLocker}'s with waitForReplicas throws
     * {@link ReplicationException} for a refresh too few replicas
     * acknowledged (not counted: the lock is still held, its lease keeps its
     * end).
     */
    void refresh(Duration ttl);

    /** {@link #unlock()}. */
    @Override
    default void close() {
        unlock();
    }
}
