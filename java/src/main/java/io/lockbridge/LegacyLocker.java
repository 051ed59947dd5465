package io.lockbridge;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The legacy Java lock (SETNX key &lt;expiry&gt;, takeover of an expired
 * value) done safely, byte for byte compatible with the Java services that
 * still run the old code and with Go's legacy.Locker in atomic mode: one
 * round trip for an acquire and for an expired takeover (a live or foreign
 * value is never overwritten), and the owner-window release and refresh
 * judged by this process's clock, as the Java code judges it (the server's
 * clock only refuses, beyond the server-clock margin).
 *
 * <pre>{@code
 * LegacyLocker locker = LegacyLocker.builder(redis).profile(LegacyProfile.defaults()).build();
 * try (Lock lock = locker.lock("orders", Duration.ofSeconds(30), Duration.ofSeconds(5))) {
 *     // critical section
 * }
 * }</pre>
 */
public final class LegacyLocker implements AutoCloseable {
    private final Redis redis;
    private final LegacyProfile profile;
    private final Backoff backoff;
    private final ScheduledExecutorService watchdog; // null without auto-refresh
    private final LocalWakes wakes = new LocalWakes();
    private final Events events; // null without a listener
    private volatile boolean closed;

    private LegacyLocker(Builder builder) {
        this.redis = builder.redis;
        this.profile = builder.profile;
        this.backoff = builder.backoff;
        this.events = Events.of("legacy", builder.listener);
        this.watchdog = builder.autoRefresh
                ? Executors.newSingleThreadScheduledExecutor(Threads.daemon("lockbridge-legacy-watchdog")) : null;
    }

    public static Builder builder(Redis redis) {
        return new Builder(redis);
    }

    /** Options of a LegacyLocker; defaults in each setter's documentation. */
    public static final class Builder {
        private final Redis redis;
        private LegacyProfile profile = LegacyProfile.defaults();
        private Backoff backoff = Backoff.legacyDefault();
        private boolean autoRefresh;
        private LockListener listener;

        private Builder(Redis redis) {
            if (redis == null) {
                throw new InvalidException("lockbridge: LegacyLocker needs a Redis");
            }
            this.redis = redis;
        }

        /** The legacy profile; default {@link LegacyProfile#defaults()}. */
        public Builder profile(LegacyProfile profile) {
            this.profile = Objects.requireNonNull(profile);
            return this;
        }

        /** The waiting backoff of lock(); default 10 ms doubling to 100 ms. */
        public Builder backoff(Backoff backoff) {
            this.backoff = Objects.requireNonNull(backoff);
            return this;
        }

        /** Refresh held locks every ttl/3 (default off: the Java code never refreshes). */
        public Builder autoRefresh(boolean enabled) {
            this.autoRefresh = enabled;
            return this;
        }

        /**
         * Reports contention, lock()'s waits and, for auto-refreshed locks,
         * their background refreshes and losses to listener (system
         * {@code legacy}; see {@link LockListener}). Default: none.
         */
        public Builder listener(LockListener listener) {
            this.listener = Objects.requireNonNull(listener);
            return this;
        }

        public LegacyLocker build() {
            return new LegacyLocker(this);
        }
    }

    /** One attempt; NotObtainedException when another holder has the lock (or its value is foreign). */
    public Lock tryLock(String name, Duration ttl) {
        try {
            return attempt(name, ttl);
        } catch (NotObtainedException e) {
            if (events != null) {
                events.contended();
            }
            throw e;
        }
    }

    /** One attempt (tryLock's, and each of lock()'s). */
    private Lock attempt(String name, Duration ttl) {
        checkOpen();
        profile.checkTtl(ttl);
        byte[] key = profile.encodeKey(name);
        Wait.notInterrupted(name);
        LegacyLock lock = acquire(redis, profile, name, key, ttl, Phase.LEGACY);
        lock.afterRelease = () -> wakes.released(name);
        if (watchdog != null) {
            lock.events = events;
            lock.autoRefresh(watchdog);
        }
        return lock;
    }

    /**
     * Waits up to wait for the lock; NotObtainedException when the wait ends
     * first. Between attempts it sleeps the backoff, never past the holder's
     * expiry; a release by this locker of a lock on name wakes it at once
     * (the legacy protocol has no release notice: releases elsewhere are
     * found by polling).
     */
    public Lock lock(String name, Duration ttl, Duration wait) {
        checkOpen();
        profile.checkTtl(ttl);
        profile.encodeKey(name);
        return Wait.loop(name, wait, backoff, again -> attempt(name, ttl), wake -> wakes.add(name, wake), events);
    }

