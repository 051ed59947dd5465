package io.lockbridge.spring;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.lockbridge.InvalidException;
import io.lockbridge.LegacyLocker;
import io.lockbridge.LegacyProfile;
import io.lockbridge.Lock;
import io.lockbridge.MigrateLocker;
import io.lockbridge.ModernLocker;
import io.lockbridge.NotHeldException;
import io.lockbridge.NotObtainedException;
import io.lockbridge.Phase;
import io.lockbridge.PhaseUnknownException;
import io.lockbridge.Redis;
import io.lockbridge.UnknownOutcomeException;

/**
 * The locks of a Spring application: the locker {@code lockbridge.mode}
 * names ({@link LegacyLocker}, {@link MigrateLocker} or
 * {@link ModernLocker}), built from {@link LockbridgeProperties}, with each
 * call reported to a {@link LockObserver} (the Micrometer instruments) —
 * which the locker is given as its {@link io.lockbridge.LockListener}, for
 * what only it sees — and the locks it holds counted for the health check. Its locks are
 * lockbridge-java's: {@link Lock#done()} is the lost-lock signal,
 * {@link Lock#unlock()} throws {@link NotHeldException} when the lock was
 * no longer ours.
 *
 * <pre>{@code
 * try (Lock lock = locks.lock("orders:42")) { // lockbridge.default-ttl, lockbridge.default-wait
 *     // critical section
 * }
 * }</pre>
 */
public final class Locks implements AutoCloseable {
    /** One locker's two calls. */
    private interface Locker extends AutoCloseable {
        Lock tryLock(String name, Duration ttl);

        Lock lock(String name, Duration ttl, Duration wait);

        @Override
        void close();
    }

    private final String system;
    private final Locker locker;
    private final MigrateLocker migrate; // null unless mode migrate
    private final LockObserver observer;
    private final Duration defaultTtl;
    private final Duration defaultWait;
    private final Set<Lock> held = ConcurrentHashMap.newKeySet();

    private Locks(String system, Locker locker, MigrateLocker migrate, LockObserver observer, LockbridgeProperties p) {
        this.system = system;
        this.locker = locker;
        this.migrate = migrate;
        this.observer = observer == null ? LockObserver.NONE : observer;
        this.defaultTtl = p.getDefaultTtl();
        this.defaultWait = p.getDefaultWait();
    }

    /** The locker p describes, on redis (which stays the caller's to close). */
    public static Locks create(Redis redis, LockbridgeProperties p, LockObserver observer) {
        if (p.getDefaultTtl() == null || p.getDefaultTtl().compareTo(Duration.ofMillis(1)) < 0) {
            throw new InvalidException("lockbridge: lockbridge.default-ttl must be at least 1ms, got " + p.getDefaultTtl());
        }
        if (p.getDefaultWait() == null || p.getDefaultWait().isNegative()) {
            throw new InvalidException("lockbridge: lockbridge.default-wait must not be negative, got " + p.getDefaultWait());
        }
        LegacyProfile profile = profile(p.getLegacy());
        boolean listen = observer != null && observer != LockObserver.NONE; // none: the locker reports nothing at all
        switch (p.getMode()) {
        case LEGACY -> {
            LegacyLocker.Builder b = LegacyLocker.builder(redis).profile(profile).autoRefresh(p.isAutoRefresh());
            if (listen) {
                b.listener(observer);
            }
            LegacyLocker l = b.build();
            return new Locks("legacy", of(l::tryLock, l::lock, l::close), null, observer, p);
        }
        case MODERN -> {
            ModernLocker.Builder b = ModernLocker.builder(redis).autoRefresh(p.isAutoRefresh()).fencing(p.getModern().isFencing())
                    .notifications(p.getModern().isNotifications());
            if (p.getModern().isDeriveKey()) {
                b.derivedFrom(profile);
            }
            if (listen) {
                b.listener(observer);
            }
            ModernLocker m = b.build();
            return new Locks("modern", of(m::tryLock, m::lock, m::close), null, observer, p);
        }
        default -> {
            MigrateLocker.Builder b = migrateLocker(redis, p, profile);
            if (listen) {
                b.listener(observer);
            }
            MigrateLocker m = b.build();
            return new Locks("migrate", of(m::tryLock, m::lock, m::close), m, observer, p);
        }
        }
    }

