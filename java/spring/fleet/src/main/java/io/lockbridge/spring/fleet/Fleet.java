package io.lockbridge.spring.fleet;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.function.Function;

import io.lockbridge.spring.Locks;
import net.javacrumbs.shedlock.core.LockProvider;

/**
 * The interop fleet's driver inside a test application
 * (interop/spring_test.go starts the application as a process): it reads
 * commands on stdin, one a line, locks through the application's own beans
 * and writes one line per event on stdout, each starting with
 * {@value #PREFIX} (the application's logs share stdout). The critical
 * sections are counted by a {@link RedisGuard} on the guard's
 * redis-server. When stdin closes (the test that started the process is
 * gone) the process halts.
 *
 * <p>Ways in ({@code <way>}): {@code locks} (the starter's Locks),
 * {@code registry} (the application's Spring Integration LockRegistry),
 * {@code shedlock} (its ShedLock LockProvider, through a
 * LockingTaskExecutor). Commands:
 * <ul>
 *   <li>{@code contend <way> <key> <threads> <hold-ms> <scope>}: threads
 *       contend for key (waiting up to 1 s a round) until {@code stop <way>},
 *       in the guard as {@code <id>-<thread>} under scope ({@code -}: none);
 *       says {@code contending <way>}, then {@code done <way> <acquired> <refused>};
 *   <li>{@code hold <way> <key> <wait-ms>}: takes key and keeps it until
 *       {@code release <way> <key>} (or until the process is killed): says
 *       {@code held <way> <key> <epoch-ms>}, then {@code released <way> <key>};
 *       or {@code refused <way> <key>};
 *   <li>{@code take <way> <key> <wait-ms>}: waits for key, takes it and lets
 *       it go: says {@code took <way> <key> <epoch-ms> <waited-ms>} or
 *       {@code refused <way> <key> <waited-ms>}.
 * </ul>
 * A failure says {@code failed <way> <exception>}; a bad command
 * {@code error <message>}.
 */
public final class Fleet {
    /** The start of every line the driver writes. */
    public static final String PREFIX = "fleet ";
    /** How long a contending round waits for the lock. */
    static final Duration ROUND_WAIT = Duration.ofSeconds(1);
    /** How often a ShedLock way tries again (a scheduler's next runs). */
    static final Duration SHEDLOCK_POLL = Duration.ofMillis(20);

    /** A way into the lock called key, waiting up to wait. */
    @FunctionalInterface
    public interface WayTo {
        Contention.Way at(String key, Duration wait);
    }

    private final String id;
    private final String guard;
    private final Map<String, WayTo> ways;
    private final Map<String, Boolean> stopped = new ConcurrentHashMap<>();
    private final Map<String, CountDownLatch> holds = new ConcurrentHashMap<>();

    /**
     * A driver named id in the guard on the redis-server at guard
     * (host:port), locking through the application's beans: the locks of
     * ways locks and registry, and ShedLock's lockAtMostFor, last lease.
     */
    public Fleet(String id, String guard, Locks locks,
            Function<String, ? extends java.util.concurrent.locks.Lock> registry,
            LockProvider shedlock, Duration lease) {
        this.id = id;
        this.guard = guard;
        this.ways = Map.of(
                "locks", (key, wait) -> Contention.of(locks, key, lease, wait),
                "registry", (key, wait) -> Contention.of(registry.apply(key), wait),
                "shedlock", (key, wait) -> Contention.of(shedlock, key, lease, wait, SHEDLOCK_POLL));
    }

    /**
     * Reads commands from in on a daemon thread (halting the process when it
     * closes), after saying {@code ready <port>}.
     */
    public void start(InputStream in, int port) {
        say("ready " + port);
        Thread thread = new Thread(() -> {
            try (BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null) {
                    if (!line.isBlank()) {
                        command(line.trim().split("\\s+"));
                    }
                }
            } catch (Exception e) {
                say("error stdin: " + e);
            }
            Runtime.getRuntime().halt(3);
        }, "fleet-stdin");
        thread.setDaemon(true);
        thread.start();
    }

    private void command(String[] args) {
        try {
            switch (args[0]) {
                case "contend" -> contend(args[1], way(args[1]).at(args[2], ROUND_WAIT), Integer.parseInt(args[3]),
                        Duration.ofMillis(Long.parseLong(args[4])), args[5].equals("-") ? "" : args[5]);
                case "stop" -> stopped.put(args[1], true);
                case "hold" -> hold(args[1], args[2],
                        way(args[1]).at(args[2], Duration.ofMillis(Long.parseLong(args[3]))));
                case "release" -> {
                    CountDownLatch latch = holds.remove(args[1] + " " + args[2]);
                    if (latch == null) {
                        say("error nothing held: " + args[1] + " " + args[2]);
                    } else {
                        latch.countDown();
                    }
                }
                case "take" -> take(args[1], args[2],
                        way(args[1]).at(args[2], Duration.ofMillis(Long.parseLong(args[3]))));
                default -> say("error unknown command " + args[0]);
            }
        } catch (RuntimeException e) {
            say("error " + String.join(" ", args) + ": " + e);
        }
    }

    private WayTo way(String name) {
        WayTo found = ways.get(name);
        if (found == null) {
            throw new IllegalArgumentException("unknown way " + name + "; ways: " + ways.keySet());
        }
        return found;
    }

    private void contend(String name, Contention.Way way, int threads, Duration hold, String scope) {
        stopped.put(name, false);
        say("contending " + name);
        background(name, () -> {
            Contention.Result result;
            try (RedisGuard redisGuard = new RedisGuard(guard, scope)) {
                result = Contention.contend(List.of(new Contention.Side(id, way)), threads, () -> !stopped.get(name),
                        hold, redisGuard);
            }
            say(result.failure() != null ? "failed " + name + " " + oneLine(result.failure())
                    : "done " + name + " " + result.acquired()[0] + " " + result.refused()[0]);
        });
    }

    private void hold(String name, String key, Contention.Way way) {
        CountDownLatch release = new CountDownLatch(1);
        background(name, () -> {
            boolean got = way.run(() -> {
                holds.put(name + " " + key, release);
                say("held " + name + " " + key + " " + System.currentTimeMillis());
                release.await();
            });
            say((got ? "released " : "refused ") + name + " " + key);
        });
    }

    private void take(String name, String key, Contention.Way way) {
        background(name, () -> {
            Contention.Takeover takeover = Contention.takeover(way);
            say(takeover.obtained()
                    ? "took " + name + " " + key + " " + takeover.at().toEpochMilli() + " "
                            + takeover.after().toMillis()
                    : "refused " + name + " " + key + " " + takeover.after().toMillis());
        });
    }

    private static void background(String name, Contention.Section body) {
        new Thread(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                say("failed " + name + " " + oneLine(e));
            }
        }, "fleet-" + name).start();
    }

    private static String oneLine(Throwable error) {
        return String.valueOf(error).replace('\n', ' ');
    }

    /** Writes one line on stdout at once; safe from any thread. */
    static void say(String line) {
        synchronized (System.out) {
            System.out.println(PREFIX + line);
            System.out.flush();
        }
    }
}
