package io.lockbridge.spring.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Lock;

import io.lockbridge.spring.fleet.Contention;
import io.lockbridge.spring.fleet.Guard;

/**
 * The rolling-deploy harness: two "instances" on one lock name — say one on
 * the lockbridge bean and one still on the framework's own Redis lock —
 * each with its own threads, every holder counted inside the critical
 * section by a guard that is not the lock (an atomic counter: both
 * instances run in this JVM, their Redis traffic on their own connections).
 * The contention itself is {@link Contention}'s, which the interop fleet
 * runs across processes too.
 */
public final class Exclusion {
    private Exclusion() {}

    /** What a contention run saw: overlaps (a holder found another inside), and acquisitions per side. */
    public record Result(long overlaps, long[] acquired, Throwable failure) {}

    /**
     * Runs threads threads per side for run: each waits up to 1 s with
     * tryLock(time), holds for hold inside the guard, unlocks.
     */
    public static Result contend(List<Lock> sides, int threads, Duration run, Duration hold)
            throws InterruptedException {
        long end = System.nanoTime() + run.toNanos();
        List<Contention.Side> contenders = new ArrayList<>();
        for (int i = 0; i < sides.size(); i++) {
            contenders.add(new Contention.Side("side" + i, Contention.of(sides.get(i), Duration.ofSeconds(1))));
        }
        Guard.Local guard = new Guard.Local();
        Contention.Result result = Contention.contend(contenders, threads, () -> System.nanoTime() < end, hold, guard);
        return new Result(guard.overlaps(), result.acquired(), result.failure());
    }

    /** What a takeover saw: whether the taker got the lock, and after how long. */
    public record Takeover(boolean obtained, Duration after) {}

    /**
     * The holder crashed: its lock was taken (by the caller) and is
     * abandoned, never unlocked, never refreshed again; the taker waits up
     * to wait for the lock, then unlocks it.
     */
    public static Takeover takeover(Lock taker, Duration wait) throws InterruptedException {
        Contention.Takeover result;
        try {
            result = Contention.takeover(Contention.of(taker, wait));
        } catch (InterruptedException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e); // a Lock's tryLock throws nothing else
        }
        return new Takeover(result.obtained(), result.after());
    }
}
