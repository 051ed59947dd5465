package io.lockbridge.jmh;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The contended hand-off, measured as bench/internal/scenario.Handoff
 * measures Go's: workers threads take one key in turn, each holder stays
 * inside for {@link #HOLD} (spinning, yielding to other threads: a sleep
 * that short lasts as long as the scheduler likes), releases, and calls
 * lock again only once another worker has taken the lock — so every
 * hand-off goes to a thread that was waiting (a releaser retrying at once
 * would often win against the waiters, and a lock that lets one thread
 * barge would look fast), and all other workers are waiting at any time.
 * Recorded: the hand-off, from one holder's unlock returning to the next
 * holder's lock returning (0 when it returned first); the wait, a lock
 * call from call to return; holders inside at once, counted by a guard
 * that is not the lock (must be 0).
 *
 * <p>Not a JMH benchmark: JMH times each call, and the hand-off is the
 * time between two threads' calls. Run in a JVM of its own per
 * measurement, by {@link Report}, after a warm-up of the same work.
 *
 * <p>Two shapes, one after the other: {@code shared}, the eight threads
 * sharing one client of the subject (one locker, one set of connections),
 * as a service's threads do and as the Go bench runs; and {@code own}, each
 * thread with a client of its own, as eight instances of a fleet.
 *
 * <p>Arguments: port subject warm-ms measure-ms; prints a line of key=value
 * figures (µs) per shape.
 */
public final class Handoff {
    static final int WORKERS = 8;
    static final Duration HOLD = Duration.ofNanos(100_000);
    static final Duration STAGGER = Duration.ofMillis(100);

    private Handoff() {}

    /** What one run measured; times in ns. */
    record Result(long[] handoffs, long[] waits, int cycles, double seconds, double holdMean, int early, int self,
            int violations, int gaveUp) {
        String line() {
            long[] sortedHandoffs = handoffs.clone();
            long[] sortedWaits = waits.clone();
            Arrays.sort(sortedHandoffs);
            Arrays.sort(sortedWaits);
            return String.format(Locale.ROOT,
                    "handoff_p50=%.1f handoff_p90=%.1f handoff_p99=%.1f handoff_max=%.1f wait_p50=%.1f wait_p99=%.1f "
                            + "wait_max=%.1f handoffs=%d cycles_per_s=%.0f hold_mean=%.1f early=%d self=%d overlaps=%d "
                            + "gave_up=%d",
                    pct(sortedHandoffs, 50), pct(sortedHandoffs, 90), pct(sortedHandoffs, 99),
                    pct(sortedHandoffs, 100), pct(sortedWaits, 50), pct(sortedWaits, 99), pct(sortedWaits, 100),
                    sortedHandoffs.length, cycles / seconds, holdMean / 1e3, early, self, violations, gaveUp);
        }
    }

    /** The percentile (nearest rank) of sorted ns values, in µs. */
    static double pct(long[] sorted, double percentile) {
        if (sorted.length == 0) {
            return 0;
        }
        int rank = (int) Math.round(sorted.length * percentile / 100) - 1;
        return sorted[Math.max(0, Math.min(rank, sorted.length - 1))] / 1e3;
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        String subject = args[1];
        Duration warm = Duration.ofMillis(Long.parseLong(args[2]));
        Duration measure = Duration.ofMillis(Long.parseLong(args[3]));
        for (String shape : new String[] {"shared", "own"}) {
            Subject[] clients = new Subject[WORKERS];
            for (int i = 0; i < WORKERS; i++) {
                clients[i] = shape.equals("shared") && i > 0 ? clients[0] : Subject.of(subject, port);
            }
            try {
                String key = "jmh:handoff:" + subject + ":" + shape;
                run(clients, key, warm); // warm-up: the JIT, the connections, the subscriptions
                System.out.println("shape=" + shape + " " + run(clients, key, measure).line());
            } finally {
                for (int i = 0; i < WORKERS; i++) {
                    if (i == 0 || clients[i] != clients[0]) {
                        clients[i].close();
                    }
                }
            }
        }
        System.exit(0); // a client's non-daemon threads must not keep the JVM
    }

