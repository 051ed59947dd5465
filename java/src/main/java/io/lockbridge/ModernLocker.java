package io.lockbridge;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Supplier;

/**
 * The modern lock outside a migration: exactly the lock Go's
 * {@code modern.Locker} takes, so Go and Java services share it key for key.
 * The acquire is {@code SET key token NX PX ttl} (the token is 16 random
 * bytes in unpadded base64url, as Go's {@code modern.NewToken}), sent as Go
 * sends it: the plain command, and only when it finds the key taken a read
 * of the holder's PTTL (modern/ttl.lua); with fencing, for a locker's first
 * attempt and for a waiting lock()'s attempts after a miss, the script
 * modern/acquire.lua instead, which learns the PTTL in the same round trip
 * ({@link ModernAcquire}); release and refresh are Go's owner-checked
 * scripts (modern/release.lua, modern/refresh.lua), and the release publishes
 * {@code "released"} on the key's channel ({@code {key}:released}, or
 * key + ":released" for a key with a hash tag) when anyone listens, which
 * wakes Go's and Java's waiters alike.
 *
 * <p>Keys: by default the lock name is the Redis key (its UTF-8 bytes), as
 * Go's {@code modern.Locker.Lock(ctx, key, ttl)} takes it. With
 * {@link Builder#derivedFrom(LegacyProfile)} the name is a legacy lock name,
 * and the lock is taken on the modern key a migration derives from its
 * legacy key (Go's {@code migrate.DeriveModernKey}): the key a fleet that
 * finished its migration keeps using.
 *
 * <p>With {@link Builder#fencing(boolean)} the acquire also hands out a
 * fence, Go's {@code WithFencing}: the counter {@code {key}:fence} (key +
 * ":fence" for a tagged key) is set to max(counter + 1, the server's TIME in
 * µs), so fences increase strictly across holders of the key, Go's and
 * Java's, and across a restart that lost the counter; {@link Lock#fence()}
 * returns it.
 *
 * <p>The other options of Go's {@code modern.Locker}:
 * {@link Builder#waitForReplicas} (Go's {@code WithWait}),
 * {@link Builder#pollers} ({@code WithPollers}), {@link Builder#tokens}
 * ({@code WithTokenFunc}); and on the lock, {@link Lock#ttl()} (Go's
 * {@code Lock.TTL}). Go's per-key line of one Locker's waiters is not
 * built: each lock() call contends on its own.
 *
 * <pre>{@code
 * ModernLocker locker = ModernLocker.builder(redis).autoRefresh(true).fencing(true).build();
 * try (Lock lock = locker.lock("orders", Duration.ofSeconds(30), Duration.ofSeconds(5))) {
 *     write(lock.fence()); // critical section
 * }
 * }</pre>
 */
public final class ModernLocker implements AutoCloseable {
    /** The longest lease: Go's check.MaxTTL, 2^40 ms (about 34.8 years). */
    static final Duration MAX_TTL = Duration.ofMillis(1L << 40);
    /** The longest key: Go's check.MaxKeyLen, 64 KiB. */
    static final int MAX_KEY_LEN = 64 << 10;
    static final byte[] FENCE_SUFFIX = Keys.ascii(":fence");
    /** The longest token: Go's modern.MaxTokenLen. */
    static final int MAX_TOKEN_LEN = 1024;

    private final Redis redis;
    private final LegacyProfile derive; // null: the name is the key
    private final Backoff backoff;
    private final boolean fencing;
    private final boolean notifications;
    private final Duration poll; // ZERO: off
    private final int waitReplicas; // 0: off
    private final Duration waitTimeout;
    private final Supplier<String> tokens;
    private final ScheduledExecutorService watchdog; // null without auto-refresh
    private final ModernAcquire attempts;
    private final LocalWakes wakes = new LocalWakes();
    private final Events events; // null without a listener
    private volatile boolean closed;

    private ModernLocker(Builder builder) {
        this.redis = builder.redis;
        this.events = Events.of("modern", builder.listener);
        this.attempts = new ModernAcquire(builder.redis);
        this.derive = builder.derive;
        this.backoff = builder.backoff;
        this.fencing = builder.fencing;
        this.notifications = builder.notifications;
        this.poll = builder.poll;
        this.waitReplicas = builder.waitReplicas;
        this.waitTimeout = builder.waitTimeout;
        this.tokens = builder.tokens;
        this.watchdog = builder.autoRefresh
                ? Executors.newSingleThreadScheduledExecutor(Threads.daemon("lockbridge-modern-watchdog")) : null;
    }

