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

    private final Set<Object> entries = new HashSet<>();

    synchronized Inflight reserve(Phase phase, Duration ttl) {
        Inflight inflight = new Inflight(phase, ttl);
        entries.add(inflight);
        return inflight;
    }

    synchronized void land(Inflight inflight, AbstractLock lock) {
        entries.remove(inflight);
        entries.add(lock);
    }

    /** The acquire failed: gone, unless its outcome is unknown (then kept until its ttl has passed). */
    synchronized void settle(Inflight inflight, RuntimeException error) {
        if (error instanceof UnknownOutcomeException) {
            inflight.unknown = true;
            return;
        }
        entries.remove(inflight);
    }

    synchronized Follower.Held report() {
        Phase oldest = null;
        Phase newest = null;
        Duration left = Duration.ZERO;
        Duration ttl = Duration.ZERO;
        long now = System.nanoTime();
        for (var cursor = entries.iterator(); cursor.hasNext();) {
            Object entry = cursor.next();
            Phase phase;
            Duration entryLeft;
            Duration entryTtl;
            if (entry instanceof Inflight inflight) {
                if (inflight.ended()) {
                    cursor.remove();
                    continue;
                }
                phase = inflight.phase;
                entryLeft = Duration.ofNanos(inflight.start + inflight.ttl.toNanos() - now);
                entryTtl = inflight.ttl;
            } else {
                AbstractLock lock = (AbstractLock) entry;
                Duration reported = lock.reported();
                if (reported == null) { // released, or surely ended on the server too
                    cursor.remove();
                    continue;
                }
                phase = lock.phase;
                entryLeft = reported;
                entryTtl = lock.leaseTtl();
            }
            if (oldest == null || phase.ordinal() < oldest.ordinal()) {
                oldest = phase;
            }
            if (newest == null || phase.ordinal() > newest.ordinal()) {
                newest = phase;
            }
            if (entryLeft.compareTo(left) > 0) {
                left = entryLeft;
            }
            if (entryTtl.compareTo(ttl) > 0) {
                ttl = entryTtl;
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
            for (var cursor = entries.iterator(); cursor.hasNext();) {
                if (cursor.next() instanceof AbstractLock lock && !Phase.compatible(lock.phase, cur)) {
                    end.add(lock);
                    cursor.remove();
                }
            }
        }
        for (AbstractLock lock : end) {
            lock.lose("taken in " + lock.phase + ", and its locker now runs " + cur + ", which does not exclude it",
                    null);
        }
    }
}
