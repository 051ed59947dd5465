package io.lockbridge.spring.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;

/**
 * The rolling-deploy harness: two "instances" on one lock name — say one on
 * the lockbridge bean and one still on the framework's own Redis lock —
 * each with its own threads, every holder counted inside the critical
 * section by a guard that is not the lock (an atomic counter: both
 * instances run in this JVM, their Redis traffic on their own connections).
 */
public final class Exclusion {
    private Exclusion() {}

    /** What a contention run saw: overlaps (a holder found another inside), and acquisitions per side. */
    public record Result(long overlaps, long[] acquired, Throwable failure) {}

    /**
     * Runs threads threads per side for run: each waits up to 1 s with
     * tryLock(time), holds for hold inside the guard, unlocks.
     */
    public static Result contend(List<Lock> sides, int threads, Duration run, Duration hold) throws InterruptedException {
        AtomicInteger inside = new AtomicInteger();
        AtomicLong overlaps = new AtomicLong();
        long[] acquired = new long[sides.size()];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long end = System.nanoTime() + run.toNanos();
        List<Thread> all = new ArrayList<>();
        for (int s = 0; s < sides.size(); s++) {
            Lock lock = sides.get(s);
            int side = s;
            AtomicLong n = new AtomicLong();
            for (int t = 0; t < threads; t++) {
                Thread th = new Thread(() -> {
                    try {
                        while (System.nanoTime() < end) {
                            if (!lock.tryLock(1, TimeUnit.SECONDS)) {
                                continue;
                            }
                            try {
                                if (inside.incrementAndGet() != 1) {
                                    overlaps.incrementAndGet();
                                }
                                n.incrementAndGet();
                                Thread.sleep(hold.toMillis());
                                inside.decrementAndGet();
                            } finally {
                                lock.unlock();
                            }
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    } finally {
                        synchronized (acquired) {
                            acquired[side] = n.get();
                        }
                    }
                }, "exclusion-" + s + "-" + t);
                all.add(th);
            }
        }
        all.forEach(Thread::start);
        for (Thread th : all) {
            th.join();
        }
        synchronized (acquired) {
            return new Result(overlaps.get(), acquired.clone(), failure.get());
        }
    }

    /** What a takeover saw: whether the taker got the lock, and after how long. */
    public record Takeover(boolean obtained, Duration after) {}

    /**
     * The holder crashed: crashed was locked (by the caller) and is
     * abandoned, never unlocked, never refreshed again; the taker waits up
     * to wait for the lock, then unlocks it.
     */
    public static Takeover takeover(Lock taker, Duration wait) throws InterruptedException {
        long start = System.nanoTime();
        boolean ok = taker.tryLock(wait.toMillis(), TimeUnit.MILLISECONDS);
        Duration after = Duration.ofNanos(System.nanoTime() - start);
        if (ok) {
            taker.unlock();
        }
        return new Takeover(ok, after);
    }
}