    public static Builder builder(Redis redis) {
        return new Builder(redis);
    }

    /** Options of a ModernLocker; defaults in each setter's documentation. */
    public static final class Builder {
        private final Redis redis;
        private LegacyProfile derive;
        private Backoff backoff = Backoff.modernDefault();
        private boolean fencing;
        private boolean notifications = true;
        private boolean autoRefresh;
        private Duration poll = Duration.ZERO;
        private int waitReplicas;
        private Duration waitTimeout;
        private Supplier<String> tokens = MigrateLocker::token;
        private LockListener listener;

        private Builder(Redis redis) {
            if (redis == null) {
                throw new InvalidException("lockbridge: ModernLocker needs a Redis");
            }
            this.redis = redis;
        }

        /**
         * Lock names are legacy lock names: the lock is taken on the modern
         * key derived from the legacy key profile encodes (Go's
         * migrate.DeriveModernKey; the key of a MigrateLocker in MODERN).
         * Default: none, the name is the key.
         */
        public Builder derivedFrom(LegacyProfile profile) {
            this.derive = Objects.requireNonNull(profile);
            return this;
        }

        /** The waiting backoff of lock(); default 8 ms doubling to 512 ms (Go's). */
        public Builder backoff(Backoff backoff) {
            this.backoff = Objects.requireNonNull(backoff);
            return this;
        }

        /** Hand out a fence with every acquire (Go: WithFencing); default off. */
        public Builder fencing(boolean enabled) {
            this.fencing = enabled;
            return this;
        }

        /**
         * Wake lock()'s waits on the key's release notices (Go: on by default;
         * WithNotifications(false)); default on.
         */
        public Builder notifications(boolean enabled) {
            this.notifications = enabled;
            return this;
        }

        /** Refresh held locks every ttl/3, as Go's WithAutoRefresh; default off. */
        public Builder autoRefresh(boolean enabled) {
            this.autoRefresh = enabled;
            return this;
        }

        /**
         * The lock's other contenders poll every interval and publish nothing
         * when they release (Spring Integration's RedisLockRegistry, ShedLock:
         * 100 ms by default): lock() then waits as they do, pausing
         * interval/2 to interval between attempts instead of the backoff,
         * never past the holder's remaining lease, and release notices do not
         * cut that pause short (it does not subscribe). Go: WithPollers.
         * tryLock is unchanged. Default zero: off. A negative interval is
         * invalid.
         */
        public Builder pollers(Duration interval) {
            if (interval == null || interval.isNegative() || interval.compareTo(AbstractLock.MAX_TTL) > 0) {
                throw new InvalidException("lockbridge: pollers " + interval
                        + ": want zero (off) or a positive interval up to 2^63-1 ns");
            }
            this.poll = interval;
            return this;
        }

        /**
         * Every acquire waits, on the connection that sent it, until at
         * least replicas replicas acknowledged it (Redis' WAIT replicas
         * timeout), so that a failover to any of them keeps the lock key
         * and, with fencing, the fence counter. When fewer acknowledge in
         * time, or WAIT gets no reply, the lock is not reported held: it is
         * released at once (owner-checked) and the attempt throws
         * {@link ReplicationException} (lock() too, without another
         * attempt). An acquire whose reply was lost is released the same
         * way and its {@link UnknownOutcomeException} thrown. Every refresh
         * ({@link Lock#refresh}, the auto-refresh) waits the same way and
         * extends the lease only once acknowledged: else it throws
         * ReplicationException and the lease keeps its end (the lock is
         * still held until then; the auto-refresh tries again), for a
         * failover to a replica that missed the refresh would keep the key
         * with its earlier expiry. WAIT makes the
         * loss of an acknowledged write unlikely, not impossible (a replica
         * acknowledges what it received, and a failover may pick one that
         * did not): pair it with fencing. Go: WithWait(replicas, timeout).
         * replicas at least 1, timeout at least 1 ms (whole milliseconds;
         * WAIT's 0, "for ever", is not offered). Default: off.
         */
        public Builder waitForReplicas(int replicas, Duration timeout) {
            if (replicas < 1 || timeout == null || timeout.compareTo(Duration.ofMillis(1)) < 0) {
                throw new InvalidException("lockbridge: waitForReplicas(" + replicas + ", " + timeout
                        + "): want at least 1 replica and a timeout of at least 1ms");
            }
            this.waitReplicas = replicas;
            this.waitTimeout = Duration.ofMillis(timeout.toMillis());
            return this;
        }

