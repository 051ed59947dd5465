package io.lockbridge;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * What every lock shares: its local lease (on the monotonic clock), its end
 * (released or lost, once), the give-up timer that ends it, and the watchdog
 * that refreshes it: every ttl/3; after an error every ttl/12; lost at once
 * when a refresh finds it not ours — as Go's auto-refresh.
 *
 * <p>The loss signal is a timer. The local lease ends at the send time of
 * the last confirmed grant plus its ttl; ttl/12 before that end (the
 * give-up point) the lease timer — a thread of lockbridge's own that runs
 * nothing else, never the common pool — ends the lock as lost, whether or
 * not anything refreshes it, and nothing in flight delays it: a refresh
 * waiting for a stalled server, an unlock waiting for that refresh. A
 * refresh in flight may shorten the local lease (to its send time plus its
 * ttl, from the moment it is sent), never hold it open; a lock past its
 * give-up point is over, and no refresh whose reply comes later revives it.
 * done()'s callbacks never run on the timer's or a watchdog's thread.
 *
 * <p>For the heartbeats ({@link HeldSet}) a lock also keeps a bound on its
 * server-side lease: every write that may have run (a refresh confirmed,
 * or of unknown outcome, or in flight) keeps it reported until the write's
 * lease has surely ended.
 */
abstract class AbstractLock implements Lock {
    final String name;
    final Phase phase;
    final Object opLock = new Object(); // serialises unlock and refresh
    private final CompletableFuture<Void> done = new CompletableFuture<>();

    private final Object stateLock = new Object();
    private long endNanos; // the local lease end, System.nanoTime()
    private long giveUpNanos; // the give-up point: the lease timer ends the lock here
    private Duration ttl; // the lease last asked for
    private boolean ended;
    private LostException lost;
    private boolean auto; // refreshed by a watchdog (for the loss's reason)
    private long serverEndNanos; // the server-side lease has surely ended by then, but for a write in flight
    // under stateLock: a refresh is in flight that may keep the lock on the server this long after it runs
    private Duration inflightHold;

    /** A migrate lock's phase lease, asked before each refresh. */
    interface Trust {
        /**
         * Throws to refuse a refresh to ttl; else the end of the phase lease it
         * is trusted under (System.nanoTime()).
         */
        long until(Duration ttl);

        /** The error of a refresh of a lock taken in phase that came back at or after that end. */
        RuntimeException outlived(Phase phase);
    }

    /** Asked before each refresh; null without a phase lease. */
    volatile Trust trust;

    /**
     * Where the loss and the background refreshes are reported (a locker's
     * {@link LockListener}); null: nowhere. Set by the locker before the
     * lock is handed out, for the locks Go's instruments count: those an
     * auto-refresh keeps, and every migrate lock.
     */
    volatile Events events;

    /** Run once the release is confirmed (a locker's {@link LocalWakes}); null: nothing. */
    volatile Runnable afterRelease;
    private Trust refreshTrust; // under opLock: the trust of the refresh in flight, null without one
    private long refreshUntil; // under opLock: the end of its phase lease
    private Duration sentHold; // under opLock: the hold of the refresh sent, null until it is
    private boolean refreshSent; // under opLock: the last refresh was sent

    private ScheduledExecutorService watchdog;
    private ScheduledFuture<?> next;
    private LeaseTimer.Task timer; // under stateLock: the give-up point armed last
    private long timerGen; // under stateLock

    /**
     * The lease timer ({@link LeaseTimer}): one daemon thread of lockbridge's
     * own for every lock's give-up point. Its tasks only take a lock's stateLock
     * (never held across I/O) and hand done()'s completion to
     * {@link #SIGNAL}, so no caller's code, no stalled command and no busy
     * shared pool delays it.
     */
    private static final LeaseTimer TIMER = new LeaseTimer("lockbridge-lease-timer");

