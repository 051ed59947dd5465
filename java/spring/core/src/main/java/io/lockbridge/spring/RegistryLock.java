package io.lockbridge.spring;

import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;

import io.lockbridge.NotHeldException;
import io.lockbridge.NotObtainedException;

/**
 * One lock of a {@link RegistryLocks}: a {@link java.util.concurrent.locks.Lock}
 * with RedisLockRegistry's semantics, on lockbridge's modern lock.
 *
 * <ul>
 * <li>Reentrant within this process, as RedisLockRegistry's: a local
 * {@link ReentrantLock} orders the threads of this process; the first hold
 * takes the Redis lock, each re-entry renews its lease (an owner-checked
 * refresh to the call's ttl, as RedisLockRegistry's obtain script renews
 * its own key — Spring Integration's {@code LockRegistryLeaderInitiator}
 * keeps its leadership by re-entering every heartbeat), and the last
 * unlock releases it. A re-entry that finds the lock lost acquires anew,
 * as RedisLockRegistry's does: {@code tryLock} returns false while another
 * holds it.
 * <li>{@link #lock()} waits until obtained and is not interruptible (an
 * interrupt is kept and re-asserted once locked);
 * {@link #lockInterruptibly()} and {@link #tryLock(long, TimeUnit)} throw
 * {@link InterruptedException}; {@link #tryLock()} is one attempt.
 * <li>A Redis failure while locking throws lockbridge's typed exception (a
 * {@code RedisUnavailableException}, an {@code UnknownOutcomeException} —
 * the acquire is never sent twice), after giving up the local hold.
 * <li>{@link #unlock()} by a thread that does not hold it throws
 * {@link IllegalStateException}; an unlock that finds the lease lost
 * (expired and perhaps taken by another) throws
 * {@link ConcurrentModificationException}, as RedisLockRegistry does, and
 * never deletes the new holder's key; either way this process's hold ends.
 * An interrupted thread's unlock still releases.
 * <li>{@link #newCondition()} is not supported.
 * </ul>
 */
public class RegistryLock implements Lock {
    /** lock()'s wait, renewed until obtained. */
    private static final Duration FOREVER = Duration.ofDays(365);

    private final RegistryLocks<?> registry;
    private final String lockKey;
    private final String key;
    private final ReentrantLock local = new ReentrantLock();
    private volatile io.lockbridge.Lock held; // written by the holding thread only
    private volatile long lockedAt;

    protected RegistryLock(RegistryLocks<?> registry, String lockKey) {
        this.registry = registry;
        this.lockKey = lockKey;
        this.key = registry.registryKey() + ":" + lockKey;
    }

    /** The Redis key: registryKey:lockKey. */
    public String key() {
        return key;
    }

    /** The lockbridge lock while this process holds it (its done() is the lost-lock signal), else null. */
    public io.lockbridge.Lock held() {
        return held;
    }

    long lockedAt() {
        return lockedAt;
    }

    /** Whether a thread of this process holds it. */
    public boolean isAcquiredInThisProcess() {
        return local.isLocked();
    }

    @Override
    public void lock() {
        lock(registry.expireAfter());
    }

