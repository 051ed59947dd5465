package io.lockbridge.spring.fleet;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import io.lockbridge.Lock;
import io.lockbridge.NotObtainedException;
import io.lockbridge.PhaseUnknownException;
import io.lockbridge.spring.Locks;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;

/**
 * Contenders for one lock, each round entering the critical section through
 * a {@link Way} and counted inside it by a {@link Guard}: the rolling-deploy
 * scenarios of both Boot lines (one JVM, {@link Guard.Local}) and the
 * interop fleet's application processes ({@link Fleet}, {@link RedisGuard}).
 */
public final class Contention {
    private Contention() {}

    /** The critical section. */
    @FunctionalInterface
    public interface Section {
        void run() throws Exception;
    }

    /** A way into the critical section: a lock as its users take it. */
    @FunctionalInterface
    public interface Way {
        /**
         * Runs section under the lock if it is obtained within the way's wait;
         * false (section not run) when it is not.
         */
        boolean run(Section section) throws Exception;
    }

    /** A java.util.concurrent Lock (a LockRegistry's): tryLock(wait), the section, unlock. */
    public static Way of(java.util.concurrent.locks.Lock lock, Duration wait) {
        return section -> {
            if (!lock.tryLock(wait.toMillis(), TimeUnit.MILLISECONDS)) {
                return false;
            }
            try {
                section.run();
            } finally {
                lock.unlock();
            }
            return true;
        };
    }

    /**
     * The starter's Locks: lock(name, ttl, wait) in try-with-resources. A
     * refusal — not obtained, or the phase not known (the locker refuses
     * until it reads it again) — is not obtained.
     */
    public static Way of(Locks locks, String name, Duration ttl, Duration wait) {
        return section -> {
            Lock lock;
            try {
                lock = locks.lock(name, ttl, wait);
            } catch (NotObtainedException | PhaseUnknownException e) {
                return false;
            }
            try (lock) {
                section.run();
            }
            return true;
        };
    }

    /**
     * A ShedLock LockProvider as the scheduler's aspect runs a job: through
     * a LockingTaskExecutor with lockAtMostFor atMost (lockAtLeastFor 0).
     * ShedLock never waits — a run that finds the lock taken is skipped —
     * so this tries again every poll, as the next scheduled runs would,
     * until wait has passed.
     */
    public static Way of(LockProvider provider, String name, Duration atMost, Duration wait, Duration poll) {
        LockingTaskExecutor executor = new DefaultLockingTaskExecutor(provider);
        return section -> {
            long end = System.nanoTime() + wait.toNanos();
            while (true) {
                LockingTaskExecutor.TaskResult<Boolean> result;
                try {
                    result = executor.executeWithLock(() -> {
                        section.run();
                        return true;
                    }, new LockConfiguration(Instant.now(), name, atMost, Duration.ZERO));
                } catch (Exception | Error e) {
                    throw e;
                } catch (Throwable e) {
                    throw new IllegalStateException(e);
                }
                if (result.wasExecuted()) {
                    return true;
                }
                if (System.nanoTime() + poll.toNanos() > end) {
                    return false;
                }
                Thread.sleep(poll.toMillis());
            }
        };
    }

    /** One side of a contention: its name in the guard and its way in. */
    public record Side(String name, Way way) {}

    /** Per side: rounds that entered the section and rounds refused; the first failure of any thread. */
    public record Result(long[] acquired, long[] refused, Throwable failure) {}

    /**
     * Runs threads threads per side while more says so: each round goes in
     * through its side's way, enters the guard as
     * {@code <side>-<thread>}, holds for hold, leaves the guard. A thread
     * stops at its first failure (an exception of the way or the guard).
     */
    public static Result contend(List<Side> sides, int threads, BooleanSupplier more, Duration hold, Guard guard)
            throws InterruptedException {
        long[] acquired = new long[sides.size()];
        long[] refused = new long[sides.size()];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> all = new ArrayList<>();
        for (int i = 0; i < sides.size(); i++) {
            Side side = sides.get(i);
            int sideIndex = i;
            for (int j = 0; j < threads; j++) {
                String who = side.name() + "-" + j;
                all.add(new Thread(() -> {
                    long entered = 0;
                    long turnedAway = 0;
                    try {
                        while (more.getAsBoolean()) {
                            boolean got = side.way().run(() -> {
                                guard.enter(who);
                                Thread.sleep(hold.toMillis());
                                guard.exit(who);
                            });
                            if (got) {
                                entered++;
                            } else {
                                turnedAway++;
                            }
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    } finally {
                        synchronized (acquired) {
                            acquired[sideIndex] += entered;
                            refused[sideIndex] += turnedAway;
                        }
                    }
                }, "contend-" + who));
            }
        }
        all.forEach(Thread::start);
        for (Thread thread : all) {
            thread.join();
        }
        synchronized (acquired) {
            return new Result(acquired.clone(), refused.clone(), failure.get());
        }
    }

    /** What a takeover saw: whether the taker got the lock, after how long, and when (wall clock; null when not). */
    public record Takeover(boolean obtained, Duration after, Instant at) {}

    /**
     * The holder crashed (never unlocks, never refreshes): one entry
     * through the taker's way, waiting as the way waits; whether it got in,
     * how long it waited and when it got in (timed inside the section, so
     * the unlock is not counted).
     */
    public static Takeover takeover(Way taker) throws Exception {
        long start = System.nanoTime();
        long[] enteredNanos = new long[1];
        Instant[] enteredAt = new Instant[1];
        boolean got = taker.run(() -> {
            enteredNanos[0] = System.nanoTime();
            enteredAt[0] = Instant.now();
        });
        return new Takeover(got, Duration.ofNanos((got ? enteredNanos[0] : System.nanoTime()) - start), enteredAt[0]);
    }
}