        /**
         * How each acquire makes its token, the value that proves ownership
         * on release and refresh: it must be unique to the acquisition (a
         * token reused by two holders lets one release the other's lock),
         * 1 to 1024 bytes in UTF-8; a token outside that fails the acquire
         * with {@link InvalidException}. For tokens that name the holder
         * ("host/pid/random"). Go: WithTokenFunc. Default: 16 random bytes,
         * unpadded base64url (Go's NewToken).
         */
        public Builder tokens(Supplier<String> supplier) {
            this.tokens = Objects.requireNonNull(supplier);
            return this;
        }

        /**
         * Reports contention, lock()'s waits and, for auto-refreshed locks,
         * their background refreshes and losses to listener (system
         * {@code modern}; see {@link LockListener}). Go: WithMeterProvider's
         * instruments. Default: none.
         */
        public Builder listener(LockListener listener) {
            this.listener = Objects.requireNonNull(listener);
            return this;
        }

        public ModernLocker build() {
            return new ModernLocker(this);
        }
    }

    /**
     * The Redis names of one lock: its key, release channel (null: none in its
     * slot) and fence counter (null without fencing).
     */
    record Names(String name, byte[] key, byte[] channel, byte[] fence) {}

    /** The Redis key the lock called name is taken on. */
    public byte[] key(String name) {
        return names(name).key.clone();
    }

    Names names(String name) {
        if (name == null || name.isEmpty()) {
            throw new InvalidException("lockbridge: empty lock name");
        }
        byte[] key = derive != null ? Keys.modernKey(derive.encodeKey(name)) : name.getBytes(StandardCharsets.UTF_8);
        if (key.length > MAX_KEY_LEN) {
            throw new InvalidException("lockbridge: key of " + key.length + " bytes is longer than " + MAX_KEY_LEN);
        }
        byte[] fence = null;
        if (fencing) {
            fence = Keys.companion(key, FENCE_SUFFIX);
            if (fence == null) {
                throw new InvalidException("lockbridge: key " + Keys.show(key)
                        + " cannot have a fence counter in its hash slot");
            }
        }
        return new Names(name, key, Keys.companion(key, Keys.RELEASED_SUFFIX), fence);
    }

    /**
     * Throws InvalidException unless 1 ms &lt;= ttl &lt;= 2^40 ms; the lease in
     * whole milliseconds (PX takes no less).
     */
    static Duration checkTtl(Duration ttl) {
        AbstractLock.checkTtl(ttl);
        if (ttl.compareTo(MAX_TTL) > 0) {
            throw new InvalidException("lockbridge: ttl " + ttl + " is above " + MAX_TTL + " (2^40 ms)");
        }
        return Duration.ofMillis(ttl.toMillis());
    }

    /**
     * One attempt. NotObtainedException when another holder has the lock
     * (with its remaining lease; zero when it has no expiry);
     * UnknownOutcomeException when the acquire got no reply and reading the
     * key back could not settle it (the acquire is never sent again).
     */
    public Lock tryLock(String name, Duration ttl) {
        checkOpen();
        Duration checkedTtl = checkTtl(ttl);
        try {
            return attempt(names(name), checkedTtl, false);
        } catch (NotObtainedException e) {
            if (events != null) {
                events.contended();
            }
            throw e;
        }
    }

    /**
     * Waits up to wait for the lock: between attempts it sleeps the backoff,
     * never past the holder's remaining lease, and wakes at once on the
     * key's release notice (from a Go or a Java holder).
     */
    public Lock lock(String name, Duration ttl, Duration wait) {
        checkOpen();
        Duration checkedTtl = checkTtl(ttl);
        if (wait == null || wait.isNegative()) {
            throw new InvalidException("lockbridge: wait " + wait + " is negative");
        }
        Names names = names(name);
        if (!poll.isZero()) {
            // As a poller: poll/2 to poll between attempts, no notice cuts it short.
            return Wait.loop(name, wait, Backoff.exponential(poll, poll), again -> attempt(names, checkedTtl, again),
                    null, events);
        }
        Wait.Notices notices = !notifications ? null
                : names.channel != null ? wake -> redis.subscribe(names.channel, wake) : wake -> wakes.add(name, wake);
        return Wait.loop(name, wait, backoff, again -> attempt(names, checkedTtl, again), notices, events);
    }

