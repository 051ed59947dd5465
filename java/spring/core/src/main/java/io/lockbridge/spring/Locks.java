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

    private Locks(String system, Locker locker, MigrateLocker migrate, LockObserver observer,
            LockbridgeProperties props) {
        this.system = system;
        this.locker = locker;
        this.migrate = migrate;
        this.observer = observer == null ? LockObserver.NONE : observer;
        this.defaultTtl = props.getDefaultTtl();
        this.defaultWait = props.getDefaultWait();
    }

    /** The locker props describes, on redis (which stays the caller's to close). */
    public static Locks create(Redis redis, LockbridgeProperties props, LockObserver observer) {
        if (props.getDefaultTtl() == null || props.getDefaultTtl().compareTo(Duration.ofMillis(1)) < 0) {
            throw new InvalidException("lockbridge: lockbridge.default-ttl must be at least 1ms, got "
                    + props.getDefaultTtl());
        }
        if (props.getDefaultWait() == null || props.getDefaultWait().isNegative()) {
            throw new InvalidException("lockbridge: lockbridge.default-wait must not be negative, got "
                    + props.getDefaultWait());
        }
        LegacyProfile profile = profile(props.getLegacy());
        boolean listen = observer != null && observer != LockObserver.NONE; // none: the locker reports nothing at all
        switch (props.getMode()) {
        case LEGACY -> {
            LegacyLocker.Builder builder = LegacyLocker.builder(redis).profile(profile)
                    .autoRefresh(props.isAutoRefresh());
            if (listen) {
                builder.listener(observer);
            }
            LegacyLocker legacy = builder.build();
            return new Locks("legacy", of(legacy::tryLock, legacy::lock, legacy::close), null, observer, props);
        }
        case MODERN -> {
            ModernLocker.Builder builder = ModernLocker.builder(redis).autoRefresh(props.isAutoRefresh())
                    .fencing(props.getModern().isFencing()).notifications(props.getModern().isNotifications());
            if (props.getModern().isDeriveKey()) {
                builder.derivedFrom(profile);
            }
            if (listen) {
                builder.listener(observer);
            }
            ModernLocker modern = builder.build();
            return new Locks("modern", of(modern::tryLock, modern::lock, modern::close), null, observer, props);
        }
        default -> {
            MigrateLocker.Builder builder = migrateLocker(redis, props, profile);
            if (listen) {
                builder.listener(observer);
            }
            MigrateLocker migrating = builder.build();
            return new Locks("migrate", of(migrating::tryLock, migrating::lock, migrating::close), migrating, observer,
                    props);
        }
        }
    }

    /**
     * The starters' bean (both Boot lines): {@link #create}, the phase gauge
     * bound when observer is the Micrometer one, and {@link #start()}.
     */
    public static Locks bean(Redis redis, LockbridgeProperties props, LockObserver observer) {
        Locks locks = create(redis, props, observer);
        if (observer instanceof LockbridgeMeters meters && locks.migrate != null) {
            meters.bindPhase(locks.migrate);
        }
        locks.start();
        return locks;
    }

    private static MigrateLocker.Builder migrateLocker(Redis redis, LockbridgeProperties props, LegacyProfile profile) {
        if (props.getPhase() == null && props.getNamespace() == null) {
            // No evidence of the fleet's phase: better no locker than
            // a guess (legacy, unregistered, whatever the fleet runs).
            throw new InvalidException("lockbridge: lockbridge.mode=migrate (the default) needs lockbridge.namespace, "
                    + "to follow the fleet's phase, or lockbridge.phase, a fixed phase; with neither it cannot know "
                    + "which keys the fleet locks (for the legacy lock alone: lockbridge.mode=legacy)");
        }
        MigrateLocker.Builder builder = MigrateLocker.builder(redis).legacy(profile).autoRefresh(props.isAutoRefresh());
        if (props.getPhaseInterval() != null) {
            builder.phaseInterval(props.getPhaseInterval());
        }
        if (props.getPhaseLease() != null) {
            builder.phaseLease(props.getPhaseLease());
        }
        if (props.getPhase() != null) {
            builder.phase(props.getPhase());
            if (props.getNamespace() != null) {
                builder.namespace(props.getNamespace());
            }
        } else if (props.getNamespace() != null) {
            builder.followPhase(props.getNamespace());
        }
        return builder;
    }

    private interface TryLock {
        Lock call(String name, Duration ttl);
    }

    private interface WaitLock {
        Lock call(String name, Duration ttl, Duration wait);
    }

    private static Locker of(TryLock tryCall, WaitLock waitCall, Runnable close) {
        return new Locker() {
            @Override
            public Lock tryLock(String name, Duration ttl) {
                return tryCall.call(name, ttl);
            }

            @Override
            public Lock lock(String name, Duration ttl, Duration wait) {
                return waitCall.call(name, ttl, wait);
            }

            @Override
            public void close() {
                close.run();
            }
        };
    }

    static LegacyProfile profile(LockbridgeProperties.Legacy legacy) {
        return LegacyProfile.defaults().unit(legacy.getUnit()).plusOne(legacy.isPlusOne())
                .keyCodec(legacy.getKeyCodec()).valueCodec(legacy.getValueCodec())
                .skewMargin(legacy.getSkewMargin()).serverClockMargin(legacy.getServerClockMargin());
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
            Lock lock = locker.tryLock(name, ttl);
            observer.acquired(system, "try_lock", "obtained", System.nanoTime() - start);
            return track(lock);
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
            Lock lock = locker.lock(name, ttl, wait);
            observer.acquired(system, "lock", "obtained", System.nanoTime() - start);
            return track(lock);
        } catch (RuntimeException e) {
            observer.acquired(system, "lock", outcome(e), System.nanoTime() - start);
            throw e;
        }
    }

    static String outcome(RuntimeException error) {
        if (error instanceof NotObtainedException) {
            return "not_obtained";
        }
        if (error instanceof UnknownOutcomeException) {
            return "unknown";
        }
        if (error instanceof InvalidException) {
            return "invalid";
        }
        return "error";
    }

    private Lock track(Lock lock) {
        if (lock.fence() != 0) {
            observer.fence(system, lock.fence());
        }
        held.add(lock);
        lock.done().whenComplete((v, err) -> held.remove(lock));
        return lock;
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
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("mode", system);
        boolean up = true;
        if (migrate != null) {
            MigrateLocker.PhaseLease lease = migrate.phaseLease();
            if (lease == null) {
                details.put("phase", migrate.phase().wireName());
            } else {
                if (lease.left().isZero()) {
                    try {
                        migrate.phase(); // reads it: the lease runs again
                    } catch (PhaseUnknownException e) {
                        up = false;
                        details.put("error", e.getMessage());
                    }
                    lease = migrate.phaseLease();
                }
                details.put("namespace", lease.namespace());
                details.put("clientId", lease.clientId());
                details.put("phase", lease.phase() == null ? "unknown" : lease.phase().wireName());
                details.put("phaseLeaseLeftMillis", lease.left().toMillis());
            }
        }
        details.put("locksHeld", held());
        return new Status(up, details);
    }

    /**
     * What the info endpoint shows: the mode and, when migrating with a
     * namespace, the namespace, registry id and phase.
     */
    public Map<String, Object> info() {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("mode", system);
        if (migrate != null) {
            MigrateLocker.PhaseLease lease = migrate.phaseLease();
            if (lease != null) {
                details.put("namespace", lease.namespace());
                details.put("clientId", lease.clientId());
                details.put("phase", lease.phase() == null ? "unknown" : lease.phase().wireName());
            }
        }
        return details;
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