    /**
     * The starters' bean (both Boot lines): {@link #create}, the phase gauge
     * bound when observer is the Micrometer one, and {@link #start()}.
     */
    public static Locks bean(Redis redis, LockbridgeProperties p, LockObserver observer) {
        Locks locks = create(redis, p, observer);
        if (observer instanceof LockbridgeMeters m && locks.migrate != null) {
            m.bindPhase(locks.migrate);
        }
        locks.start();
        return locks;
    }

    private static MigrateLocker.Builder migrateLocker(Redis redis, LockbridgeProperties p, LegacyProfile profile) {
        if (p.getPhase() == null && p.getNamespace() == null) {
            // No evidence of the fleet's phase: better no locker than a guess (legacy, unregistered, whatever the fleet runs).
            throw new InvalidException("lockbridge: lockbridge.mode=migrate (the default) needs lockbridge.namespace, to follow the fleet's"
                    + " phase, or lockbridge.phase, a fixed phase; with neither it cannot know which keys the fleet locks"
                    + " (for the legacy lock alone: lockbridge.mode=legacy)");
        }
        MigrateLocker.Builder b = MigrateLocker.builder(redis).legacy(profile).autoRefresh(p.isAutoRefresh());
        if (p.getPhaseInterval() != null) {
            b.phaseInterval(p.getPhaseInterval());
        }
        if (p.getPhaseLease() != null) {
            b.phaseLease(p.getPhaseLease());
        }
        if (p.getPhase() != null) {
            b.phase(p.getPhase());
            if (p.getNamespace() != null) {
                b.namespace(p.getNamespace());
            }
        } else if (p.getNamespace() != null) {
            b.followPhase(p.getNamespace());
        }
        return b;
    }

    private interface TryLock {
        Lock call(String name, Duration ttl);
    }

    private interface WaitLock {
        Lock call(String name, Duration ttl, Duration wait);
    }

    private static Locker of(TryLock t, WaitLock w, Runnable close) {
        return new Locker() {
            @Override
            public Lock tryLock(String name, Duration ttl) {
                return t.call(name, ttl);
            }

            @Override
            public Lock lock(String name, Duration ttl, Duration wait) {
                return w.call(name, ttl, wait);
            }

            @Override
            public void close() {
                close.run();
            }
        };
    }

    static LegacyProfile profile(LockbridgeProperties.Legacy l) {
        return LegacyProfile.defaults().unit(l.getUnit()).plusOne(l.isPlusOne()).keyCodec(l.getKeyCodec()).valueCodec(l.getValueCodec())
                .skewMargin(l.getSkewMargin()).serverClockMargin(l.getServerClockMargin());
    }

    /** legacy, migrate or modern: the lockbridge.lock.system of the instruments. */
    public String system() {
        return system;
    }

    /** The migrating locker (mode migrate), else null. */
    public MigrateLocker migrateLocker() {
        return migrate;
    }

    /** {@link #tryLock(String, Duration)} with lockbridge.default-ttl. */
    public Lock tryLock(String name) {
        return tryLock(name, defaultTtl);
    }

    /** One attempt: {@link NotObtainedException} when another holds the lock. */
    public Lock tryLock(String name, Duration ttl) {
        long start = System.nanoTime();
        try {
            Lock l = locker.tryLock(name, ttl);
            observer.acquired(system, "try_lock", "obtained", System.nanoTime() - start);
            return track(l);
        } catch (RuntimeException e) {
            observer.acquired(system, "try_lock", outcome(e), System.nanoTime() - start);
            throw e;
        }
    }

