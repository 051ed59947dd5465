package io.lockbridge.interop.common;

import java.io.BufferedReader;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The part of every interop worker that does not depend on a lock library:
 * {@code --name=value} flags, one line per event on stdout, exiting when the
 * test that started the worker closes its stdin, and contending threads.
 */
public final class Harness {
    private Harness() {}

    /** Parses {@code --name=value} flags. */
    public static Map<String, String> parse(String[] args) {
        Map<String, String> m = new HashMap<>();
        for (String a : args) {
            int i = a.indexOf('=');
            if (!a.startsWith("--") || i < 0) {
                throw new IllegalArgumentException("flags are --name=value, got " + a);
            }
            m.put(a.substring(2, i), a.substring(i + 1));
        }
        return m;
    }

    /** Returns the numeric flag name, or def when it is absent. */
    public static long num(Map<String, String> f, String name, long def) {
        String v = f.get(name);
        return v == null ? def : Long.parseLong(v);
    }

    /** Prints one line on stdout at once; safe from any thread. */
    public static void say(String line) {
        synchronized (System.out) {
            System.out.println(line);
            System.out.flush();
        }
    }

    /** Set by a line "stop" on stdin: contending threads finish their round and the lockers close. */
    public static volatile boolean stopped;

    /** Halts the JVM when stdin closes (the test that started us is gone); a line "stop" sets {@link #stopped}. */
    public static void exitOnEOF(BufferedReader stdin) {
        Thread t = new Thread(() -> {
            try {
                String line;
                while ((line = stdin.readLine()) != null) {
                    if (line.trim().equals("stop")) {
                        stopped = true;
                    }
                }
            } catch (Exception ignored) {
                // closed
            }
            Runtime.getRuntime().halt(3);
        }, "stdin-watch");
        t.setDaemon(true);
        t.start();
    }

    /** One contending thread's work: its counts. */
    public interface Body {
        long[] run(int thread) throws Exception;
    }

    /**
     * Runs body on n threads (named worker-0, worker-1, …) and returns the
     * sums of their counts, element by element; the first failure of any
     * thread is thrown once all have ended.
     */
    public static long[] fanOut(int n, Body body) throws Throwable {
        long[][] counts = new long[n][];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            final int k = i;
            Thread t = new Thread(() -> {
                try {
                    counts[k] = body.run(k);
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "worker-" + i);
            t.start();
            ts.add(t);
        }
        for (Thread t : ts) {
            t.join();
        }
        if (failure.get() != null) {
            throw failure.get();
        }
        long[] sum = new long[counts[0].length];
        for (long[] c : counts) {
            for (int i = 0; i < sum.length; i++) {
                sum[i] += c[i];
            }
        }
        return sum;
    }
}
