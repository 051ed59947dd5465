package io.lockbridge.interop.redisson;

import static io.lockbridge.interop.common.Harness.exitOnEOF;
import static io.lockbridge.interop.common.Harness.num;
import static io.lockbridge.interop.common.Harness.say;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.lockbridge.interop.common.Harness;
import org.redisson.Redisson;
import org.redisson.api.RAtomicLong;
import org.redisson.api.RFencedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * The Redisson worker of lockbridge's interop tests: a service that locks with
 * Redisson's own {@code RLock}, beside Go services using lockbridge's redisson
 * package, on real redis-servers. The Go tests (package interop) start it and
 * read what it does on stdout, one line per event.
 *
 * <p>Flags ({@code --name=value}):
 * <ul>
 *   <li>{@code --redis=host:port} a single redis-server, or
 *       {@code --cluster=host:port,host:port,...} a Redis Cluster's nodes;
 *   <li>{@code --guard=host:port} a second redis-server holding the guard
 *       counters (contend mode): the exclusion check is not the lock;
 *   <li>{@code --name=} the lock name; {@code --lease-ms=} the lease of each
 *       acquire, or -1 (the default) for none: Redisson's watchdog;
 *       {@code --watchdog-ms=} lockWatchdogTimeout (default Redisson's);
 *       {@code --fair=true} for {@code getFairLock(name)}; {@code --fenced=true}
 *       for {@code getFencedLock(name)}, taken with lockAndGetToken and
 *       tryLockAndGetToken (mode commands);
 *   <li>{@code --mode=contend|commands}.
 * </ul>
 *
 * <p>Mode contend ({@code --id=}, {@code --threads=}, {@code --count=},
 * {@code --duration-ms=}, {@code --wait-ms=}): each thread, until the guard's
 * total reaches count or the duration passes, takes the lock
 * ({@code tryLock(wait, lease)}), enters the guard (INCR cs:in, an overlap when
 * it is not 1: INCR cs:overlaps; INCR acq:&lt;id&gt; and total), takes the lock
 * again — a reentrant hold, checked by {@code getHoldCount() == 2} — and
 * unlocks it, leaves the guard (DECR cs:in) and unlocks. Prints {@code ready},
 * then {@code done <acquisitions> <timeouts>}.
 *
 * <p>Mode commands: one thread runs the commands read from stdin, one a line:
 * <ul>
 *   <li>{@code lock} — {@code lock()} (or {@code lock(lease)}), waiting as
 *       long as it takes; prints {@code locked <epoch µs> <field> <holds>},
 *       the time read as soon as lock() returned (and, fenced, the token);
 *   <li>{@code try <wait ms>} — {@code tryLock(wait, lease)}; prints the same,
 *       or {@code timeout};
 *   <li>{@code unlock} — reads the time, unlocks, prints
 *       {@code unlocked <epoch µs before unlock()>};
 *   <li>{@code force} — {@code forceUnlock()}; prints {@code forced <true|false>};
 *   <li>{@code exit}.
 * </ul>
 * It prints {@code ready <client id>} first. The field is the hash field this
 * thread's holds are counted in: Redisson's {@code <client id>:<thread id>}.
 *
 * <p>The worker exits when its stdin closes, so a dying test leaves no JVM.
 */
public final class RedissonWorker {
    private RedissonWorker() {}

    public static void main(String[] args) throws Exception {
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
        Map<String, String> flags = Harness.parse(args);
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        RedissonClient client = Redisson.create(config(flags));
        try {
            switch (flags.getOrDefault("mode", "contend")) {
                case "contend" -> contend(flags, client, stdin);
                case "commands" -> commands(flags, client, stdin);
                default -> throw new IllegalArgumentException("unknown --mode " + flags.get("mode"));
            }
        } finally {
            System.out.flush();
            Runtime.getRuntime().halt(0); // no orderly shutdown to wait for: the test is done with us
        }
    }

    static Config config(Map<String, String> f) {
        Config c = new Config();
        if (f.containsKey("watchdog-ms")) {
            c.setLockWatchdogTimeout(num(f, "watchdog-ms", 30_000));
        }
        if (f.containsKey("cluster")) {
            var cluster = c.useClusterServers();
            for (String node : f.get("cluster").split(",")) {
                cluster.addNodeAddress("redis://" + node);
            }
        } else {
            c.useSingleServer().setAddress("redis://" + f.get("redis"));
        }
        return c;
    }

    static long micros() {
        return ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
    }

    /** The lock of the flags: getLock(name), getFairLock(name) or getFencedLock(name). */
    static RLock lock(Map<String, String> f, RedissonClient client) {
        String name = f.get("name");
        if (Boolean.parseBoolean(f.getOrDefault("fenced", "false"))) {
            return client.getFencedLock(name);
        }
        return Boolean.parseBoolean(f.getOrDefault("fair", "false")) ? client.getFairLock(name) : client.getLock(name);
    }

    /** Takes lock with the lease of the flags: -1 is the watchdog. */
    static boolean acquire(RLock lock, long waitMs, long lease) throws InterruptedException {
        if (waitMs < 0) {
            lock.lock(lease, TimeUnit.MILLISECONDS);
            return true;
        }
        return lock.tryLock(waitMs, lease, TimeUnit.MILLISECONDS);
    }

    static void commands(Map<String, String> f, RedissonClient client, BufferedReader stdin) throws Exception {
        RLock lock = lock(f, client);
        long lease = num(f, "lease-ms", -1);
        String field = client.getId() + ":" + Thread.currentThread().getId();
        say("ready " + client.getId());
        for (String line; (line = stdin.readLine()) != null; ) {
            String[] w = line.trim().split(" ");
            switch (w[0]) {
                case "lock", "try" -> {
                    long wait = w[0].equals("lock") ? -1 : Long.parseLong(w[1]);
                    if (lock instanceof RFencedLock fenced) {
                        Long token = wait < 0 ? fenced.lockAndGetToken() : fenced.tryLockAndGetToken(wait, lease, TimeUnit.MILLISECONDS);
                        long at = micros();
                        say(token == null ? "timeout" : "locked " + at + " " + field + " " + lock.getHoldCount() + " " + token);
                    } else if (acquire(lock, wait, lease)) {
                        long at = micros();
                        say("locked " + at + " " + field + " " + lock.getHoldCount());
                    } else {
                        say("timeout");
                    }
                }
                case "unlock" -> {
                    long at = micros();
                    lock.unlock();
                    say("unlocked " + at);
                }
                case "force" -> say("forced " + lock.forceUnlock());
                case "exit" -> {
                    return;
                }
                default -> say("error unknown command " + line);
            }
        }
    }

    static void contend(Map<String, String> f, RedissonClient client, BufferedReader stdin) throws Exception {
        int threads = (int) num(f, "threads", 1);
        String id = f.getOrDefault("id", "java");
        String[] g = f.get("guard").split(":");
        Config gc = new Config();
        gc.useSingleServer().setAddress("redis://" + g[0] + ":" + g[1]);
        RedissonClient guard = Redisson.create(gc);
        exitOnEOF(stdin);
        say("ready");
        try {
            long[] sum = Harness.fanOut(threads, n -> contendOne(f, client, guard, threads == 1 ? id : id + "-" + n));
            say("done " + sum[0] + " " + sum[1]);
        } catch (Throwable e) {
            say("error " + e);
            e.printStackTrace();
        }
    }

    /** One contending thread: returns {acquisitions, attempts that timed out}. */
    static long[] contendOne(Map<String, String> f, RedissonClient client, RedissonClient guard, String id) throws Exception {
        RLock lock = lock(f, client);
        long count = num(f, "count", Long.MAX_VALUE);
        long end = System.nanoTime() + num(f, "duration-ms", 86_400_000L) * 1_000_000L;
        long wait = num(f, "wait-ms", 2000);
        long lease = num(f, "lease-ms", -1);
        RAtomicLong in = guard.getAtomicLong("cs:in");
        RAtomicLong total = guard.getAtomicLong("total");
        long acquired = 0;
        long timeouts = 0;
        while (System.nanoTime() < end && total.get() < count) {
            if (!acquire(lock, wait, lease)) {
                timeouts++;
                continue;
            }
            if (in.incrementAndGet() != 1) {
                guard.getAtomicLong("cs:overlaps").incrementAndGet();
            }
            guard.getAtomicLong("acq:" + id).incrementAndGet();
            total.incrementAndGet();
            acquire(lock, -1, lease); // reentrant: at once
            if (lock.getHoldCount() != 2) {
                throw new IllegalStateException("reentrant hold count " + lock.getHoldCount());
            }
            lock.unlock();
            in.decrementAndGet();
            lock.unlock();
            acquired++;
        }
        return new long[] {acquired, timeouts};
    }
}