    /** One run: workers (one per client) for STAGGER + measure; the figures of the last measure. */
    static Result run(Subject[] clients, String key, Duration measure) throws InterruptedException {
        int limit = 1 << 20;
        long[] acq = new long[limit + 1];
        long[] rel = new long[limit + 1];
        int[] owner = new int[limit + 1];
        long base = System.nanoTime();
        long from = STAGGER.toNanos();
        long until = from + measure.toNanos();
        AtomicLong gen = new AtomicLong();
        AtomicInteger guard = new AtomicInteger();
        AtomicInteger violations = new AtomicInteger();
        AtomicInteger gaveUp = new AtomicInteger();
        AtomicLong held = new AtomicLong();
        Object handed = new Object();
        List<long[]> waits = new ArrayList<>();
        Throwable[] failed = new Throwable[1];
        Thread[] threads = new Thread[clients.length];
        for (int worker = 0; worker < clients.length; worker++) {
            int index = worker;
            Subject client = clients[worker];
            long delay = ThreadLocalRandom.current().nextLong(STAGGER.toNanos());
            threads[worker] = new Thread(() -> {
                long[] mine = new long[limit];
                int count = 0;
                try {
                    Thread.sleep(delay / 1_000_000, (int) (delay % 1_000_000));
                    while (System.nanoTime() - base < until && failed[0] == null) {
                        long called = System.nanoTime() - base;
                        Subject.Held lock;
                        try {
                            lock = client.lock(key);
                        } catch (Exception e) {
                            if (gaveUp.incrementAndGet() > 1000) {
                                throw e;
                            }
                            continue;
                        }
                        long acquiredAt = System.nanoTime() - base;
                        if (acquiredAt >= from && count < mine.length) {
                            mine[count++] = acquiredAt - called;
                        }
                        if (guard.incrementAndGet() != 1) {
                            violations.incrementAndGet();
                        }
                        long turn = gen.incrementAndGet();
                        if (turn <= limit) {
                            acq[(int) turn] = acquiredAt;
                            owner[(int) turn] = index;
                        }
                        synchronized (handed) {
                            handed.notifyAll();
                        }
                        work(HOLD);
                        if (acquiredAt >= from && acquiredAt <= until) {
                            held.addAndGet(System.nanoTime() - base - acquiredAt);
                        }
                        guard.decrementAndGet();
                        lock.unlock(); // even after the end: no lock is left
                        if (turn <= limit) {
                            rel[(int) turn] = System.nanoTime() - base;
                        }
                        synchronized (handed) {
                            while (gen.get() == turn && System.nanoTime() - base < until && failed[0] == null) {
                                handed.wait(10);
                            }
                        }
                    }
                } catch (Throwable e) {
                    synchronized (handed) {
                        if (failed[0] == null) {
                            failed[0] = e;
                        }
                        handed.notifyAll();
                    }
                } finally {
                    synchronized (waits) {
                        waits.add(Arrays.copyOf(mine, count));
                    }
                }
            }, "handoff-" + worker);
            threads[worker].start();
        }
        for (Thread thread : threads) {
            thread.join();
        }
        if (failed[0] != null) {
            throw new IllegalStateException("hand-off failed: " + failed[0], failed[0]);
        }
        int total = (int) Math.min(gen.get(), limit);
        List<Long> gaps = new ArrayList<>();
        int cycles = 0;
        int early = 0;
        int self = 0;
        for (int turn = 1; turn <= total; turn++) {
            if (acq[turn] < from || acq[turn] > until) {
                continue;
            }
            cycles++;
            if (turn == 1 || acq[turn - 1] < from || rel[turn - 1] == 0) {
                continue;
            }
            long gap = acq[turn] - rel[turn - 1];
            if (gap < 0) {
                early++;
                gap = 0;
            }
            if (owner[turn] == owner[turn - 1]) {
                self++;
            }
            gaps.add(gap);
        }
        long[] allWaits = waits.stream().flatMapToLong(Arrays::stream).toArray();
        return new Result(gaps.stream().mapToLong(Long::longValue).toArray(), allWaits, cycles,
                measure.toNanos() / 1e9, (double) held.get() / Math.max(1, cycles),
                early, self, violations.get(), gaveUp.get());
    }

    /** Stays busy for span, yielding between looks at the clock. */
    static void work(Duration span) {
        long end = System.nanoTime() + span.toNanos();
        while (System.nanoTime() - end < 0) {
            Thread.yield();
        }
    }
}
