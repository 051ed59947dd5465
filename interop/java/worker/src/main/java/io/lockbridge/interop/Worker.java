package io.lockbridge.interop;

import static io.lockbridge.interop.common.Harness.exitOnEOF;
import static io.lockbridge.interop.common.Harness.num;
import static io.lockbridge.interop.common.Harness.say;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.lockbridge.interop.common.Harness;

/**
 * The Java worker of lockbridge's interop tests: it contends for one lock on a
 * real redis-server with one of the Java lockers below, the way services
 * written with those libraries do, and reports what it does on stdout, one
 * line per event. The Go tests (package interop) start it.
 *
 * <p>Flags ({@code --name=value}):
 * <ul>
 *   <li>{@code --redis=host:port} the lock's redis-server;
 *   <li>{@code --guard=host:port} a second redis-server holding the guard
 *       counters (contend mode): the exclusion check is not the lock;
 *   <li>{@code --locker=} one of {@link Lockers#KINDS} (lockbridge-modern: its flags in
 *       {@link Lockers.LockbridgeModernLock});
 *   <li>lockbridge-migrate and lockbridge-modern: {@code --cluster=host:port,…} (a Redis
 *       Cluster's seeds) or {@code --sentinels=host:port,…} and
 *       {@code --master=} (a Sentinel master) instead of --redis's server,
 *       through a Lettuce Cluster / Sentinel connection factory;
 *   <li>{@code --client=lettuce|jedis}, {@code --template=string|jdk} for the
 *       Spring Data Redis lockers;
 *   <li>{@code --name=} the lock name; {@code --lease-ms=}, {@code --wait-ms=},
 *       {@code --poll-ms=} (default 100), {@code --hold-ms=} (time inside the
 *       critical section, default 0);
 *   <li>{@code --mode=contend|once}; {@code --id=} the worker's name in the
 *       guard counters; {@code --threads=} contending threads, each with its
 *       own locker and connections, as separate service instances would
 *       (counted as id-0, id-1, …); {@code --think-ms=} pause after each
 *       release; {@code --count=} stop contending once the guard's
 *       total reaches it; {@code --duration-ms=} or after this long, or once a
 *       line {@code stop} comes on stdin (then the lockers close cleanly: a
 *       lockbridge-migrate locker leaves the fleet registry).
 * </ul>
 *
 * <p>Mode contend: until the total or the duration is reached, acquire (waiting
 * up to wait-ms), enter the critical section (guard: INCR cs:in, an overlap
 * when it is not 1: INCR cs:overlaps; INCR acq:&lt;id&gt; and total; sleep
 * hold-ms; DECR cs:in), release. A fenced lock's fence is checked in the
 * guard too ({@link #FENCE_CHECK}). Prints {@code ready}, then
 * {@code done <acquisitions> <failed attempts>}.
 *
 * <p>Mode once: acquire (waiting up to wait-ms), print
 * {@code acquired <epoch ms>} (or {@code timeout}), then wait for a line
 * {@code release} on stdin, release and print {@code released} (or
 * {@code release-error <message>}). The test SIGKILLs it to crash a holder.
 *
 * <p>The worker exits when its stdin closes, so a dying test leaves no JVM.
 */
public final class Worker {
    private Worker() {}