    /**
     * Stops the watchdog; later lock calls throw InvalidException. Held locks
     * are no longer refreshed and end at their lease's give-up point, as every
     * lock nothing extends.
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
            throw new InvalidException("lockbridge: ModernLocker closed");
        }
    }

    /** One attempt; again: lock()'s attempts after a miss. */
    private Lock attempt(Names names, Duration ttl, boolean again) {
        checkOpen();
        Wait.notInterrupted(names.name);
        ModernLock lock = acquire(names, ttl, again);
        if (names.channel == null) {
            // no channel in the key's slot: its release publishes nothing
            lock.afterRelease = () -> wakes.released(names.name);
        }
        if (watchdog != null) {
            lock.events = events;
            lock.autoRefresh(watchdog);
        }
        return lock;
    }

    private String token() {
        String token = tokens.get();
        int len = token == null ? 0 : token.getBytes(StandardCharsets.UTF_8).length;
        if (len < 1 || len > MAX_TOKEN_LEN) {
            throw new InvalidException("lockbridge: token of " + len + " bytes (want 1 to " + MAX_TOKEN_LEN + ")");
        }
        return token;
    }

    private ModernLock acquire(Names names, Duration ttl, boolean again) {
        String token = token();
        long start = System.nanoTime();
        if (waitReplicas > 0) {
            byte[][] keys = names.fence == null ? new byte[][] {names.key} : new byte[][] {names.key, names.fence};
            return acquireWait(names, keys, token, start, ttl);
        }
        ModernAcquire.Reply reply;
        try {
            reply = attempts.once(names.key, names.fence, Redis.arg(token), ttl.toMillis(), again);
        } catch (UnknownOutcomeException e) {
            long fence = readBack(names, token, e);
            return new ModernLock(names, token, fence, start, ttl);
        }
        if (reply.acquired()) {
            return new ModernLock(names, token, reply.value(), start, ttl);
        }
        throw notObtained(names, reply.value());
    }

    /** Go's notObtained: the holder has leftMs ms left; no expiry leaves the wait to the backoff; 0 ms left is 1 ms. */
    private static NotObtainedException notObtained(Names names, long leftMs) {
        Duration left = leftMs < 0 ? Duration.ZERO : Duration.ofMillis(Math.max(1, leftMs));
        return new NotObtainedException("lockbridge: lock " + Keys.show(names.name) + " is held"
                + (leftMs < 0 ? " (no expiry)" : " (" + left + " left)"), left);
    }

    /**
     * The acquire followed by WAIT on its connection: held only when enough
     * replicas acknowledged; else released at once and a
     * ReplicationException. An acquire without a reply is released the same
     * way (never read back as held: nothing says the replicas have it).
     */
    private ModernLock acquireWait(Names names, byte[][] keys, String token, long start, Duration ttl) {
        Script script = Scripts.MODERN_ACQUIRE;
        Redis.Waited waited;
        try {
            waited = redis.evalListWait(script, keys, waitReplicas, waitTimeout, Redis.arg(token),
                    Redis.arg(ttl.toMillis()));
        } catch (UnknownOutcomeException e) {
            undo(names, token, e);
            throw e;
        }
        List<?> reply = Replies.list(script, (List<?>) waited.reply(), 2);
        long code = Replies.num(script, reply.get(0));
        long value = Replies.num(script, reply.get(1));
        if (code == 0) {
            throw notObtained(names, value);
        }
        if (code != 1) {
            throw Replies.unexpected(script, waited.reply());
        }
        if (waited.acknowledged(waitReplicas)) {
            return new ModernLock(names, token, value, start, ttl);
        }
        boolean released = undo(names, token, waited.waitError());
        throw new ReplicationException(names.name, waitReplicas, waited.acked(), released, waited.waitError());
    }

    /** Releases an acquire not reported held (owner-checked, sent once); whether it was confirmed released. */
    private boolean undo(Names names, String token, Throwable cause) {
        byte[][] keys = names.channel == null ? new byte[][] {names.key} : new byte[][] {names.key, names.channel};
        try {
            return redis.evalLong(Scripts.MODERN_RELEASE, keys, Redis.arg(token),
                    Redis.arg(redis.publishCommand())) == 1;
        } catch (RuntimeException e) {
            if (cause != null) {
                cause.addSuppressed(e);
            }
            return false;
        }
    }

