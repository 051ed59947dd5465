package io.lockbridge;

import java.util.TreeSet;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The lease timer: one daemon thread of lockbridge's own that runs every
 * lock's give-up point and nothing else. Its tasks only take a lock's mu
 * (never held across I/O) and hand done()'s completion on, so no caller's
 * code, no stalled command and no busy shared pool delays it.
 *
 * <p>Unlike a ScheduledThreadPoolExecutor it does not wake its thread for
 * every point armed: the thread sleeps towards the earliest point it knows
 * of, and a point armed later than that — a new lock's, in the common case
 * where locks are released long before their give-up point — is only added
 * to the queue; cancelling a point never wakes it. The thread wakes when a
 * point is armed earlier than the one it sleeps towards, or when that time
 * comes (then it runs what is due and sleeps towards the next). An
 * uncontended lock cycle thus costs no thread hand-off (it cost one wake-up
 * of the timer thread per lock, a tenth of the cycle's time on two cores).
 * A point is never run late for that: one earlier than the thread's next
 * wake-up always wakes it.
 */
final class LeaseTimer {
    /** A point armed: runs at (System.nanoTime()) unless cancelled first. */
    static final class Task implements Comparable<Task> {
        final long at;
        final long seq;
        final Runnable run;

        Task(long at, long seq, Runnable run) {
            this.at = at;
            this.seq = seq;
            this.run = run;
        }

        @Override
        public int compareTo(Task o) {
            long d = at - o.at; // nanoTime order; points lie within 2^62 ns of each other
            return d != 0 ? Long.signum(d) : Long.compare(seq, o.seq);
        }
    }

    private final ReentrantLock mu = new ReentrantLock();
    private final Condition changed = mu.newCondition();
    private final TreeSet<Task> tasks = new TreeSet<>(); // under mu
    private long seq; // under mu
    private boolean idle; // under mu: the thread waits with no deadline
    private long wakeAt; // under mu: unless idle, the thread wakes by itself by then

    LeaseTimer(String name) {
        Thread t = new Threads.Own(this::loop, name);
        t.start();
    }

    /** Arms r at atNanos (System.nanoTime()); waking the thread only when that is before its next wake-up. */
    Task schedule(Runnable r, long atNanos) {
        mu.lock();
        try {
            Task t = new Task(atNanos, seq++, r);
            tasks.add(t);
            if (idle || atNanos - wakeAt < 0) {
                changed.signal();
            }
            return t;
        } finally {
            mu.unlock();
        }
    }

    /** Disarms t (a no-op once it ran); never wakes the thread. */
    void cancel(Task t) {
        mu.lock();
        try {
            tasks.remove(t);
        } finally {
            mu.unlock();
        }
    }

    private void loop() {
        mu.lock();
        try {
            for (;;) {
                Task first = tasks.isEmpty() ? null : tasks.first();
                long now = System.nanoTime();
                if (first != null && first.at - now <= 0) {
                    tasks.pollFirst();
                    mu.unlock();
                    try {
                        first.run.run();
                    } catch (Throwable e) {
                        // a task's failure must not stop the other locks' timers
                    } finally {
                        mu.lock();
                    }
                    continue;
                }
                try {
                    if (first == null) {
                        idle = true;
                        changed.await();
                    } else {
                        idle = false;
                        wakeAt = first.at;
                        changed.awaitNanos(first.at - now);
                    }
                } catch (InterruptedException e) {
                    // nothing stops this thread: look at the queue again
                }
                idle = false;
            }
        } finally {
            mu.unlock();
        }
    }
}