    /**
     * Where a loss found on lockbridge's own threads completes done(): the
     * callers' callbacks run here, not on the timer or a watchdog.
     */
    private static final ExecutorService SIGNAL = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30, TimeUnit.SECONDS,
            new SynchronousQueue<>(), Threads.daemon("lockbridge-done"));

    /**
     * Where auto-refreshes run: a locker's watchdog only times them. One
     * refresh stalled on its node (up to the command timeout) then holds
     * back no other lock's, as Go refreshes each lock on a goroutine of its
     * own; a lock's refreshes and its unlock stay serialised by its opLock.
     */
    private static final ExecutorService REFRESH = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30, TimeUnit.SECONDS,
            new SynchronousQueue<>(), Threads.daemon("lockbridge-refresh"));

    /** A lease this long or longer is treated as this long (about 73 years): nanoTime arithmetic never wraps. */
    private static final long FOREVER = Long.MAX_VALUE / 4;

    /** nanos + duration on the nanoTime clock, duration capped at {@link #FOREVER}. */
    static long plus(long nanos, Duration duration) {
        long durationNanos;
        try {
            durationNanos = duration.toNanos();
        } catch (ArithmeticException e) {
            durationNanos = FOREVER;
        }
        return nanos + Math.min(Math.max(durationNanos, 0), FOREVER);
    }

    /**
     * A lock obtained by an attempt sent at startNanos, counted localTtl
     * from then; ttl is the lease asked for; hold how long after the attempt
     * ran the server may keep the lock from others at most.
     */
    AbstractLock(String name, Phase phase, long startNanos, Duration localTtl, Duration ttl, Duration hold) {
        this.name = name;
        this.phase = phase;
        this.ttl = ttl;
        synchronized (stateLock) {
            endNanos = plus(startNanos, localTtl);
            giveUpNanos = endNanos - margin(ttl);
            serverEndNanos = plus(System.nanoTime(), hold);
            armLocked();
        }
    }

    /** The margin of a lease of ttl: ttl/12, Go's. */
    private static long margin(Duration ttl) {
        return plus(0, ttl) / 12;
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
        synchronized (stateLock) {
            return Instant.now().plusNanos(endNanos - System.nanoTime());
        }
    }

    /** How long the local lease has left (negative when past). */
    Duration left() {
        synchronized (stateLock) {
            return Duration.ofNanos(endNanos - System.nanoTime());
        }
    }

    /** The lease last asked for. */
    Duration leaseTtl() {
        synchronized (stateLock) {
            return ttl;
        }
    }

    @Override
    public Duration remaining() {
        synchronized (stateLock) {
            long left = endNanos - System.nanoTime();
            return ended || left <= 0 ? Duration.ZERO : Duration.ofNanos(left);
        }
    }

    @Override
    public boolean isHeld() {
        synchronized (stateLock) {
            return !ended && System.nanoTime() - endNanos < 0;
        }
    }

    boolean ended() {
        synchronized (stateLock) {
            return ended;
        }
    }

    @Override
    public CompletableFuture<Void> done() {
        return done;
    }

    /**
     * For the heartbeats: how much longer the lock may be held, here or on
     * the server — the local lease while it lasts, the bound of every write
     * that may have run, and the hold of a refresh in flight from now —;
     * null once released, or once it has surely ended everywhere.
     */
    Duration reported() {
        synchronized (stateLock) {
            if (ended && lost == null) {
                return null; // released: the release was confirmed
            }
            long now = System.nanoTime();
            long until = serverEndNanos;
            if (!ended && endNanos - until > 0) {
                until = endNanos;
            }
            if (inflightHold != null) {
                long inflightEnd = plus(now, inflightHold);
                if (inflightEnd - until > 0) {
                    until = inflightEnd;
                }
            }
            return until - now > 0 ? Duration.ofNanos(until - now) : null;
        }
    }

    /**
     * Called by refreshOnce just before it sends a refresh that, once
     * confirmed, counts localTtl from startNanos with lease newTtl, and may
     * keep the lock on the server for hold after it runs: from now on the
     * local lease ends no later than that (a call in flight may shorten the
     * lease, never hold it open), and the heartbeats count the refresh as
     * in flight until it settles.
     */
    void sending(long startNanos, Duration localTtl, Duration newTtl, Duration hold) {
        sentHold = hold;
        synchronized (stateLock) {
            inflightHold = hold;
            if (ended) {
                return;
            }
            long end = plus(startNanos, localTtl);
            if (end - endNanos < 0) {
                endNanos = end;
            }
            long newGiveUp = end - margin(newTtl);
            if (newGiveUp - giveUpNanos < 0) {
                giveUpNanos = newGiveUp;
                armLocked();
            }
        }
    }

    /** The refresh sent has settled; written: it may have run (anything but a reply saying it was not ours). */
    private void settled(Duration hold, boolean written) {
        synchronized (stateLock) {
            inflightHold = null;
            if (written) {
                long writeEnd = plus(System.nanoTime(), hold);
                if (writeEnd - serverEndNanos > 0) {
                    serverEndNanos = writeEnd;
                }
            }
        }
    }

    /**
     * Sets the lease to localTtl from startNanos (a confirmed refresh's send
     * time) — unless the lock is over: it ended, or its give-up point passed
     * before the reply came (NotHeldException ENDED: no refresh revives a
     * lock); or the refresh came back after the phase lease it was sent
     * under had ended: the registry may not cover the new lease, so the
     * lock keeps the one it covered, and the refresh fails with the trust's
     * error.
     */
    void extend(long startNanos, Duration localTtl, Duration newTtl) {
        Trust sentTrust = refreshTrust;
        LostException now = null;
        NotHeldException over;
        synchronized (stateLock) {
            if (!ended && System.nanoTime() - giveUpNanos < 0) {
                ttl = newTtl;
                if (sentTrust == null || System.nanoTime() - refreshUntil < 0) {
                    endNanos = plus(startNanos, localTtl);
                    giveUpNanos = endNanos - margin(newTtl);
                    armLocked();
                    return;
                }
                throw sentTrust.outlived(phase);
            }
            if (!ended) {
                now = endLostLocked(leaseRanOut(), null);
            }
            over = new NotHeldException(name, NotHeldException.Reason.ENDED,
                    "refresh: its reply came after the lease's give-up point (ttl/12 before its local end): the lock "
                            + "is over, and no refresh revives it");
            over.initCause(lost);
        }
        signal(now);
        throw over;
    }

    /** Ends the lock as released. */
    void released() {
        synchronized (stateLock) {
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
        LostException loss;
        synchronized (stateLock) {
            loss = endLostLocked(why, cause);
        }
        signal(loss);
    }

    /**
     * Completes done() with loss (nothing when null), then reports it to
     * the listener: on the caller's thread, or — on a thread of
     * lockbridge's own (the lease timer, a watchdog, a follower) — on
     * {@link #SIGNAL}, so that the callbacks of done() cannot hold up other
     * locks' timers and refreshes. done() completes first: the listener is
     * the caller's code, which may block, and the loss signal waits for
     * nothing.
     */
    private void signal(LostException loss) {
        if (loss == null) {
            return;
        }
        Events reportTo = events;
        if (Threads.own()) {
            try {
                SIGNAL.execute(() -> {
                    try {
                        done.completeExceptionally(loss);
                    } finally {
                        reportLost(reportTo);
                    }
                });
                return;
            } catch (RejectedExecutionException | OutOfMemoryError rejected) {
                // no thread to be had: complete it here
            }
        }
        try {
            done.completeExceptionally(loss);
        } finally {
            reportLost(reportTo);
        }
    }

    /** The loss reported to the listener, once done() has completed (on the lease timer's thread never: see signal). */
    private static void reportLost(Events reportTo) {
        if (reportTo != null) {
            reportTo.lost();
        }
    }

    /** Under stateLock: ends the lock as lost; null when it had ended already. */
    private LostException endLostLocked(String why, Throwable cause) {
        if (ended) {
            return null;
        }
        ended = true;
        lost = new LostException("lockbridge: lock " + Keys.show(name) + " lost: " + why, cause);
        stopLocked();
        return lost;
    }

    /** Under stateLock: the reason of a loss at the give-up point. */
    private String leaseRanOut() {
        return auto ? "the lease ran out: no refresh succeeded before the lease's last ttl/12"
                : "the lease ran out (nothing refreshed it before its last ttl/12)";
    }

    /**
     * Under stateLock: arms the lease timer at the give-up point, ttl/12 before
     * the local lease's end, for every lock, refreshed or not, until it has
     * ended. Each change of the point arms a new one; the older ones find
     * they are not the last and do nothing.
     */
    private void armLocked() {
        if (ended) {
            return;
        }
        long gen = ++timerGen;
        if (timer != null) {
            TIMER.cancel(timer);
        }
        timer = TIMER.schedule(() -> giveUp(gen), giveUpNanos);
    }

    private void giveUp(long gen) {
        LostException loss;
        synchronized (stateLock) {
            if (gen != timerGen || ended) {
                return;
            }
            if (System.nanoTime() - giveUpNanos < 0) {
                armLocked(); // early
                return;
            }
            loss = endLostLocked(leaseRanOut(), null);
        }
        signal(loss);
    }

    /**
     * Ends the lock as lost when its give-up point has passed and the timer has
     * not run yet (nothing is sent past it).
     */
    private void pastGiveUp() {
        LostException loss = null;
        synchronized (stateLock) {
            if (!ended && System.nanoTime() - giveUpNanos >= 0) {
                loss = endLostLocked(leaseRanOut(), null);
            }
        }
        signal(loss);
    }

    /** Throws NotHeldException(ENDED) when the lock has ended. */
    void checkNotEnded(String opName) {
        synchronized (stateLock) {
            if (!ended) {
                return;
            }
            if (lost != null) {
                NotHeldException notHeld = new NotHeldException(name, NotHeldException.Reason.ENDED,
                        opName + ": the lock was lost");
                notHeld.initCause(lost);
                throw notHeld;
            }
            throw new NotHeldException(name, NotHeldException.Reason.ENDED, opName + ": the lock was released");
        }
    }

    /**
     * Releases the lock. The watchdog schedules no more refreshes; one in
     * flight finishes first (unlock waits for it), and the lease timer stays
     * armed meanwhile: done() still completes at the give-up point.
     */
    @Override
    public void unlock() {
        stopWatchdog();
        synchronized (opLock) {
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
        Runnable hook = afterRelease;
        if (hook != null) {
            hook.run();
        }
    }

    @Override
    public void refresh(Duration newTtl) {
        checkTtl(newTtl);
        synchronized (opLock) {
            refreshLocked(newTtl);
        }
    }

    private void refreshLocked(Duration newTtl) {
        pastGiveUp();
        checkNotEnded("refresh");
        Trust trustNow = trust;
        refreshTrust = null;
        if (trustNow != null) {
            refreshUntil = trustNow.until(newTtl); // never refresh in a phase no longer trusted
            refreshTrust = trustNow;
        }
        sentHold = null;
        boolean written = true;
        try {
            refreshOnce(newTtl);
        } catch (NotHeldException e) {
            // ENDED: ours (extend); the others: the script's reply, nothing written
            written = e.reason() == NotHeldException.Reason.ENDED;
            lose("refresh found it " + e.reason().name().toLowerCase(), e);
            throw e;
        } catch (UnknownOutcomeException e) {
            lose("the refresh may or may not have happened", e);
            throw e;
        } finally {
            refreshSent = sentHold != null;
            if (sentHold != null) {
                settled(sentHold, written);
                sentHold = null;
            }
        }
    }

    /**
     * The longest ttl: Go's longest time.Duration, 2^63-1 ns (about 292 years);
     * a lease's arithmetic never overflows below it.
     */
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

    /**
     * Sends the refresh once — calling {@link #sending} just before — and
     * extends the local lease ({@link #extend}); NotHeldException when not
     * ours.
     */
    abstract void refreshOnce(Duration newTtl);

    /** Starts the watchdog on executor. */
    void autoRefresh(ScheduledExecutorService executor) {
        synchronized (stateLock) {
            watchdog = executor;
            auto = true;
            schedule(ttl.dividedBy(3));
        }
    }

    private void schedule(Duration delay) {
        if (ended || watchdog == null) {
            return;
        }
        try {
            next = watchdog.schedule(this::handOff, Math.max(1, delay.toNanos()), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            // The locker was closed meanwhile: no more refreshes; the
            // lease timer still signals the loss.
            watchdog = null;
            next = null;
        }
    }

    /** On the watchdog: runs the tick on a refresh thread of its own. */
    private void handOff() {
        try {
            REFRESH.execute(this::tick);
        } catch (RejectedExecutionException | OutOfMemoryError e) {
            tick(); // no thread to be had: here
        }
    }

    private void tick() {
        synchronized (stateLock) {
            if (watchdog == null || watchdog.isShutdown()) {
                watchdog = null;
                return; // stopped (an unlock, the locker closed) since the tick was timed
            }
        }
        Duration currentTtl = leaseTtl();
        synchronized (opLock) {
            if (ended()) {
                return;
            }
            Events reportTo = events;
            try {
                refreshLocked(currentTtl);
                if (reportTo != null) {
                    reportTo.refreshed(LockListener.Refresh.REFRESHED);
                }
                synchronized (stateLock) {
                    schedule(currentTtl.dividedBy(3));
                }
                return;
            } catch (NotHeldException e) {
                if (reportTo != null && refreshSent) { // else the lock had ended: nothing was sent
                    // ENDED after a send: the reply came past the
                    // give-up point, as Go's refresh cut off by its deadline
                    reportTo.refreshed(e.reason() == NotHeldException.Reason.ENDED ? LockListener.Refresh.ERROR
                            : LockListener.Refresh.NOT_HELD);
                }
                return; // lost, by refreshLocked
            } catch (UnknownOutcomeException e) {
                if (reportTo != null) {
                    reportTo.refreshed(LockListener.Refresh.ERROR);
                }
                return; // lost, by refreshLocked
            } catch (RuntimeException e) {
                if (reportTo != null) {
                    reportTo.refreshed(LockListener.Refresh.ERROR);
                }
                Duration retry = currentTtl.dividedBy(12);
                if (left().compareTo(retry.multipliedBy(2)) <= 0) {
                    lose("no refresh succeeded before the lease's last ttl/12", e);
                    return;
                }
                synchronized (stateLock) {
                    schedule(retry);
                }
            }
        }
    }

    /**
     * Stops the watchdog (no more ticks; the lease timer stays armed); a
     * refresh in flight finishes first (unlock takes opLock after).
     */
    void stopWatchdog() {
        synchronized (stateLock) {
            stopWatchdogLocked();
        }
    }

    private void stopWatchdogLocked() {
        watchdog = null;
        if (next != null) {
            next.cancel(false);
            next = null;
        }
    }

    /** Under stateLock, once the lock has ended: no more ticks, no give-up point. */
    private void stopLocked() {
        stopWatchdogLocked();
        timerGen++;
        if (timer != null) {
            TIMER.cancel(timer);
            timer = null;
        }
    }
}