    /** {@link #lock()} with a lease of ttl (Spring Integration 7's DistributedLock). */
    public void lock(Duration ttl) {
        local.lock();
        boolean interrupted = false;
        try {
            if (renewedOnReentry(ttl)) {
                return;
            }
            while (true) {
                interrupted |= Thread.interrupted(); // kept for later: the wait below must not end on it
                try {
                    obtained(registry.locker().lock(key, ttl, FOREVER));
                    return;
                } catch (NotObtainedException e) {
                    // the wait ended (or was interrupted): wait again
                }
            }
        } catch (RuntimeException e) {
            local.unlock();
            throw e;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        local.lockInterruptibly();
        try {
            if (renewedOnReentry(registry.expireAfter())) {
                return;
            }
            while (true) {
                if (Thread.interrupted()) {
                    throw new InterruptedException("lockbridge: interrupted while waiting for " + key);
                }
                try {
                    obtained(registry.locker().lock(key, registry.expireAfter(), FOREVER));
                    return;
                } catch (NotObtainedException e) {
                    if (e.getCause() instanceof InterruptedException interrupt) {
                        Thread.interrupted();
                        throw interrupt;
                    }
                }
            }
        } catch (InterruptedException | RuntimeException e) {
            local.unlock();
            throw e;
        }
    }

    @Override
    public boolean tryLock() {
        if (!local.tryLock()) {
            return false;
        }
        try {
            if (renewedOnReentry(registry.expireAfter())) {
                return true;
            }
            obtained(registry.locker().tryLock(key, registry.expireAfter()));
            return true;
        } catch (NotObtainedException e) {
            local.unlock();
            return false;
        } catch (RuntimeException e) {
            local.unlock();
            throw e;
        }
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return tryLock(Duration.ofNanos(unit.toNanos(time)), registry.expireAfter());
    }

    /** {@link #tryLock(long, TimeUnit)} with a lease of ttl (Spring Integration 7's DistributedLock). */
    public boolean tryLock(Duration wait, Duration ttl) throws InterruptedException {
        long start = System.nanoTime();
        if (!local.tryLock(wait.toNanos(), TimeUnit.NANOSECONDS)) {
            return false;
        }
        try {
            if (renewedOnReentry(ttl)) {
                return true;
            }
            if (Thread.interrupted()) {
                throw new InterruptedException("lockbridge: interrupted while waiting for " + key);
            }
            Duration left = wait.minusNanos(System.nanoTime() - start);
            obtained(registry.locker().lock(key, ttl, left.isNegative() ? Duration.ZERO : left));
            return true;
        } catch (NotObtainedException e) {
            local.unlock();
            if (e.getCause() instanceof InterruptedException interrupt) {
                Thread.interrupted();
                throw interrupt;
            }
            return false;
        } catch (InterruptedException | RuntimeException e) {
            local.unlock();
            throw e;
        }
    }

    /**
     * On a re-entry (the thread already held the lock): renews the lease to
     * ttl from now, owner-checked, as RedisLockRegistry's obtain script
     * does on a re-entry (PEXPIRE when the key holds its own value) — what
     * LockRegistryLeaderInitiator's heartbeat relies on. True when renewed;
     * false on a first hold, or when the lock was lost (its lease ran out,
     * or another holds the key): the caller then acquires anew, as the
     * obtain script does (SET when the key is gone, else not obtained).
     * Other errors (a Redis failure, an unknown outcome) are thrown.
     */
    private boolean renewedOnReentry(Duration ttl) {
        io.lockbridge.Lock heldLock = held;
        if (local.getHoldCount() == 1 || heldLock == null) {
            return false;
        }
        try {
            heldLock.refresh(ttl);
        } catch (NotHeldException e) {
            return false;
        }
        lockedAt = System.currentTimeMillis();
        return true;
    }

    private void obtained(io.lockbridge.Lock taken) {
        held = taken;
        lockedAt = System.currentTimeMillis();
    }

    @Override
    public void unlock() {
        if (!local.isHeldByCurrentThread()) {
            throw new IllegalStateException("lockbridge: the current thread does not hold lock " + key);
        }
        if (local.getHoldCount() > 1) {
            local.unlock();
            return;
        }
        io.lockbridge.Lock heldLock = held;
        held = null;
        boolean interrupted = Thread.interrupted(); // the release runs to its end, then the interrupt is back
        try {
            heldLock.unlock();
        } catch (NotHeldException e) {
            throw new ConcurrentModificationException("lockbridge: lock " + key + " was no longer held when released "
                    + "(its lease ended, and another may have taken it): what it protected may have been changed "
                    + "meanwhile", e);
        } finally {
            local.unlock();
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Extends the lease to ttl from now; IllegalStateException when not held, or no longer. */
    void renew(Duration ttl) {
        io.lockbridge.Lock heldLock = held;
        if (heldLock == null) {
            throw new IllegalStateException("lockbridge: could not renew lock " + key + ": not held in this process");
        }
        try {
            heldLock.refresh(ttl);
        } catch (NotHeldException e) {
            throw new IllegalStateException("lockbridge: could not renew lock " + key + ": no longer held", e);
        }
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("lockbridge: conditions are not supported");
    }

    /** The registry's key for the lock (the name given to obtain). */
    public String lockKey() {
        return lockKey;
    }

    @Override
    public String toString() {
        return "RegistryLock[" + key + (held != null ? ", held" : "") + "]";
    }
}
