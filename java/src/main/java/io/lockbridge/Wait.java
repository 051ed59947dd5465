package io.lockbridge;

import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The waiting loop of lock(): attempt; on NotObtainedException sleep the
 * backoff, never past the holder's remaining lease when the attempt learnt
 * it, and wake at once on a notice; until the wait runs out. With
 * {@link Events} it reports each failed attempt as contended and, when the
 * call ends, the time it spent in its sleeps (the attempts' round trips
 * not counted).
 */
final class Wait {
    /** One attempt: a lock, or NotObtainedException (with the holder's time left); again after a miss. */
    interface Attempt {
        Lock once(boolean again);
    }

    /** Subscribes wake to the lock's release notices after the first miss; null when there are none. */
    interface Notices {
        AutoCloseable subscribe(Runnable wake);
    }

    private Wait() {}

    /**
     * Before an acquire is sent: a thread whose interrupt flag is set sends
     * none. Its reply could not be waited for, nor read back (the interrupt
     * fails every wait at once): the acquire would leave a lock nobody
     * holds for its whole lease. NotObtainedException, the flag kept (Go's
     * lockers check their context the same way).
     */
    static void notInterrupted(String name) {
        if (Thread.currentThread().isInterrupted()) {
            throw new NotObtainedException("lockbridge: lock " + Keys.show(name)
                    + ": the thread is interrupted: nothing sent", Duration.ZERO);
        }
    }

    static Lock loop(String name, Duration wait, Backoff backoff, Attempt attempt, Notices notices, Events events) {
        long deadline = System.nanoTime() + wait.toNanos();
        Semaphore wake = new Semaphore(0);
        AutoCloseable sub = null;
        long waited = 0;
        try {
            for (int tries = 0, slept = 0;; tries++) {
                notInterrupted(name);
                NotObtainedException miss;
                wake.drainPermits(); // a notice from now on wakes the sleep below
                try {
                    return attempt.once(tries > 0);
                } catch (NotObtainedException e) {
                    miss = e;
                }
                if (events != null) {
                    events.contended();
                }
                if (sub == null && notices != null) {
                    try {
                        sub = notices.subscribe(wake::release);
                        // A release between the miss and the subscription
                        // sent a notice we did not hear: try again at once.
                        continue;
                    } catch (RedisUnavailableException e) {
                        notices = null; // poll on the backoff alone
                    }
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new NotObtainedException("lockbridge: lock " + Keys.show(name) + " not obtained within "
                            + wait + ": " + miss.getMessage(), miss.holderLeft(), miss);
                }
                // the retry after subscribing is no wait: as Go's, the first sleep is the backoff's first
                long sleep = backoff.delay(slept++).toNanos();
                Duration holder = miss.holderLeft();
                if (!holder.isZero() && holder.toNanos() < sleep) {
                    sleep = holder.toNanos();
                }
                sleep = Math.min(sleep, left);
                long slept0 = events == null ? 0 : System.nanoTime();
                try {
                    wake.tryAcquire(sleep, TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new NotObtainedException("lockbridge: lock " + Keys.show(name)
                            + ": interrupted while waiting", Duration.ZERO, e);
                } finally {
                    if (events != null) {
                        waited += System.nanoTime() - slept0;
                    }
                }
            }
        } finally {
            if (events != null) {
                events.waited(waited);
            }
            if (sub != null) {
                try {
                    sub.close();
                } catch (Exception ignored) {
                    // a listener removal cannot fail
                }
            }
        }
    }
}
