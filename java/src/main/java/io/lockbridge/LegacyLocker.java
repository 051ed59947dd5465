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

    private LegacyLocker(Builder b) {
        this.redis = b.redis;
        this.profile = b.profile;
        this.backoff = b.backoff;
        this.events = Events.of("legacy", b.listener);
        this.watchdog = b.autoRefresh ? Executors.newSingleThreadScheduledExecutor(Threads.daemon("lockbridge-legacy-watchdog")) : null;
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
        public Builder profile(LegacyProfile p) {
            this.profile = Objects.requireNonNull(p);
            return this;
        }

        /** The waiting backoff of lock(); default 10 ms doubling to 100 ms. */
        public Builder backoff(Backoff b) {
            this.backoff = Objects.requireNonNull(b);
            return this;
        }

        /** Refresh held locks every ttl/3 (default off: the Java code never refreshes). */
        public Builder autoRefresh(boolean on) {
            this.autoRefresh = on;
            return this;
        }

        /**
         * Reports contention, lock()'s waits and, for auto-refreshed locks,
         * their background refreshes and losses to l (system
         * {@code legacy}; see {@link LockListener}). Default: none.
         */
        public Builder listener(LockListener l) {
            this.listener = Objects.requireNonNull(l);
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
        LegacyLock lk = acquire(redis, profile, name, key, ttl, Phase.LEGACY);
        lk.afterRelease = () -> wakes.released(name);
        if (watchdog != null) {
            lk.events = events;
            lk.autoRefresh(watchdog);
        }
        return lk;
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

    /** Stops the watchdog; later lock calls throw InvalidException. Held locks are no longer refreshed, and each is signalled lost on done() at ttl/12 before its lease ends, as every lock is that nothing extended. */
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
    static LegacyLock acquire(Redis redis, LegacyProfile p, String name, byte[] key, Duration ttl, Phase phase) {
        long start = System.nanoTime();
        Instant now = p.now();
        long w = p.expiry(now, ttl);
        byte[] value = p.valueCodec().encode(w);
        Script s = Scripts.LEGACY_ACQUIRE;
        List<?> r = redis.evalList(s, new byte[][] {key}, value, Redis.arg(p.valueCodec().id()), Redis.arg(p.cutoff(now)), Redis.arg("0"));
        List<?> a = Replies.list(s, r, 1);
        long state = Replies.num(s, a.get(0));
        if (state == 1 || state == 2) {
            return new LegacyLock(redis, p, name, key, w, ttl, phase, start, p.holderLease(now, ttl, w));
        }
        if (state == 0) {
            Long t = p.valueCodec().decode(Replies.bytes(s, a.get(1)));
            Duration left = t == null ? Duration.ZERO : p.remaining(t, now);
            throw new NotObtainedException("lockbridge: lock " + Keys.show(name) + " is held until " + t + " (" + left + " left)", left);
        }
        if (state == -1) {
            throw new NotObtainedException("lockbridge: lock " + Keys.show(name) + " holds a foreign value (not " + p.valueCodec().id()
                    + "): never taken over", Duration.ZERO);
        }
        throw Replies.unexpected(s, r);
    }

    /** A legacy lock: our expiry W and the lease it was written with; its holder counts the lease only while W keeps others out. */
    static final class LegacyLock extends AbstractLock {
        private final Redis redis;
        private final LegacyProfile p;
        final byte[] key;
        private long w;
        private Duration lease;

        LegacyLock(Redis redis, LegacyProfile p, String name, byte[] key, long w, Duration ttl, Phase phase, long start, Duration local) {
            super(name, phase, start, local, ttl, p.serverHold(ttl));
            this.redis = redis;
            this.p = p;
            this.key = key;
            this.w = w;
            this.lease = ttl;
        }

        /** Our expiry W, in the profile's unit. */
        synchronized long expiry() {
            return w;
        }

        @Override
        void release() {
            long code;
            synchronized (this) {
                code = redis.evalLong(Scripts.LEGACY_RELEASE, new byte[][] {key}, p.ownerArgs(w, lease));
            }
            if (code != 1) {
                throw notHeld(name, code);
            }
        }

        @Override
        void refreshOnce(Duration ttl) {
            p.checkTtl(ttl);
            long start = System.nanoTime();
            Instant now = p.now();
            long nw = p.expiry(now, ttl);
            byte[][] owner;
            synchronized (this) {
                owner = p.ownerArgs(w, lease);
            }
            byte[][] args = new byte[8][];
            System.arraycopy(owner, 0, args, 0, 6);
            args[6] = p.valueCodec().encode(nw);
            args[7] = Redis.arg("0");
            sending(start, p.holderLease(now, ttl, nw), ttl, p.serverHold(ttl));
            long code = redis.evalLong(Scripts.LEGACY_REFRESH, new byte[][] {key}, args);
            if (code != 1) {
                throw notHeld(name, code);
            }
            synchronized (this) {
                w = nw;
                lease = ttl;
            }
            extend(start, p.holderLease(now, ttl, nw), ttl);
        }
    }

    /** The NotHeldException of an owner-window code (legacy_owner.lua). */
    static NotHeldException notHeld(String name, long code) {
        if (code == 0) {
            return new NotHeldException(name, NotHeldException.Reason.TAKEN, "the legacy key holds another holder's value");
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