    /** {@link #lock(String, Duration, Duration)} with lockbridge.default-ttl and lockbridge.default-wait. */
    public Lock lock(String name) {
        return lock(name, defaultTtl, defaultWait);
    }

    /** Waits up to wait for the lock (the locker's own wait: backoff, woken by release notices). */
    public Lock lock(String name, Duration ttl, Duration wait) {
        long start = System.nanoTime();
        try {
            if (wait == null || wait.isNegative()) {
                throw new InvalidException("lockbridge: wait " + wait + " is negative");
            }
            Lock l = locker.lock(name, ttl, wait);
            observer.acquired(system, "lock", "obtained", System.nanoTime() - start);
            return track(l);
        } catch (RuntimeException e) {
            observer.acquired(system, "lock", outcome(e), System.nanoTime() - start);
            throw e;
        }
    }

    static String outcome(RuntimeException e) {
        if (e instanceof NotObtainedException) {
            return "not_obtained";
        }
        if (e instanceof UnknownOutcomeException) {
            return "unknown";
        }
        if (e instanceof InvalidException) {
            return "invalid";
        }
        return "error";
    }

    private Lock track(Lock l) {
        if (l.fence() != 0) {
            observer.fence(system, l.fence());
        }
        held.add(l);
        l.done().whenComplete((v, err) -> held.remove(l));
        return l;
    }

    /** How many locks taken through this object are held now (released or lost ones are not). */
    public int held() {
        return held.size();
    }

    /** What the health check and the info endpoint show. */
    public record Status(boolean up, Map<String, Object> details) {}

    /**
     * The health of the locks: the mode, the locks held and, for a migrating
     * locker with a namespace, the namespace, its registry id, the phase it
     * follows and how long its phase lease still runs. Down when the phase
     * lease has lapsed and reading the phase again fails: lock calls refuse
     * then ({@link PhaseUnknownException}).
     */
    public Status status() {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("mode", system);
        boolean up = true;
        if (migrate != null) {
            MigrateLocker.PhaseLease pl = migrate.phaseLease();
            if (pl == null) {
                d.put("phase", migrate.phase().wireName());
            } else {
                if (pl.left().isZero()) {
                    try {
                        migrate.phase(); // reads it: the lease runs again
                    } catch (PhaseUnknownException e) {
                        up = false;
                        d.put("error", e.getMessage());
                    }
                    pl = migrate.phaseLease();
                }
                d.put("namespace", pl.namespace());
                d.put("clientId", pl.clientId());
                d.put("phase", pl.phase() == null ? "unknown" : pl.phase().wireName());
                d.put("phaseLeaseLeftMillis", pl.left().toMillis());
            }
        }
        d.put("locksHeld", held());
        return new Status(up, d);
    }

    /** What the info endpoint shows: the mode and, when migrating with a namespace, the namespace, registry id and phase. */
    public Map<String, Object> info() {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("mode", system);
        if (migrate != null) {
            MigrateLocker.PhaseLease pl = migrate.phaseLease();
            if (pl != null) {
                d.put("namespace", pl.namespace());
                d.put("clientId", pl.clientId());
                d.put("phase", pl.phase() == null ? "unknown" : pl.phase().wireName());
            }
        }
        return d;
    }

    /**
     * Starts a following locker: its first reading of the phase and its
     * heartbeats, so the controller counts this instance from start-up.
     * Returns the phase, or null when it could not be read (lock calls
     * read it again).
     */
    public Phase start() {
        if (migrate == null || migrate.phaseLease() == null) {
            return null;
        }
        try {
            return migrate.phase();
        } catch (PhaseUnknownException e) {
            return null;
        }
    }

    /** Closes the locker (see each locker's close). */
    @Override
    public void close() {
        locker.close();
    }
}
