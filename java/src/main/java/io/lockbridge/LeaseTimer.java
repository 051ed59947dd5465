package io.lockbridge;

import java.util.TreeSet;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The lease timer: one daemon thread of lockbridge's own that runs every
 * lock's give-up point and nothing else. Its tasks only take a lock's stateLock
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
    /** A point armed: runs at atNanos (System.nanoTime()) unless cancelled first. */
    static final class Task implements Comparable<Task> {
        final long atNanos;
        final long seq;
        final Runnable run;

        Task(long atNanos, long seq, Runnable run) {
            this.atNanos = atNanos;
            this.seq = seq;
            this.run = run;
        }

        @Override
        public int compareTo(Task other) {
            long delta = atNanos - other.atNanos; // nanoTime order; points lie within 2^62 ns of each other
            return delta != 0 ? Long.signum(delta) : Long.compare(seq, other.seq);
        }
    }

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final TreeSet<Task> tasks = new TreeSet<>(); // under lock
    private long seq; // under lock
    private boolean idle; // under lock: the thread waits with no deadline
    private long wakeAt; // under lock: unless idle, the thread wakes by itself by then

    LeaseTimer(String name) {
        Thread thread = new Threads.Own(this::loop, name);
        thread.start();
    }

    /** Arms action at atNanos (System.nanoTime()); waking the thread only when that is before its next wake-up. */
    Task schedule(Runnable action, long atNanos) {
        lock.lock();
        try {
            Task task = new Task(atNanos, seq++, action);
            tasks.add(task);
            if (idle || atNanos - wakeAt < 0) {
                changed.signal();
            }
            return task;
        } finally {
            lock.unlock();
        }
    }

    /** Disarms task (a no-op once it ran); never wakes the thread. */
    void cancel(Task task) {
        lock.lock();
        try {
            tasks.remove(task);
        } finally {
            lock.unlock();
        }
    }

    private void loop() {
        lock.lock();
        try {
            for (;;) {
                Task first = tasks.isEmpty() ? null : tasks.first();
                long now = System.nanoTime();
                if (first != null && first.atNanos - now <= 0) {
                    tasks.pollFirst();
                    lock.unlock();
                    try {
                        first.run.run();
                    } catch (Throwable e) {
                        // a task's failure must not stop the other locks' timers
                    } finally {
                        lock.lock();
                    }
                    continue;
                }
                try {
                    if (first == null) {
                        idle = true;
                        changed.await();
                    } else {
                        idle = false;
                        wakeAt = first.atNanos;
                        changed.awaitNanos(first.atNanos - now);
                    }
                } catch (InterruptedException e) {
                    // nothing stops this thread: look at the queue again
                }
                idle = false;
            }
        } finally {
            lock.unlock();
        }
    }
}