    /**
     * Settles an acquire whose reply was lost by reading (a read changes
     * nothing; the acquire is never sent again): the fence counter, the key,
     * and the counter again. The key holding our token means our SET ran and
     * no one has acquired since; the counter unchanged around that read means
     * it holds the fence our acquire handed out. Returns the fence (0
     * without fencing). A key without our token settles nothing unless the
     * acquire can no longer run — its connection killed on the server,
     * confirmed, before the reads — then NotObtainedException; otherwise
     * it may still be on its way and run after the reads: an unknown
     * outcome naming the token (after a best-effort release by it). cause
     * (an unknown outcome) when the reads cannot settle it.
     */
    private long readBack(Names names, String token, UnknownOutcomeException cause) {
        boolean stopped = cause.stopRequest();
        try {
            byte[] fenceBefore = names.fence == null ? null : redis.get(names.fence);
            byte[] stored = redis.get(names.key);
            if (stored == null || !Keys.same(stored, Redis.arg(token))) {
                if (stopped) {
                    throw new NotObtainedException("lockbridge: acquire " + Keys.show(names.name)
                            + ": the reply was lost, its connection was killed, and the key does not hold our token",
                            Duration.ZERO, cause);
                }
                undo(names, token, cause);
                throw new UnknownOutcomeException("lockbridge: acquire " + Keys.show(names.name)
                        + ": the reply was lost and the key does not hold our token "
                        + token + " yet: the acquire may still run (its lock, if it does, ends by its ttl)", cause);
            }
            if (names.fence == null) {
                return 0;
            }
            byte[] fenceAfter = redis.get(names.fence);
            if (fenceBefore != null && Keys.same(fenceBefore, fenceAfter)) {
                return Long.parseLong(new String(fenceBefore, StandardCharsets.US_ASCII));
            }
            cause.addSuppressed(new IllegalStateException("the fence counter changed while it was read back"));
        } catch (NotObtainedException | UnknownOutcomeException e) {
            throw e;
        } catch (RuntimeException e) {
            cause.addSuppressed(e);
        }
        throw cause;
    }

    /** A modern lock: our token on the key, with its fence. */
    private final class ModernLock extends AbstractLock {
        private final Names names;
        private final byte[] token;
        private final long fence;

        ModernLock(Names names, String token, long fence, long start, Duration ttl) {
            super(names.name, Phase.MODERN, start, ttl, ttl, ttl);
            this.names = names;
            this.token = Redis.arg(token);
            this.fence = fence;
        }

        @Override
        public long fence() {
            return fence;
        }

        @Override
        public Duration ttl() {
            checkNotEnded("ttl");
            Script script = Scripts.MODERN_TTL;
            List<?> raw = redis.evalList(script, new byte[][] {names.key}, token);
            List<?> reply = Replies.list(script, raw, 2);
            long code = Replies.num(script, reply.get(0));
            if (code == 1) {
                return Duration.ofMillis(Replies.num(script, reply.get(1)));
            }
            try {
                code(code);
            } catch (NotHeldException e) {
                lose("ttl found it " + e.reason().name().toLowerCase(), e);
                throw e;
            }
            throw Replies.unexpected(script, raw);
        }

        @Override
        void release() {
            byte[][] keys = names.channel == null ? new byte[][] {names.key} : new byte[][] {names.key, names.channel};
            code(redis.evalLong(Scripts.MODERN_RELEASE, keys, token, Redis.arg(redis.publishCommand())));
        }

        /**
         * The refresh script; with waitForReplicas followed by WAIT on its
         * connection, as the acquire: it counts only once acknowledged, else
         * ReplicationException and the lease keeps its end (a failover to a
         * replica that missed it would keep the key with its earlier
         * expiry; the auto-refresh tries again).
         */
        @Override
        void refreshOnce(Duration ttl) {
            Duration checkedTtl = ModernLocker.checkTtl(ttl);
            byte[][] keys = {names.key};
            byte[] millis = Redis.arg(checkedTtl.toMillis());
            long start = System.nanoTime();
            sending(start, checkedTtl, checkedTtl, checkedTtl);
            if (waitReplicas == 0) {
                code(redis.evalLong(Scripts.MODERN_REFRESH, keys, token, millis));
            } else {
                Redis.Waited waited = redis.evalLongWait(Scripts.MODERN_REFRESH, keys, waitReplicas, waitTimeout,
                        token, millis);
                code((Long) waited.reply());
                if (!waited.acknowledged(waitReplicas)) {
                    throw new ReplicationException(names.name, waitReplicas, waited.acked(), waited.waitError());
                }
            }
            extend(start, checkedTtl, checkedTtl);
        }

        private void code(long reply) {
            if (reply == 0) {
                throw new NotHeldException(names.name, NotHeldException.Reason.TAKEN, "the key holds another token");
            }
            if (reply == -1) {
                throw new NotHeldException(names.name, NotHeldException.Reason.GONE, "the key has expired");
            }
            if (reply != 1) {
                throw new LockbridgeException("lockbridge: lock " + Keys.show(names.name) + ": unexpected reply "
                        + reply);
            }
        }
    }
}
