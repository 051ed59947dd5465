package io.lockbridge;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A following locker's locks — held, and acquires in flight or of unknown
 * outcome — for its heartbeats (held_oldest, held_newest, held_ms) and for
 * ending the locks a phase move leaves unexcluded.
 *
 * <p>A lock is reported until it is released, or until it has surely ended
 * on the server too ({@link AbstractLock#reported()}): a lock whose local
 * lease ran out, or that was lost, stays reported while a write of it may
 * still keep it there (a refresh confirmed, in flight, or of unknown
 * outcome). Go's migrate reports a lock until it has ended.
 */
final class HeldSet {
    /** An acquire registered in its phase before it is sent. */
    static final class Inflight {
        final Phase phase;
        final Duration ttl;
        final long start = System.nanoTime();
        volatile boolean unknown; // the reply never came: reported until start + ttl

        Inflight(Phase phase, Duration ttl) {
            this.phase = phase;
            this.ttl = ttl;
        }

        boolean ended() {
            return unknown && System.nanoTime() - (start + ttl.toNanos()) >= 0;
        }
    }

    private final Set<Object> m = new HashSet<>();

    synchronized Inflight reserve(Phase p, Duration ttl) {
        Inflight r = new Inflight(p, ttl);
        m.add(r);
        return r;
    }

    synchronized void land(Inflight r, AbstractLock lk) {
        m.remove(r);
        m.add(lk);
    }

    /** The acquire failed: gone, unless its outcome is unknown (then kept until its ttl has passed). */
    synchronized void settle(Inflight r, RuntimeException e) {
        if (e instanceof UnknownOutcomeException) {
            r.unknown = true;
            return;
        }
        m.remove(r);
    }

    synchronized Follower.Held report() {
        Phase oldest = null;
        Phase newest = null;
        Duration left = Duration.ZERO;
        Duration ttl = Duration.ZERO;
        long now = System.nanoTime();
        for (var it = m.iterator(); it.hasNext();) {
            Object o = it.next();
            Phase p;
            Duration l;
            Duration t;
            if (o instanceof Inflight r) {
                if (r.ended()) {
                    it.remove();
                    continue;
                }
                p = r.phase;
                l = Duration.ofNanos(r.start + r.ttl.toNanos() - now);
                t = r.ttl;
            } else {
                AbstractLock lk = (AbstractLock) o;
                Duration r = lk.reported();
                if (r == null) { // released, or surely ended on the server too
                    it.remove();
                    continue;
                }
                p = lk.phase;
                l = r;
                t = lk.leaseTtl();
            }
            if (oldest == null || p.ordinal() < oldest.ordinal()) {
                oldest = p;
            }
            if (newest == null || p.ordinal() > newest.ordinal()) {
                newest = p;
            }
            if (l.compareTo(left) > 0) {
                left = l;
            }
            if (t.compareTo(ttl) > 0) {
                ttl = t;
            }
        }
        return oldest == null ? Follower.Held.NONE : new Follower.Held(oldest, newest, left, ttl);
    }

    /**
     * Ends every held lock whose phase cur does not exclude, and stops
     * reporting it (as Go's migrate does: the fleet has moved past it, and
     * its holder is told it is lost).
     */
    void endIncompatible(Phase cur) {
        List<AbstractLock> end = new ArrayList<>();
        synchronized (this) {
            for (var it = m.iterator(); it.hasNext();) {
                if (it.next() instanceof AbstractLock lk && !Phase.compatible(lk.phase, cur)) {
                    end.add(lk);
                    it.remove();
                }
            }
        }
        for (AbstractLock lk : end) {
            lk.lose("taken in " + lk.phase + ", and its locker now runs " + cur + ", which does not exclude it", null);
        }
    }
}