    /**
     * The guard's fence check, the Go tests' too: a fence not above the last
     * one seen counts in fence:regress; fence:last keeps the last.
     */
    static final String FENCE_CHECK = "local l = tonumber(redis.call('GET', 'fence:last') or '0') "
            + "if tonumber(ARGV[1]) <= l then redis.call('INCR', 'fence:regress') end "
            + "redis.call('SET', 'fence:last', ARGV[1]) redis.call('INCR', 'fence:checked') return 1";

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
        Map<String, String> flags = Harness.parse(args);
        String mode = flags.getOrDefault("mode", "contend");
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        switch (mode) {
            case "contend" -> contend(flags, stdin);
            case "once" -> {
                try (Lockers.JavaLock lock = Lockers.create(flags)) {
                    once(flags, lock, stdin);
                }
            }
            case "script" -> script(flags);
            default -> throw new IllegalArgumentException("unknown --mode " + mode);
        }
        System.out.flush();
        System.exit(0);
    }

    static void contend(Map<String, String> f, BufferedReader stdin) throws Exception {
        int threads = (int) num(f, "threads", 1);
        String id = f.getOrDefault("id", "java");
        List<Lockers.JavaLock> locks = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            locks.add(Lockers.create(f));
        }
        exitOnEOF(stdin);
        say("ready");
        long[] sum;
        try {
            sum = Harness.fanOut(threads, n -> contendOne(f, locks.get(n), threads == 1 ? id : id + "-" + n));
        } catch (Throwable e) {
            say("error " + e);
            e.printStackTrace();
            System.exit(2);
            return;
        } finally {
            for (Lockers.JavaLock l : locks) {
                l.close();
            }
        }
        say("done " + sum[0] + " " + sum[1]);
    }

    /** One contending thread: returns {acquisitions, attempts that timed out}. */
    static long[] contendOne(Map<String, String> f, Lockers.JavaLock lock, String id) throws Exception {
        String[] guard = f.get("guard").split(":");
        long count = num(f, "count", Long.MAX_VALUE);
        long duration = num(f, "duration-ms", 86_400_000L);
        long wait = num(f, "wait-ms", 1000);
        long hold = num(f, "hold-ms", 0);
        long think = num(f, "think-ms", 0);
        long acquired = 0;
        long failed = 0;
        try (redis.clients.jedis.Jedis g = new redis.clients.jedis.Jedis(guard[0], Integer.parseInt(guard[1]))) {
            long end = System.nanoTime() + duration * 1_000_000L;
            while (System.nanoTime() < end && !Harness.stopped) {
                if (count != Long.MAX_VALUE) { // as the Go workers: read the total only in a count run
                    String total = g.get("total");
                    if (total != null && Long.parseLong(total) >= count) {
                        break;
                    }
                }
                if (!lock.acquire(wait)) {
                    failed++;
                    continue;
                }
                if (g.incr("cs:in") != 1) {
                    g.incr("cs:overlaps");
                }
                long fence = lock.fence();
                if (fence > 0) {
                    // Inside the critical section: each fence must exceed the one before, whoever handed it out.
                    g.eval(FENCE_CHECK, 0, Long.toString(fence));
                }
                g.incr("acq:" + id);
                g.incr("total");
                if (hold > 0) {
                    Thread.sleep(hold);
                }
                g.decr("cs:in");
                lock.release();
                acquired++;
                if (think > 0) {
                    Thread.sleep(think);
                }
            }
        }
        return new long[] {acquired, failed};
    }

    /**
     * Mode script: what RedisTemplate.execute(script, keys, args...) sends.
     * It runs "SET KEYS[1] ARGV[1] PX ARGV[2]" with the lock name, the value
     * "v" and the lease as arguments, through the --template's serializers,
     * and prints {@code script-ok <reply>} or {@code script-error <message>}.
     */
    static void script(Map<String, String> f) {
        say("ready");
        String[] redis = f.get("redis").split(":");
        org.springframework.data.redis.connection.RedisConnectionFactory factory =
                Lockers.factory(f.getOrDefault("client", "lettuce"), redis[0], Integer.parseInt(redis[1]));
        try {
            org.springframework.data.redis.core.RedisTemplate<Object, Object> t = Lockers.template(f, factory);
            org.springframework.data.redis.core.script.RedisScript<String> s = org.springframework.data.redis.core.script.RedisScript.of(
                    "return redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])['ok']", String.class);
            Object r = t.execute(s, List.of(f.get("name")), "v", f.getOrDefault("lease-ms", "60000"));
            say("script-ok " + r);
        } catch (Exception e) {
            Throwable c = e;
            while (c.getCause() != null) {
                c = c.getCause();
            }
            say("script-error " + String.valueOf(c.getMessage()).replace('\n', ' '));
        } finally {
            Lockers.destroy(factory);
        }
    }

    static void once(Map<String, String> f, Lockers.JavaLock lock, BufferedReader stdin) throws Exception {
        long wait = num(f, "wait-ms", 10_000);
        say("ready");
        if (!lock.acquire(wait)) {
            say("timeout");
            return;
        }
        say("acquired " + System.currentTimeMillis() + (lock.fence() > 0 ? " fence " + lock.fence() : ""));
        String line;
        while ((line = stdin.readLine()) != null) {
            if (line.trim().equals("release")) {
                try {
                    lock.release();
                    say("released");
                } catch (Exception e) {
                    say("release-error " + e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).replace('\n', ' '));
                }
                return;
            }
        }
    }
}
