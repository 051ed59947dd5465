package io.lockbridge;

import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Locks by the legacy name in the phase the locker runs, with the same
 * keys, values, scripts and registry entries as Go's migrate.Locker:
 * {@link Phase#LEGACY} exactly as {@link LegacyLocker}; {@link Phase#MODERN}
 * as the modern lock (SET NX PX, owner-checked release with a release
 * notice) on the modern key; {@link Phase#DUAL_WRITE} and
 * {@link Phase#DUAL_READ} with migrate's scripts over both keys.
 *
 * <p>With {@link Builder#followPhase(String)} it follows the namespace's
 * phase key: it heartbeats into the registry (so the controller counts it),
 * moves with the fleet one phase at a time, and refuses to lock when it
 * cannot trust the phase ({@link PhaseUnknownException}). Close it when
 * done: its registry entry is removed — or, while locks it holds live on,
 * kept reporting them until their leases end.
 *
 * <pre>{@code
 * MigrateLocker locker = MigrateLocker.builder(redis).followPhase("orders").build();
 * try (Lock lock = locker.lock("orders:42", Duration.ofSeconds(30), Duration.ofSeconds(5))) {
 *     // critical section
 * }
 * }</pre>
 */
public final class MigrateLocker implements AutoCloseable {
    /**
     * How often a following locker reads the phase and heartbeats while it
     * does not hear the phase notices, or after a failed reading (Go:
     * DefaultPhaseInterval); while it hears them, two intervals before its
     * phase lease would lapse.
     */
    public static final Duration DEFAULT_PHASE_INTERVAL = Duration.ofSeconds(2);
    /** The phase lease, in phase intervals (Go: DefaultPhaseLeaseIntervals). */
    public static final int DEFAULT_PHASE_LEASE_INTERVALS = 12;

    /** The phase lease is below this: half the longest hold a heartbeat registers (Go: maxHold/2). */
    static final Duration MAX_LEASE = Follower.MAX_HOLD.dividedBy(2);

    /** A legacy value with less than one unit plus this left is not reported as a sighting. */
    static final Duration SIGHTING_SLACK = Duration.ofMillis(50);
    /** At most one sighting this often. */
    static final Duration SIGHTING_EVERY = Duration.ofSeconds(1);

    private static final SecureRandom RANDOM = new SecureRandom();

    private final Redis redis;
    private final ModernAcquire modernAttempts; // the MODERN phase's acquire, as a ModernLocker's
    private final LegacyProfile profile;
    private final Phase fixed;
    private final boolean autoRefresh;
    private final Backoff backoff;
    private final Namespace namespace; // null without a namespace
    private final Follower follow; // null without a namespace
    private final HeldSet held = new HeldSet();
    private final LocalWakes wakes = new LocalWakes();
    private final ScheduledExecutorService watchdog;
    private final AtomicLong lastSighting = new AtomicLong(Long.MIN_VALUE);
    private final Events events; // null without a listener
    private volatile boolean closed;

    private MigrateLocker(Builder builder) {
        this.redis = builder.redis;
        this.events = Events.of("migrate", builder.listener);
        this.modernAttempts = new ModernAcquire(builder.redis);
        this.profile = builder.profile;
        this.fixed = builder.phase;
        this.autoRefresh = builder.autoRefresh;
        this.backoff = builder.backoff;
        String namespaceName = builder.from != null ? builder.from : builder.namespace;
        if (namespaceName != null) {
            this.namespace = new Namespace(namespaceName);
            Phase heartbeatOnly = builder.from == null ? (builder.phase == null ? Phase.LEGACY : builder.phase) : null;
            Duration lease = builder.phaseLease != null ? builder.phaseLease
                    : builder.interval.multipliedBy(DEFAULT_PHASE_LEASE_INTERVALS);
            this.follow = new Follower(redis, namespace, builder.interval, lease, heartbeatOnly, held::report,
                    held::endIncompatible);
        } else {
            this.namespace = null;
            this.follow = null;
        }
        this.watchdog = Executors.newSingleThreadScheduledExecutor(Threads.daemon("lockbridge-migrate-watchdog"));
    }

    public static Builder builder(Redis redis) {
        return new Builder(redis);
    }

    /** Options of a MigrateLocker; defaults in each setter's documentation. */
    public static final class Builder {
        private final Redis redis;
        private LegacyProfile profile = LegacyProfile.defaults();
        private Phase phase;
        private String from;
        private String namespace;
        private Duration interval = DEFAULT_PHASE_INTERVAL;
        private Duration phaseLease;
        private boolean autoRefresh;
        private Backoff backoff = Backoff.modernDefault();
        private LockListener listener;

        private Builder(Redis redis) {
            if (redis == null) {
                throw new InvalidException("migrate: MigrateLocker needs a Redis");
            }
            this.redis = redis;
        }

        /** The legacy profile of the Java services' lock; default {@link LegacyProfile#defaults()}. */
        public Builder legacy(LegacyProfile profile) {
            this.profile = Objects.requireNonNull(profile);
            return this;
        }

        /** A fixed phase (no following); default LEGACY when neither this nor followPhase is set. */
        public Builder phase(Phase phase) {
            this.phase = Objects.requireNonNull(phase);
            return this;
        }

        /** Follow the phase of namespace from Redis, heartbeating into its registry. */
        public Builder followPhase(String namespace) {
            new Namespace(namespace);
            this.from = namespace;
            return this;
        }

        /** With a fixed phase: heartbeat into the registry of namespace (so the controller counts this client). */
        public Builder namespace(String namespace) {
            new Namespace(namespace);
            this.namespace = namespace;
            return this;
        }

        /** How often a following locker reads the phase and heartbeats; default 2 s. */
        public Builder phaseInterval(Duration interval) {
            if (interval == null || interval.compareTo(Duration.ofMillis(1)) < 0) {
                throw new InvalidException("migrate: phase interval must be at least 1ms, got " + interval);
            }
            this.interval = interval;
            return this;
        }

        /**
         * How long a reading is trusted; default 3 phase intervals. It must be
         * longer than the phase interval and below 2^39 ms; a lock's ttl may
         * then be at most 2^40 ms minus the lease (else InvalidException).
         */
        public Builder phaseLease(Duration lease) {
            if (lease == null || lease.compareTo(Duration.ofMillis(1)) < 0 || lease.compareTo(MAX_LEASE) >= 0) {
                throw new InvalidException("migrate: phase lease must be at least 1ms and below " + MAX_LEASE
                        + ", got " + lease);
            }
            this.phaseLease = lease;
            return this;
        }

        /** Refresh held locks every ttl/3, with the lost-lock signal on {@link Lock#done()}; default off. */
        public Builder autoRefresh(boolean enabled) {
            this.autoRefresh = enabled;
            return this;
        }

        /** The waiting backoff of lock(); default 8 ms doubling to 512 ms. */
        public Builder backoff(Backoff backoff) {
            this.backoff = Objects.requireNonNull(backoff);
            return this;
        }

        /**
         * Reports contention, lock()'s waits, the background refreshes of
         * auto-refreshed locks, the loss of any of its locks (a phase move
         * that ends one included) and the legacy sightings it records to listener
         * (system {@code migrate}; see {@link LockListener}). Default: none.
         */
        public Builder listener(LockListener listener) {
            this.listener = Objects.requireNonNull(listener);
            return this;
        }

        public MigrateLocker build() {
            if (from != null && phase != null) {
                throw new InvalidException("migrate: followPhase and a fixed phase exclude each other");
            }
            if (from != null && namespace != null) {
                throw new InvalidException("migrate: followPhase already names the namespace");
            }
            if (phaseLease != null && phaseLease.compareTo(interval) <= 0) {
                throw new InvalidException("migrate: phase lease " + phaseLease
                        + " must be longer than the phase interval " + interval);
            }
            if (phaseLease == null && interval.multipliedBy(DEFAULT_PHASE_LEASE_INTERVALS).compareTo(MAX_LEASE) >= 0) {
                throw new InvalidException("migrate: phase interval " + interval + " must be below "
                        + MAX_LEASE.dividedBy(DEFAULT_PHASE_LEASE_INTERVALS)
                        + " (its phase lease, " + DEFAULT_PHASE_LEASE_INTERVALS + " intervals, below "
                        + MAX_LEASE + ")");
            }
            return new MigrateLocker(this);
        }
    }

    /** The phase run now; a following locker reads it first when its lease has lapsed. */
    public Phase phase() {
        if (follow != null) {
            return follow.phase(Duration.ZERO, null).phase();
        }
        return fixed == null ? Phase.LEGACY : fixed;
    }

    /**
     * What this locker knows of its phase without asking Redis, for health
     * checks: its namespace and registry id, the phase it last read (null
     * before its first reading; the fixed phase of a heartbeat-only locker)
     * and how long its phase lease still runs (zero once it has lapsed: a
     * lock call then reads the phase first, and refuses with
     * {@link PhaseUnknownException} if it cannot). Null without a namespace.
     */
    public PhaseLease phaseLease() {
        if (follow == null) {
            return null;
        }
        Phase phase = follow.current();
        return new PhaseLease(namespace.name, follow.id, phase == null && fixed != null ? fixed : phase,
                follow.leaseLeft());
    }

    /** See {@link MigrateLocker#phaseLease()}. */
    public record PhaseLease(String namespace, String clientId, Phase phase, Duration left) {}

    /** The registry id of this locker; null without a namespace. */
    public String clientId() {
        return follow == null ? null : follow.id;
    }

    /** The legacy key and the modern key of a lock name. */
    public List<byte[]> keys(String name) {
        byte[] legacyKey = profile.encodeKey(name);
        return List.of(legacyKey, Keys.modernKey(legacyKey));
    }

    /**
     * One attempt in the current phase: NotObtainedException when held,
     * PhaseUnknownException when the phase is untrusted.
     */
    public Lock tryLock(String name, Duration ttl) {
        Args args = prepare(name, ttl);
        try {
            return attempt(args, false);
        } catch (NotObtainedException e) {
            if (events != null) {
                events.contended();
            }
            throw e;
        }
    }

    /**
     * Waits up to wait for the lock, each attempt in the phase current then;
     * between attempts it sleeps the backoff, never past the holder's
     * remaining lease, and wakes at once on the modern key's release notice
     * (what Go's releases publish, and this locker's in the dual and modern
     * phases), and on the release of this locker's own legacy-phase locks
     * on name, which publish none.
     */
    public Lock lock(String name, Duration ttl, Duration wait) {
        Args args = prepare(name, ttl);
        Wait.Notices notices = wake -> {
            AutoCloseable local = wakes.add(args.name, wake);
            if (args.channel == null) {
                return local;
            }
            try {
                AutoCloseable remote = redis.subscribe(args.channel, wake);
                return () -> {
                    try {
                        remote.close();
                    } finally {
                        local.close();
                    }
                };
            } catch (RedisUnavailableException e) {
                return local; // no notices from Redis: poll, woken still by this locker's releases
            }
        };
        return Wait.loop(name, wait, backoff, again -> attempt(args, again), notices, events);
    }

    /**
     * Stops following and heartbeating, and removes this client's registry
     * entry; later lock calls throw InvalidException. Held locks stay valid
     * to the end of their lease and can be unlocked, but are no longer
     * refreshed (each is signalled lost on {@link Lock#done()} at ttl/12
     * before its lease ends, as every lock is that nothing extended); while any of
     * them (or an acquire of unknown outcome) may live, the entry stays,
     * reporting them, until the longest lease has ended plus 1 s, so the
     * controller cannot step past them.
     */
    @Override
    public void close() {
        closed = true;
        watchdog.shutdownNow();
        if (follow != null) {
            follow.close();
        }
    }

    private record Args(String name, byte[] legacyKey, byte[] modernKey, byte[] channel, Duration ttl) {}

    private Args prepare(String name, Duration ttl) {
        if (closed) {
            throw new InvalidException("migrate: locker closed");
        }
        profile.checkTtl(ttl);
        byte[] legacyKey = profile.encodeKey(name);
        byte[] modernKey = Keys.modernKey(legacyKey);
        // PX takes whole milliseconds: the lease counted must not be longer than the one the server keeps.
        return new Args(name, legacyKey, modernKey, Keys.companion(modernKey, Keys.RELEASED_SUFFIX), wholeMillis(ttl));
    }

    /** ttl in whole milliseconds (PX's unit; checked to be at least 1 ms). */
    static Duration wholeMillis(Duration ttl) {
        return Duration.ofMillis(ttl.toMillis());
    }

    /** One attempt in the phase current now; again: lock()'s attempts after a miss. */
    private Lock attempt(Args args, boolean again) {
        if (closed) {
            throw new InvalidException("migrate: locker closed");
        }
        Wait.notInterrupted(args.name);
        if (follow == null) {
            AbstractLock lock = acquire(fixed == null ? Phase.LEGACY : fixed, args, again);
            lock.events = events;
            started(lock);
            return lock;
        }
        HeldSet.Inflight[] res = new HeldSet.Inflight[1];
        Follower.Trusted trusted = follow.phase(args.ttl, ph -> res[0] = held.reserve(ph, args.ttl));
        Phase phase = trusted.phase();
        AbstractLock lock;
        try {
            lock = acquire(phase, args, again);
        } catch (RuntimeException e) {
            held.settle(res[0], e);
            throw e;
        }
        if (trusted.outlived()) {
            // The acquire came back after the phase lease ran out: it may have
            // run after the registry stopped counting this client, and the
            // fleet stepped past its phase. Give the lock back; the
            // reservation stays reported until its ttl unless that worked.
            RuntimeException uerr = null;
            try {
                lock.unlock();
            } catch (RuntimeException e) {
                uerr = new UnknownOutcomeException("migrate: acquire " + Keys.show(args.name)
                        + ": giving back a lock taken after the phase lease: " + e.getMessage(), e);
            }
            held.settle(res[0], uerr);
            PhaseUnknownException out = follow.outlived(phase, "acquire");
            if (uerr != null) {
                out.addSuppressed(uerr);
            }
            throw out;
        }
        // every migrate lock's loss counts, a phase move's included: set before the held set can end it
        lock.events = events;
        held.land(res[0], lock);
        lock.trust = new AbstractLock.Trust() {
            @Override
            public long until(Duration ttl) {
                return follow.trusted(ttl);
            }

            @Override
            public RuntimeException outlived(Phase phaseNow) {
                return follow.outlived(phaseNow, "refresh");
            }
        };
        Phase cur = follow.current();
        if (cur != null && !Phase.compatible(phase, cur)) {
            lock.lose("taken in " + phase + ", and its locker moved to " + cur + " meanwhile", null);
        }
        started(lock);
        return lock;
    }

    private void started(AbstractLock lock) {
        if (autoRefresh && !lock.ended()) {
            lock.autoRefresh(watchdog);
        }
    }

    private AbstractLock acquire(Phase phase, Args args, boolean again) {
        AbstractLock lock = switch (phase) {
            case LEGACY -> LegacyLocker.acquire(redis, profile, args.name, args.legacyKey, args.ttl, Phase.LEGACY);
            case MODERN -> acquireModern(args, again);
            default -> acquireDual(phase, args);
        };
        if (phase == Phase.LEGACY || args.channel == null) {
            lock.afterRelease = () -> wakes.released(args.name); // its release publishes no notice
        }
        return lock;
    }

    static String token() {
        byte[] bytes = new byte[16];
        RANDOM.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /**
     * Whether the modern key holds token: reading it back settles an
     * acquire whose reply was lost (a read changes nothing) — false only
     * when the acquire can no longer run (its connection killed on the
     * server, confirmed, before the read). A key without our token
     * otherwise settles nothing (the acquire may still be on its way and run
     * after the read): an unknown outcome naming the token.
     */
    private boolean readBack(Args args, String token, UnknownOutcomeException cause) {
        boolean stopped = cause.stopRequest();
        byte[] stored;
        try {
            stored = redis.get(args.modernKey);
        } catch (RuntimeException e) {
            cause.addSuppressed(e);
            throw cause;
        }
        if (stored != null && Keys.same(stored, Redis.arg(token))) {
            return true;
        }
        if (stopped) {
            return false;
        }
        throw new UnknownOutcomeException("migrate: acquire " + Keys.show(args.name)
                + ": the reply was lost and the modern key does not hold our token "
                + token + " yet: the acquire may still run (its lock, if it does, ends by its ttl)", cause);
    }

    private AbstractLock acquireModern(Args args, boolean again) {
        String token = token();
        long start = System.nanoTime();
        ModernAcquire.Reply reply;
        try {
            reply = modernAttempts.once(args.modernKey, null, Redis.arg(token), args.ttl.toMillis(), again);
        } catch (UnknownOutcomeException e) {
            if (readBack(args, token, e)) {
                return new ModernLock(args, token, start);
            }
            throw new NotObtainedException("migrate: acquire " + Keys.show(args.name)
                    + ": the reply was lost, its connection was killed, and the modern key does not hold our token",
                    Duration.ZERO, e);
        }
        if (reply.acquired()) {
            return new ModernLock(args, token, start);
        }
        long pttl = reply.value();
        Duration left = pttl < 0 ? Duration.ZERO : Duration.ofMillis(Math.max(1, pttl));
        throw new NotObtainedException("migrate: lock " + Keys.show(args.name)
                + " is held on its modern key (" + left + " left)", left);
    }

    /** The dual-write modern key's PX: the ttl, or longer while the legacy value expiry stands. */
    private Duration modernPx(Instant now, Duration ttl, long expiry) {
        Duration valueLeft = Duration.between(now, profile.valueEnd(expiry));
        if (valueLeft.compareTo(ttl) > 0) {
            long millis = (valueLeft.toNanos() + 999_999) / 1_000_000;
            return Duration.ofMillis(millis);
        }
        return ttl;
    }

    /**
     * How long after a dual-phase write with modernTtl (its PX) for ttl runs
     * the server may keep the lock: modernTtl, and in dual-write the legacy
     * value's hold.
     */
    private Duration hold(Phase phase, Duration modernTtl, Duration ttl) {
        if (phase != Phase.DUAL_WRITE) {
            return modernTtl;
        }
        Duration legacyHold = profile.serverHold(ttl);
        return legacyHold.compareTo(modernTtl) > 0 ? legacyHold : modernTtl;
    }

    /** The holder counts its lease as the shorter of ttl and the legacy value's life, in dual-write. */
    private Duration localTtl(Phase phase, Instant now, Duration ttl, long expiry) {
        return phase == Phase.DUAL_WRITE ? profile.holderLease(now, ttl, expiry) : ttl;
    }

    private AbstractLock acquireDual(Phase phase, Args args) {
        String token = token();
        long start = System.nanoTime();
        Instant now = profile.now();
        long expiry = profile.expiry(now, args.ttl);
        byte[] value = profile.valueCodec().encode(expiry);
        Duration modernTtl = phase == Phase.DUAL_WRITE ? modernPx(now, args.ttl, expiry) : args.ttl;
        Script script = Scripts.MIGRATE_ACQUIRE;
        List<?> raw;
        try {
            raw = redis.evalList(script, new byte[][] {args.legacyKey, args.modernKey, args.modernKey},
                    flag(phase == Phase.DUAL_WRITE), value,
                    Redis.arg(profile.valueCodec().id()), Redis.arg(profile.cutoff(now)), Redis.arg(token),
                    Redis.arg(modernTtl.toMillis()), Redis.arg("0"), Redis.arg("0"));
        } catch (UnknownOutcomeException e) {
            // The script writes the modern key (and, in dual-write, the
            // legacy key) in one step, and the token is ours alone.
            if (readBack(args, token, e)) {
                return new DualLock(phase, args, token, expiry, start, localTtl(phase, now, args.ttl, expiry),
                        hold(phase, modernTtl, args.ttl));
            }
            throw new NotObtainedException("migrate: acquire " + Keys.show(args.name)
                    + ": the reply was lost, its connection was killed, and the modern key does not hold our token",
                    Duration.ZERO, e);
        }
        List<?> reply = Replies.list(script, raw, 2);
        long code = Replies.num(script, reply.get(0));
        if (code == 1) {
            return new DualLock(phase, args, token, expiry, start, localTtl(phase, now, args.ttl, expiry),
                    hold(phase, modernTtl, args.ttl));
        }
        if (code == 0) {
            long pttl = Replies.num(script, reply.get(1));
            Duration left = pttl < 0 ? Duration.ZERO : Duration.ofMillis(Math.max(1, pttl));
            throw new NotObtainedException("migrate: lock " + Keys.show(args.name)
                    + " is held on its modern key (" + left + " left)", left);
        }
        if (code == -1 && reply.size() >= 4) {
            long state = Replies.num(script, reply.get(1));
            if (state == -1) {
                throw new NotObtainedException("migrate: lock " + Keys.show(args.name)
                        + " is held by a foreign legacy value (not " + profile.valueCodec().id() + ")", Duration.ZERO);
            }
            long legacyExpiry = Replies.num(script, reply.get(2));
            long modernExists = Replies.num(script, reply.get(3));
            Duration left = profile.remaining(legacyExpiry, now);
            if (modernExists == 0 && left.compareTo(profile.unitDuration().plus(SIGHTING_SLACK)) >= 0) {
                sighted(args.legacyKey); // a live legacy lock with no modern key: a legacy-only locker
            }
            throw new NotObtainedException("migrate: lock " + Keys.show(args.name)
                    + " is held on its legacy key until " + legacyExpiry, left);
        }
        throw Replies.unexpected(script, raw);
    }

    /**
     * Records a legacy sighting, at most once a second, best effort (stamped with the server's clock). A write
     * that failed gives its turn back, so the next meeting records the evidence it dropped.
     */
    private void sighted(byte[] legacyKey) {
        if (namespace == null) {
            return;
        }
        long now = System.nanoTime();
        long last = lastSighting.get();
        if ((last != Long.MIN_VALUE && now - last < SIGHTING_EVERY.toNanos())
                || !lastSighting.compareAndSet(last, now)) {
            return;
        }
        try {
            redis.evalLong(Scripts.SIGHTING, new byte[][] {namespace.sighting, namespace.meta}, legacyKey);
        } catch (RuntimeException ignored) {
            lastSighting.compareAndSet(now, last); // the evidence matters, not every instance of it
            return;
        }
        if (events != null) {
            events.sighted(namespace.name);
        }
    }

    static byte[] flag(boolean set) {
        return Redis.arg(set ? "1" : "0");
    }

    /** A lock taken in dual-write or dual-read: both keys, released and refreshed by migrate's scripts. */
    private final class DualLock extends AbstractLock {
        private final Args args;
        private final String token;
        private long expiry; // the legacy expiry written (dual-write), or that would have been
        private Duration lease;

        DualLock(Phase phase, Args args, String token, long expiry, long start, Duration local, Duration hold) {
            super(args.name, phase, start, local, args.ttl, hold);
            this.args = args;
            this.token = token;
            this.expiry = expiry;
            this.lease = args.ttl;
        }

        @Override
        void release() {
            byte[] pub = args.channel == null ? Redis.arg("") : Redis.arg(redis.publishCommand());
            byte[][] owner;
            synchronized (this) {
                owner = profile.ownerArgs(expiry, lease);
            }
            byte[][] argv = new byte[9][];
            argv[0] = flag(phase == Phase.DUAL_WRITE);
            argv[1] = Redis.arg(token);
            argv[2] = pub;
            System.arraycopy(owner, 0, argv, 3, 6);
            Script script = Scripts.MIGRATE_RELEASE;
            List<?> raw = redis.evalList(script,
                    new byte[][] {args.legacyKey, args.modernKey, args.channel == null ? args.modernKey : args.channel},
                    argv);
            List<?> reply = Replies.list(script, raw, 2);
            long modern = Replies.num(script, reply.get(0));
            long legacy = Replies.num(script, reply.get(1));
            if (modern != 1 || legacy != 1) {
                throw dualNotHeld(args.name, modern, legacy);
            }
        }

        @Override
        void refreshOnce(Duration newTtl) {
            profile.checkTtl(newTtl);
            Duration ttl = wholeMillis(newTtl);
            long start = System.nanoTime();
            Instant now = profile.now();
            long newExpiry = profile.expiry(now, ttl);
            byte[] value = profile.valueCodec().encode(newExpiry);
            Duration modernTtl = phase == Phase.DUAL_WRITE ? modernPx(now, ttl, newExpiry) : ttl;
            byte[][] owner;
            synchronized (this) {
                owner = profile.ownerArgs(expiry, lease);
            }
            byte[][] argv = new byte[10][];
            argv[0] = flag(phase == Phase.DUAL_WRITE);
            argv[1] = Redis.arg(token);
            argv[2] = Redis.arg(modernTtl.toMillis());
            argv[3] = value;
            System.arraycopy(owner, 0, argv, 4, 6);
            Script script = Scripts.MIGRATE_REFRESH;
            sending(start, localTtl(phase, now, ttl, newExpiry), ttl, hold(phase, modernTtl, ttl));
            List<?> raw = redis.evalList(script, new byte[][] {args.legacyKey, args.modernKey}, argv);
            List<?> reply = Replies.list(script, raw, 2);
            long modern = Replies.num(script, reply.get(0));
            long legacy = Replies.num(script, reply.get(1));
            if (modern != 1 || legacy != 1) {
                throw dualNotHeld(args.name, modern, legacy);
            }
            if (phase == Phase.DUAL_WRITE) {
                synchronized (this) {
                    expiry = newExpiry;
                    lease = ttl;
                }
            }
            extend(start, localTtl(phase, now, ttl, newExpiry), ttl);
        }
    }

    /** The NotHeldException of a release or refresh reply {modern, legacy}, as Go's migrate reports it. */
    static NotHeldException dualNotHeld(String name, long modern, long legacy) {
        if (modern == -1) {
            return new NotHeldException(name, NotHeldException.Reason.GONE, "the modern key has expired");
        }
        if (legacy == 0 || legacy == -1 || legacy == -2 || legacy == -3) {
            return LegacyLocker.notHeld(name, legacy);
        }
        return new NotHeldException(name, NotHeldException.Reason.TAKEN, "the modern key holds another token");
    }

    /** A lock taken in modern: the modern lock on the modern key. */
    private final class ModernLock extends AbstractLock {
        private final Args args;
        private final String token;

        ModernLock(Args args, String token, long start) {
            super(args.name, Phase.MODERN, start, args.ttl, args.ttl, args.ttl);
            this.args = args;
            this.token = token;
        }

        @Override
        void release() {
            Script script = Scripts.MODERN_RELEASE;
            long code;
            if (args.channel != null) {
                code = redis.evalLong(script, new byte[][] {args.modernKey, args.channel}, Redis.arg(token),
                        Redis.arg(redis.publishCommand()));
            } else {
                code = redis.evalLong(script, new byte[][] {args.modernKey}, Redis.arg(token),
                        Redis.arg(redis.publishCommand()));
            }
            modernCode(code);
        }

        @Override
        void refreshOnce(Duration newTtl) {
            Duration ttl = wholeMillis(newTtl);
            long start = System.nanoTime();
            Script script = Scripts.MODERN_REFRESH;
            sending(start, ttl, ttl, ttl);
            modernCode(redis.evalLong(script, new byte[][] {args.modernKey}, Redis.arg(token),
                    Redis.arg(ttl.toMillis())));
            extend(start, ttl, ttl);
        }

        private void modernCode(long code) {
            if (code == 0) {
                throw new NotHeldException(args.name, NotHeldException.Reason.TAKEN,
                        "the modern key holds another token");
            }
            if (code == -1) {
                throw new NotHeldException(args.name, NotHeldException.Reason.GONE, "the modern key has expired");
            }
        }
    }
}
