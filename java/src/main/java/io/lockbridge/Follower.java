package io.lockbridge;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The phase a {@link MigrateLocker} runs when it has a namespace, as Go's
 * migrate follower: one script (heartbeat.lua) writes its registry entry —
 * or, when the entry is the one its last confirmed write stored, only
 * renews its expiry (a touch) — and reads the phase; it reads at every
 * interval while it does not hear the phase notices (on one of the
 * namespace's sharded notice channels) or its last reading failed, and
 * otherwise two intervals before its phase lease would lapse; it moves at most one phase per reading towards the
 * stored one, announcing the move first (the entry's next) and moving only
 * if a second reading still wants it, then reporting the new phase; and it
 * trusts what it read only for the phase lease after the reading was sent,
 * by its monotonic clock. A phase it cannot trust makes every lock and
 * refresh refuse with a {@link PhaseUnknownException}.
 */
final class Follower {
    /** What the locker holds, for the heartbeat. */
    record Held(Phase oldest, Phase newest, Duration left, Duration ttl) {
        static final Held NONE = new Held(null, null, Duration.ZERO, Duration.ZERO);
    }

    private record Read(Phase ran, Phase want, long startNanos, Duration maxTtl) {}

    private record Reply(String phase, boolean hasNs, long instance, long gen, long written) {}

    /** A phase to lock in, and the end of the phase lease it is trusted under (System.nanoTime()). */
    record Trusted(Phase phase, long untilNanos) {
        /** Whether the lease has ended by now: a command sent under it that comes back now is not trusted. */
        boolean outlived() {
            return System.nanoTime() - untilNanos >= 0;
        }
    }

    /**
     * The longest hold a heartbeat registers (heartbeat.lua takes 1 ms to
     * 2^40 ms): a following locker's phase lease plus its longest ttl (Go:
     * maxHold).
     */
    static final Duration MAX_HOLD = Duration.ofMillis(1L << 40);

    private final Redis redis;
    final Namespace namespace;
    final String id;
    private final String host;
    private final long pid;
    private final Duration interval;
    private final Duration lease;
    private final Phase fixed; // heartbeat only, with a fixed phase
    private final Supplier<Held> held;
    private final Consumer<Phase> onStep;

    private final ReentrantLock syncMu = new ReentrantLock();
    private final Object stateLock = new Object();
    private Phase current; // null until the first good reading
    private boolean ran;
    private long instance;
    private long gen;
    private long untilNanos;
    private boolean hasUntil;
    private PhaseUnknownException refusal;
    private RuntimeException lastErr;
    private Duration maxTtl = Duration.ZERO;
    private long seq; // the last heartbeat's sequence number
    private Entry stored; // what the last confirmed write stored; null: unknown
    private long lastGoodNanos; // when the last good reading was sent
    private boolean hasLastGood;
    private final int shard; // the notice channel it listens on
    private boolean sent;
    /**
     * A heartbeat got no reply (its connection dropped, its bytes perhaps
     * still on their way): it may land at any later time, after a forget too.
     */
    private boolean unanswered;
    private boolean closed;
    private Thread loop;
    private final Semaphore wake = new Semaphore(0);
    private AutoCloseable subscription;

    Follower(Redis redis, Namespace namespace, Duration interval, Duration lease, Phase fixed, Supplier<Held> held,
            Consumer<Phase> onStep) {
        this.redis = redis;
        this.namespace = namespace;
        this.interval = interval;
        this.lease = lease;
        this.fixed = fixed;
        this.held = held;
        this.onStep = onStep;
        this.host = hostName();
        this.pid = ProcessHandle.current().pid();
        byte[] random = new byte[6];
        ThreadLocalRandom.current().nextBytes(random);
        this.id = host + "-" + pid + "-" + HexFormat.of().formatHex(random);
        this.shard = (random[0] & 0xff) % Namespace.NOTICE_SHARDS;
    }

    /** The host name as Go's os.Hostname reads it (the kernel's, no DNS lookup), so both languages' entries agree. */
    static String hostName() {
        try {
            java.nio.file.Path hostnameFile = java.nio.file.Path.of("/proc/sys/kernel/hostname");
            if (java.nio.file.Files.isReadable(hostnameFile)) {
                return java.nio.file.Files.readString(hostnameFile).trim();
            }
        } catch (Exception e) {
            // fall back below
        }
        String env = System.getenv("HOSTNAME");
        if (env != null && !env.isEmpty()) {
            return env;
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            String runtimeName = ManagementFactory.getRuntimeMXBean().getName();
            int atSign = runtimeName.indexOf('@');
            return atSign >= 0 ? runtimeName.substring(atSign + 1) : "";
        }
    }

    /**
     * The phase to run a lock of ttl in now, and the end of the phase lease
     * it is trusted under. From memory while the lease runs and covers ttl;
     * otherwise it reads first. onPhase sees the phase under the follower's
     * mutex, so the lock call registers its acquire in that phase before the
     * follower can move. A lock call whose command comes back after the
     * lease's end may have run after the registry stopped counting this
     * client (a pause between the check and the send), and must not trust
     * what it did.
     */
    Trusted phase(Duration ttl, Consumer<Phase> onPhase) {
        Duration longest = MAX_HOLD.minus(lease);
        if (ttl.compareTo(longest) > 0) {
            throw new InvalidException("migrate: ttl " + ttl + " is above " + longest
                    + ": the registry counts a client for at most "
                    + MAX_HOLD + " after a heartbeat, its phase lease " + lease + " included");
        }
        Trusted trusted = valid(ttl, onPhase);
        if (trusted != null) {
            return trusted;
        }
        sync(ttl);
        trusted = valid(ttl, onPhase);
        if (trusted == null) {
            throw lapsed();
        }
        return trusted;
    }

    /** Throws unless the lease runs and covers a refresh to ttl; the lease's end (System.nanoTime()). */
    long trusted(Duration ttl) {
        return phase(ttl, null).untilNanos();
    }

    /** The error of a lock call whose command came back after the phase lease it was sent under had ended. */
    PhaseUnknownException outlived(Phase phase, String what) {
        return new PhaseUnknownException(namespace.name, PhaseUnknownException.Reason.LEASE_LAPSED, phase,
                "it locks again once it reads the phase (Redis must be reachable for the namespace's keys)",
                new LockbridgeException("the " + what + " came back after the phase lease it was sent under had ended "
                        + "(a pause between the check "
                        + "and the send?): the registry may no longer have counted this client when it ran"));
    }

    private Trusted valid(Duration ttl, Consumer<Phase> onPhase) {
        synchronized (stateLock) {
            if (closed) {
                throw new InvalidException("migrate: locker closed");
            }
            if (refusal != null) {
                return null; // read again: it may have been repaired
            }
            if (current == null || !hasUntil || System.nanoTime() - untilNanos >= 0 || ttl.compareTo(maxTtl) > 0) {
                return null;
            }
            if (onPhase != null) {
                onPhase.accept(current);
            }
            return new Trusted(current, untilNanos);
        }
    }

    private PhaseUnknownException lapsed() {
        synchronized (stateLock) {
            if (refusal != null) {
                return refusal;
            }
            return new PhaseUnknownException(namespace.name, PhaseUnknownException.Reason.LEASE_LAPSED, current,
                    "it locks again once it reads the phase (Redis must be reachable for the namespace's keys)",
                    lastErr);
        }
    }

    Phase current() {
        synchronized (stateLock) {
            return current;
        }
    }

    /**
     * How long the phase lease still runs by the monotonic clock, without
     * reading: zero once it has lapsed, before the first reading, or while a
     * refusal stands.
     */
    Duration leaseLeft() {
        synchronized (stateLock) {
            if (current == null || !hasUntil || refusal != null) {
                return Duration.ZERO;
            }
            return Duration.ofNanos(Math.max(0, untilNanos - System.nanoTime()));
        }
    }

    /** A reading; then, when it wants a move, the announcing reading, the move, and the reporting reading. */
    void sync(Duration ttl) {
        syncMu.lock();
        try {
            Read first = reading(ttl, null);
            if (first.want != first.ran) {
                Read announced = reading(ttl, first.want);
                if (announced.want == first.want && announced.ran == first.ran) {
                    move(announced);
                    reading(ttl, null);
                }
            }
            synchronized (stateLock) {
                if (loop == null && !closed && current != null) {
                    loop = Threads.daemon("lockbridge-follower-" + namespace.name).newThread(this::run);
                    loop.start();
                }
            }
        } finally {
            syncMu.unlock();
        }
    }

    private Read reading(Duration ttl, Phase next) {
        Phase entryPhase;
        long inst;
        long generation;
        long sequence;
        Phase ranNow;
        Duration max;
        boolean lapsed;
        synchronized (stateLock) {
            if (closed) {
                throw new InvalidException("migrate: locker closed");
            }
            entryPhase = fixed != null ? fixed : current != null ? current : Phase.LEGACY;
            inst = instance;
            generation = gen;
            sequence = ++seq;
            ranNow = current;
            max = ttl.compareTo(maxTtl) > 0 ? ttl : maxTtl;
            lapsed = refusal != null || !hasUntil || System.nanoTime() - untilNanos >= 0;
            sent = true;
        }
        Held holds = held == null ? Held.NONE : held.get();
        if (holds.ttl.compareTo(max) > 0) {
            max = holds.ttl;
        }
        Phase nextPhase = next != null && next != entryPhase ? next : null;
        long left = holds.oldest == null ? -1 : Math.max(0, holds.left.toMillis());
        Entry entry = new Entry(id, entryPhase, nextPhase, host, pid, inst, generation, sequence, holds.oldest,
                holds.newest, left);
        long holdMs = Math.max(1, lease.plus(max).toMillis());
        long start = System.nanoTime();
        Reply rep;
        try {
            rep = beat(entry, holdMs);
        } catch (RuntimeException err) {
            synchronized (stateLock) {
                lastErr = err;
                throw new PhaseUnknownException(namespace.name, PhaseUnknownException.Reason.LEASE_LAPSED, current,
                        "it locks again once it reads the phase (Redis must be reachable for the namespace's keys)",
                        err);
            }
        }
        synchronized (stateLock) {
            lastErr = null;
            lastGoodNanos = start;
            hasLastGood = true;
            Phase target;
            try {
                target = judge(rep);
            } catch (PhaseUnknownException refused) {
                refusal = refused;
                hasUntil = false;
                throw refused;
            }
            refusal = null;
            if (fixed == null) {
                ran = true;
            }
            // A lock whose lease has run out holds nothing: it does not keep
            // a returning follower from starting afresh.
            Phase want = want(current, target, lapsed
                    && (holds.oldest == null || holds.left.isNegative() || holds.left.isZero()));
            if (want == current) {
                untilNanos = start + lease.toNanos();
                hasUntil = true;
                maxTtl = max;
            }
            return new Read(ranNow, want, start, max);
        }
    }

    /**
     * One heartbeat (Go: follower.beat): a touch naming the last confirmed
     * write (its seq) when entry says what that write stored, else the entry;
     * the entry at once when a touch found none, or another than the one it
     * names (forgotten or pruned meanwhile, and maybe an older write of ours
     * landed late since). Keeps what the registry holds.
     * A heartbeat that wrote nothing because an entry with a seq at or above
     * its own stands throws: readings go one at a time, so that entry is not
     * this locker's newer one, the registry does not count the locker on it,
     * and the reading must renew no phase lease.
     */
    private Reply beat(Entry entry, long holdMs) {
        long renews; // the seq of the entry a touch renews; 0: send the entry
        synchronized (stateLock) {
            renews = entry.same(stored) ? stored.seq : 0;
        }
        boolean touch = renews != 0;
        Reply rep = null;
        try {
            rep = send(entry, holdMs, renews);
            if (touch && rep.written < 0) {
                synchronized (stateLock) {
                    entry = entry.withSeq(++seq);
                }
                touch = false;
                rep = send(entry, holdMs, 0);
            }
            if (rep.written == 0) {
                throw new IllegalStateException("lockbridge: heartbeat: the registry holds an entry for " + id
                        + " with a seq at or above " + entry.seq
                        + " that this locker did not write, so it does not count this locker; if no other process runs "
                        + "under that id: `lockbridge fleet forget --namespace "
                        + namespace.name + " --force " + id + "`");
            }
            return rep;
        } finally {
            synchronized (stateLock) {
                if (rep == null || rep.written != 1) {
                    stored = null; // unknown, or a newer entry stands: write it next time
                } else if (!touch) {
                    stored = entry;
                }
            }
        }
    }

    /** Sends entry's heartbeat: the entry, or (renews not 0) a touch of the stored entry of seq renews. */
    private Reply send(Entry entry, long holdMs, long renews) {
        boolean touch = renews != 0;
        List<?> raw;
        try {
            raw = redis.evalList(Scripts.HEARTBEAT,
                    new byte[][] {namespace.phase, namespace.meta, namespace.clients, namespace.expiry, namespace.seen},
                    Redis.arg(id),
                    Redis.arg(entry.seq), Redis.arg(holdMs), Redis.arg(touch ? "" : entry.json()),
                    Redis.arg(touch ? Long.toString(renews) : ""));
        } catch (UnknownOutcomeException e) {
            synchronized (stateLock) {
                unanswered = true;
            }
            throw e;
        }
        List<?> reply = Replies.list(Scripts.HEARTBEAT, raw, 5);
        String init = Replies.text(Scripts.HEARTBEAT, reply.get(1));
        String genText = Replies.text(Scripts.HEARTBEAT, reply.get(2));
        boolean hasNs = !init.isEmpty() || !genText.isEmpty();
        Object writtenReply = reply.get(4);
        long written = writtenReply instanceof Long count ? count : 0;
        return new Reply(Replies.text(Scripts.HEARTBEAT, reply.get(0)), hasNs, decimal(init), decimal(genText),
                written);
    }

    /**
     * Whether a tick may pass without a reading (Go: follower.quiet): it
     * hears the notices — subscribed, its pub/sub connection up (or a fixed
     * phase, which reads none) —, its last reading was good, and the next
     * tick still comes at least two intervals before its phase lease lapses.
     * A resubscription after a reconnect wakes it as a notice does
     * (Redis.subscribe), as Go's loop reads after subscribing again.
     */
    private boolean quiet() {
        if (fixed == null && !redis.pubsubOpen()) {
            return false;
        }
        synchronized (stateLock) {
            if ((fixed == null && subscription == null) || lastErr != null || refusal != null || !hasLastGood) {
                return false;
            }
            long since = System.nanoTime() - lastGoodNanos;
            return since + interval.toNanos() <= lease.toNanos() - 2 * interval.toNanos();
        }
    }

    /** One phase towards target; straight to it for a follower that runs nothing or returns after a lapse. */
    static Phase want(Phase cur, Phase target, boolean returning) {
        if (cur == null || returning) {
            return target;
        }
        if (target.ordinal() > cur.ordinal()) {
            return Phase.values()[cur.ordinal() + 1];
        }
        if (target.ordinal() < cur.ordinal()) {
            return Phase.values()[cur.ordinal() - 1];
        }
        return cur;
    }

    private void move(Read announced) {
        Phase from;
        synchronized (stateLock) {
            if (closed || current != announced.ran) {
                return;
            }
            from = current;
            current = announced.want;
            untilNanos = announced.startNanos + lease.toNanos();
            hasUntil = true;
            maxTtl = announced.maxTtl;
        }
        if (from != null && onStep != null) {
            onStep.accept(announced.want);
        }
    }

    /** Under stateLock: the phase to move towards, or why not to trust the reading. */
    private Phase judge(Reply reply) {
        if (fixed != null) {
            return fixed;
        }
        if (reply.hasNs && (reply.instance < 0 || reply.gen < 0)) {
            throw refuse(PhaseUnknownException.Reason.UNREADABLE, namespace.remedyRepair(),
                    "the namespace hash has an unreadable init or gen");
        }
        if (reply.phase.isEmpty()) {
            if (ran || instance != 0 || reply.hasNs) {
                throw refuse(PhaseUnknownException.Reason.LOST, namespace.remedyRepair(), null);
            }
            throw refuse(PhaseUnknownException.Reason.UNINITIALIZED, namespace.remedyInit(), null);
        }
        Phase phase = Phase.ofWire(reply.phase);
        if (phase == null) {
            throw refuse(PhaseUnknownException.Reason.UNREADABLE, namespace.remedyRepair(),
                    "the phase key holds " + Keys.show(reply.phase));
        }
        if (instance != 0 && (!reply.hasNs || reply.instance != instance)) {
            throw refuse(PhaseUnknownException.Reason.WENT_BACK, namespace.remedyRepair(),
                    "the namespace is not the instance " + instance + " this locker read");
        }
        if (reply.hasNs && reply.gen < gen) {
            throw refuse(PhaseUnknownException.Reason.WENT_BACK, namespace.remedyRepair(),
                    "generation " + reply.gen + " is older than " + gen + ", read before");
        }
        if (reply.hasNs) {
            instance = reply.instance;
            gen = Math.max(gen, reply.gen);
        }
        return phase;
    }

    private PhaseUnknownException refuse(PhaseUnknownException.Reason why, String remedy, String cause) {
        return new PhaseUnknownException(namespace.name, why, current, remedy,
                cause == null ? null : new LockbridgeException(cause));
    }

    /** A non-negative decimal; -1 when it is not one. */
    static long decimal(String text) {
        if (text.isEmpty() || text.length() > 18 || !text.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return -1;
        }
        return Long.parseLong(text);
    }

    private void run() {
        while (true) {
            synchronized (stateLock) {
                if (closed) {
                    return;
                }
            }
            if (fixed == null && subscription == null) {
                try {
                    subscription = redis.subscribe(namespace.shard(shard), wake::release);
                    wake.release(); // a change before the subscription sent no notice we saw
                } catch (RuntimeException e) {
                    // polling covers it; try again next time
                }
            }
            try {
                boolean notice = wake.tryAcquire(interval.toNanos(), TimeUnit.NANOSECONDS);
                wake.drainPermits();
                if (!notice && quiet()) {
                    continue;
                }
            } catch (InterruptedException e) {
                return;
            }
            synchronized (stateLock) {
                if (closed) {
                    return;
                }
            }
            try {
                sync(Duration.ZERO);
            } catch (RuntimeException e) {
                // kept (lastErr, refusal): the lock calls report it
            }
        }
    }

    /**
     * Stops the loop and removes the registry entry (forget.lua, forced, on
     * our own id) — or, while locks it holds (or acquires of unknown
     * outcome) live on, leaves the entry reporting them until the longest
     * lease has ended, so the controller cannot step past them. After a
     * heartbeat that got no reply it leaves the entry dead instead (a newer
     * seq, expired at once), which that heartbeat, landing late, cannot
     * overwrite.
     */
    void close() {
        Thread loopThread;
        synchronized (stateLock) {
            if (closed) {
                return;
            }
            closed = true;
            loopThread = loop;
        }
        if (loopThread != null) {
            wake.release(); // not interrupt(): a heartbeat in flight finishes, its connection kept
            try {
                loopThread.join(TimeUnit.SECONDS.toMillis(10));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (subscription != null) {
            try {
                subscription.close();
            } catch (Exception ignored) {
                // nothing to undo
            }
        }
        syncMu.lock(); // no reading in flight re-writes the entry after the leave
        try {
            boolean wasSent;
            boolean late;
            Phase entryPhase;
            long inst;
            long generation;
            long sequence;
            synchronized (stateLock) {
                wasSent = sent;
                late = unanswered;
                entryPhase = fixed != null ? fixed : current != null ? current : Phase.LEGACY;
                inst = instance;
                generation = gen;
                sequence = ++seq;
            }
            if (!wasSent) {
                return;
            }
            Held holds = held == null ? Held.NONE : held.get();
            if (holds.oldest != null) {
                // The entry stays, reporting the locks, until their leases end:
                // leaving at once would let the controller step past them. The
                // extra second covers the last unit of a legacy expiry in seconds.
                long left = Math.max(0, holds.left.toMillis());
                Entry entry = new Entry(id, entryPhase, null, host, pid, inst, generation, sequence, holds.oldest,
                        holds.newest, left);
                send(entry, left + 1000, 0);
                return;
            }
            if (late) {
                // A heartbeat that got no reply may still land, and after a
                // forget it would register this locker again for its whole
                // hold. Instead the entry is written once more with a newer seq
                // and a hold of 1 ms: dead at once, and heartbeat.lua writes
                // nothing over it with an older seq (prune removes it later).
                send(new Entry(id, entryPhase, null, host, pid, inst, generation, sequence, null, null, -1), 1, 0);
                return;
            }
            redis.evalLong(Scripts.FORGET,
                    new byte[][] {namespace.clients, namespace.expiry, namespace.seen, namespace.fleet}, Redis.arg(id),
                    Redis.arg("1"), Redis.arg("0"));
        } finally {
            syncMu.unlock();
        }
    }
}
