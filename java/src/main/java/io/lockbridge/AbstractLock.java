package io.lockbridge;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * What every lock shares: its local lease (on the monotonic clock), its end
 * (released or lost, once), and the watchdog that refreshes it: every ttl/3;
 * after an error every ttl/12; lost at once when a refresh finds it not
 * ours, and lost when no refresh has succeeded by ttl/12 before the local
 * lease end — as Go's auto-refresh.
 */
abstract class AbstractLock implements Lock {
    final String name;
    final Phase phase;
    final Object op = new Object(); // serialises unlock and refresh
    private final CompletableFuture<Void> done = new CompletableFuture<>();

    private final Object mu = new Object();
    private long endNanos; // the local lease end, System.nanoTime()
    private Duration ttl; // the lease last asked for
    private boolean ended;
    private LostException lost;

    /** A migrate lock's phase lease, asked before each refresh. */
    interface Trust {
        /** Throws to refuse a refresh to ttl; else the end of the phase lease it is trusted under (System.nanoTime()). */
        long until(Duration ttl);

        /** The error of a refresh of a lock taken in p that came back at or after that end. */
        RuntimeException outlived(Phase p);
    }

    /** Asked before each refresh; null without a phase lease. */
    volatile Trust trust;
    private Trust refreshTrust; // under op: the trust of the refresh in flight, null without one
    private long refreshUntil; // under op: the end of its phase lease

    private ScheduledExecutorService watchdog;
    private ScheduledFuture<?> next;
    private boolean refreshing; // under mu: auto-refreshed, until unlock stops it
    private long giveUpGen; // under mu: the give-up point armed last

    /**
     * Where the give-up point is watched: not the watchdog's thread, which a
     * refresh waiting for a stalled server (up to the command timeout, past
     * the lease) holds, and which a closed locker has stopped.
     */
    static Executor giveUpAt(long nanos) {
        return CompletableFuture.delayedExecutor(Math.max(0, nanos), TimeUnit.NANOSECONDS);
    }