    /**
     * Stops the watchdog; later lock calls throw InvalidException. Held locks
     * are no longer refreshed, and each is signalled lost on done() at ttl/12
     * before its lease ends, as every lock is that nothing extended.
     */
    @Override
    public void close() {
        closed = true;
        if (watchdog != null) {
            watchdog.shutdownNow();
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new InvalidException("lockbridge: LegacyLocker closed");
        }
    }

    /** One atomic acquire of the legacy key (legacy/scripts/acquire.lua). */
    static LegacyLock acquire(Redis redis, LegacyProfile profile, String name, byte[] key, Duration ttl, Phase phase) {
        long start = System.nanoTime();
        Instant now = profile.now();
        long expiry = profile.expiry(now, ttl);
        byte[] value = profile.valueCodec().encode(expiry);
        Script script = Scripts.LEGACY_ACQUIRE;
        List<?> raw = redis.evalList(script, new byte[][] {key}, value, Redis.arg(profile.valueCodec().id()),
                Redis.arg(profile.cutoff(now)), Redis.arg("0"));
        List<?> reply = Replies.list(script, raw, 1);
        long state = Replies.num(script, reply.get(0));
        if (state == 1 || state == 2) {
            return new LegacyLock(redis, profile, name, key, expiry, ttl, phase, start,
                    profile.holderLease(now, ttl, expiry));
        }
        if (state == 0) {
            Long heldUntil = profile.valueCodec().decode(Replies.bytes(script, reply.get(1)));
            Duration left = heldUntil == null ? Duration.ZERO : profile.remaining(heldUntil, now);
            throw new NotObtainedException("lockbridge: lock " + Keys.show(name) + " is held until " + heldUntil
                    + " (" + left + " left)", left);
        }
        if (state == -1) {
            throw new NotObtainedException("lockbridge: lock " + Keys.show(name) + " holds a foreign value (not "
                    + profile.valueCodec().id() + "): never taken over", Duration.ZERO);
        }
        throw Replies.unexpected(script, raw);
    }

    /**
     * A legacy lock: our expiry W and the lease it was written with; its holder
     * counts the lease only while W keeps others out.
     */
    static final class LegacyLock extends AbstractLock {
        private final Redis redis;
        private final LegacyProfile profile;
        final byte[] key;
        private long expiry;
        private Duration lease;

        LegacyLock(Redis redis, LegacyProfile profile, String name, byte[] key, long expiry, Duration ttl, Phase phase,
                long start, Duration local) {
            super(name, phase, start, local, ttl, profile.serverHold(ttl));
            this.redis = redis;
            this.profile = profile;
            this.key = key;
            this.expiry = expiry;
            this.lease = ttl;
        }

        /** Our expiry W, in the profile's unit. */
        synchronized long expiry() {
            return expiry;
        }

        @Override
        void release() {
            long code;
            synchronized (this) {
                code = redis.evalLong(Scripts.LEGACY_RELEASE, new byte[][] {key}, profile.ownerArgs(expiry, lease));
            }
            if (code != 1) {
                throw notHeld(name, code);
            }
        }

        @Override
        void refreshOnce(Duration ttl) {
            profile.checkTtl(ttl);
            long start = System.nanoTime();
            Instant now = profile.now();
            long newExpiry = profile.expiry(now, ttl);
            byte[][] owner;
            synchronized (this) {
                owner = profile.ownerArgs(expiry, lease);
            }
            byte[][] args = new byte[8][];
            System.arraycopy(owner, 0, args, 0, 6);
            args[6] = profile.valueCodec().encode(newExpiry);
            args[7] = Redis.arg("0");
            sending(start, profile.holderLease(now, ttl, newExpiry), ttl, profile.serverHold(ttl));
            long code = redis.evalLong(Scripts.LEGACY_REFRESH, new byte[][] {key}, args);
            if (code != 1) {
                throw notHeld(name, code);
            }
            synchronized (this) {
                expiry = newExpiry;
                lease = ttl;
            }
            extend(start, profile.holderLease(now, ttl, newExpiry), ttl);
        }
    }

    /** The NotHeldException of an owner-window code (legacy_owner.lua). */
    static NotHeldException notHeld(String name, long code) {
        if (code == 0) {
            return new NotHeldException(name, NotHeldException.Reason.TAKEN,
                    "the legacy key holds another holder's value");
        }
        if (code == -1) {
            return new NotHeldException(name, NotHeldException.Reason.GONE, "the legacy key is gone");
        }
        if (code == -3) {
            return new NotHeldException(name, NotHeldException.Reason.EXPIRED,
                    "the legacy expiry had passed by the server's clock, beyond the margin, when the command ran");
        }
        return new NotHeldException(name, NotHeldException.Reason.EXPIRED, "the legacy expiry has passed by our clock");
    }
}