    AbstractLock(String name, Phase phase, long startNanos, Duration localTtl, Duration ttl) {
        this.name = name;
        this.phase = phase;
        this.endNanos = startNanos + localTtl.toNanos();
        this.ttl = ttl;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Phase phase() {
        return phase;
    }

    @Override
    public long fence() {
        return 0;
    }

    @Override
    public Instant expiresAt() {
        synchronized (mu) {
            return Instant.now().plusNanos(endNanos - System.nanoTime());
        }
    }

    /** How long the local lease has left (negative when past). */
    Duration left() {
        synchronized (mu) {
            return Duration.ofNanos(endNanos - System.nanoTime());
        }
    }

    Duration ttl() {
        synchronized (mu) {
            return ttl;
        }
    }

    @Override
    public boolean isHeld() {
        synchronized (mu) {
            return !ended && System.nanoTime() - endNanos < 0;
        }
    }

    boolean ended() {
        synchronized (mu) {
            return ended;
        }
    }

    @Override
    public CompletableFuture<Void> done() {
        return done;
    }

    /**
     * Sets the lease to localTtl from startNanos (a refresh's send time) —
     * unless the refresh came back after the phase lease it was sent under
     * had ended: the registry may not cover the new lease, so the lock keeps
     * the one it covered, and the refresh fails with the trust's error.
     */
    void extend(long startNanos, Duration localTtl, Duration newTtl) {
        Trust t = refreshTrust;
        synchronized (mu) {
            ttl = newTtl;
            if (t == null || System.nanoTime() - refreshUntil < 0) {
                endNanos = startNanos + localTtl.toNanos();
                armGiveUpLocked();
                return;
            }
        }
        throw t.outlived(phase);
    }

    /** Ends the lock as released. */
    void released() {
        synchronized (mu) {
            if (ended) {
                return;
            }
            ended = true;
            stopLocked();
        }
        done.complete(null);
    }

    /** Ends the lock as lost, with why. */
    void lose(String why, Throwable cause) {
        LostException e;
        synchronized (mu) {
            e = endLostLocked(why, cause);
        }
        if (e != null) {
            done.completeExceptionally(e);
        }
    }

    /** Under mu: ends the lock as lost; null when it had ended already. */
    private LostException endLostLocked(String why, Throwable cause) {
        if (ended) {
            return null;
        }
        ended = true;
        lost = new LostException("lockbridge: lock " + Keys.show(name) + " lost: " + why, cause);
        stopLocked();
        return lost;
    }

    /**
     * Under mu: an auto-refreshed lock is lost once no refresh has succeeded
     * by ttl/12 before its local lease's end (Go's give-up point), whatever
     * holds up or stopped the watchdog. Each extension arms a new point;
     * the older ones find they are not the last and do nothing.
     */
    private void armGiveUpLocked() {
        if (ended || !refreshing) {
            return;
        }
        long gen = ++giveUpGen;
        long at = endNanos - ttl.toNanos() / 12;
        giveUpAt(at - System.nanoTime()).execute(() -> giveUp(gen));
    }

    private void giveUp(long gen) {
        LostException e;
        synchronized (mu) {
            if (!refreshing || gen != giveUpGen) {
                return;
            }
            e = endLostLocked("no refresh succeeded before the lease's last ttl/12", null);
        }
        if (e != null) {
            done.completeExceptionally(e);
        }
    }

    /** Throws NotHeldException(ENDED) when the lock has ended. */
    void checkNotEnded(String opName) {
        synchronized (mu) {
            if (!ended) {
                return;
            }
            if (lost != null) {
                NotHeldException e = new NotHeldException(name, NotHeldException.Reason.ENDED, opName + ": the lock was lost");
                e.initCause(lost);
                throw e;
            }
            throw new NotHeldException(name, NotHeldException.Reason.ENDED, opName + ": the lock was released");
        }
    }

    @Override
    public void unlock() {
        stopWatchdog();
        synchronized (op) {
            checkNotEnded("unlock");
            try {
                release();
                released();
            } catch (NotHeldException e) {
                lose("unlock found it " + e.reason().name().toLowerCase(), e);
                throw e;
            } catch (UnknownOutcomeException e) {
                lose("the release may or may not have happened", e);
                throw e;
            }
        }
    }

    @Override
    public void refresh(Duration newTtl) {
        checkTtl(newTtl);
        synchronized (op) {
            refreshLocked(newTtl);
        }
    }

    private void refreshLocked(Duration newTtl) {
        checkNotEnded("refresh");
        Trust t = trust;
        refreshTrust = null;
        if (t != null) {
            refreshUntil = t.until(newTtl); // never refresh in a phase no longer trusted
            refreshTrust = t;
        }
        try {
            refreshOnce(newTtl);
        } catch (NotHeldException e) {
            lose("refresh found it " + e.reason().name().toLowerCase(), e);
            throw e;
        } catch (UnknownOutcomeException e) {
            lose("the refresh may or may not have happened", e);
            throw e;
        }
    }

    /** The longest ttl: Go's longest time.Duration, 2^63-1 ns (about 292 years); a lease's arithmetic never overflows below it. */
    static final Duration MAX_TTL = Duration.ofNanos(Long.MAX_VALUE);

    /** Throws InvalidException unless 1 ms &lt;= ttl &lt;= {@link #MAX_TTL}. */
    static void checkTtl(Duration ttl) {
        if (ttl == null || ttl.compareTo(Duration.ofMillis(1)) < 0) {
            throw new InvalidException("lockbridge: ttl " + ttl + " is below 1ms");
        }
        if (ttl.compareTo(MAX_TTL) > 0) {
            throw new InvalidException("lockbridge: ttl " + ttl + " is above " + MAX_TTL + " (2^63-1 ns)");
        }
    }

    /** Sends the release once; NotHeldException when it was not ours. */
    abstract void release();

    /** Sends the refresh once and extends the local lease; NotHeldException when not ours. */
    abstract void refreshOnce(Duration newTtl);

    /** Starts the watchdog on ex. */
    void autoRefresh(ScheduledExecutorService ex) {
        synchronized (mu) {
            watchdog = ex;
            refreshing = true;
            schedule(ttl.dividedBy(3));
            armGiveUpLocked();
        }
    }

    private void schedule(Duration in) {
        if (ended || watchdog == null) {
            return;
        }
        try {
            next = watchdog.schedule(this::tick, Math.max(1, in.toNanos()), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // The locker was closed meanwhile: no more refreshes; the
            // give-up point still signals the loss.
            watchdog = null;
            next = null;
        }
    }

    private void tick() {
        Duration t = ttl();
        synchronized (op) {
            if (ended()) {
                return;
            }
            try {
                refreshLocked(t);
                synchronized (mu) {
                    schedule(t.dividedBy(3));
                }
                return;
            } catch (NotHeldException | UnknownOutcomeException e) {
                return; // lost, by refreshLocked
            } catch (RuntimeException e) {
                Duration retry = t.dividedBy(12);
                if (left().compareTo(retry.multipliedBy(2)) <= 0) {
                    lose("no refresh succeeded before the lease's last ttl/12", e);
                    return;
                }
                synchronized (mu) {
                    schedule(retry);
                }
            }
        }
    }

    /** Stops the watchdog; a refresh in flight finishes first (unlock takes op after). */
    void stopWatchdog() {
        synchronized (mu) {
            stopLocked();
        }
    }

    private void stopLocked() {
        watchdog = null;
        refreshing = false;
        if (next != null) {
            next.cancel(false);
            next = null;
        }
    }
}
