package io.lockbridge.shedlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import io.lockbridge.Fixtures;
import io.lockbridge.Redis;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.redis.spring.RedisLockProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A rolling deploy from ShedLock's RedisLockProvider to
 * LockbridgeLockProvider: both on one redis-server, each with its own
 * connections, as two instances of the fleet; the real ShedLock runs the
 * jobs. They exclude each other, a crashed holder of either is taken over
 * by the other once its lockAtMostFor has passed, and lockAtLeastFor and
 * unlock-after-the-lease behave as documented.
 */
class RollingDeployTest {
    static Fixtures.Standalone srv;
    static LettuceConnectionFactory factory;
    static Redis redis;
    static LockProvider old;
    static LockbridgeLockProvider neu;

    @BeforeAll
    static void start() throws Exception {
        srv = new Fixtures.Standalone();
        factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", srv.port()));
        factory.afterPropertiesSet();
        factory.start();
        old = new RedisLockProvider(factory);
        redis = srv.redis();
        neu = new LockbridgeLockProvider(redis);
    }

    @AfterAll
    static void stop() {
        redis.close();
        factory.destroy();
        srv.close();
    }

    static LockConfiguration conf(String name, Duration atMost, Duration atLeast) {
        return new LockConfiguration(Instant.now(), name, atMost, atLeast);
    }

    @Test
    void sameKeysEachRefusesTheOther() {
        Optional<SimpleLock> newLock = neu.lock(conf("job1", Duration.ofSeconds(10), Duration.ZERO));
        assertTrue(newLock.isPresent());
        assertEquals("job-lock:default:job1", neu.key("job1"));
        assertNotNull(srv.get("job-lock:default:job1"));
        long pttl = srv.pttl("job-lock:default:job1");
        assertTrue(pttl > 0 && pttl <= 10_000, "PX lockAtMostFor, got " + pttl);
        assertTrue(old.lock(conf("job1", Duration.ofSeconds(10), Duration.ZERO)).isEmpty(),
                "RedisLockProvider refused");
        newLock.get().unlock();
        assertFalse(srv.exists("job-lock:default:job1"));

        Optional<SimpleLock> oldLock = old.lock(conf("job1", Duration.ofSeconds(10), Duration.ZERO));
        assertTrue(oldLock.isPresent());
        assertTrue(srv.get("job-lock:default:job1").startsWith("ADDED:"));
        assertTrue(neu.lock(conf("job1", Duration.ofSeconds(10), Duration.ZERO)).isEmpty(), "lockbridge refused");
        oldLock.get().unlock();
        assertTrue(neu.lock(conf("job1", Duration.ofSeconds(10), Duration.ZERO)).map(held -> {
            held.unlock();
            return true;
        }).orElse(false));
    }

    @Test
    void lockAtLeastForKeepsTheKeyThenLetsItGo() throws Exception {
        neu.lock(conf("job2", Duration.ofSeconds(10), Duration.ofMillis(800))).orElseThrow().unlock();
        long pttl = srv.pttl("job-lock:default:job2");
        assertTrue(pttl > 0 && pttl <= 800, "kept until lockAtLeastFor has passed, got PTTL " + pttl);
        assertTrue(old.lock(conf("job2", Duration.ofSeconds(10), Duration.ZERO)).isEmpty());
        Thread.sleep(900);
        SimpleLock oldLock = old.lock(conf("job2", Duration.ofSeconds(10), Duration.ZERO)).orElseThrow();
        oldLock.unlock();
    }

    @Test
    void extendMovesTheLeaseWhileHeld() {
        SimpleLock newLock = neu.lock(conf("job3", Duration.ofSeconds(2), Duration.ZERO)).orElseThrow();
        SimpleLock extended = newLock.extend(Duration.ofSeconds(30), Duration.ZERO).orElseThrow();
        assertTrue(srv.pttl("job-lock:default:job3") > 2_000);
        extended.unlock();
        assertFalse(srv.exists("job-lock:default:job3"));
    }

    @Test
    void unlockAfterTheLeaseLeavesTheNewHolder() throws Exception {
        SimpleLock newLock = neu.lock(conf("job4", Duration.ofMillis(300), Duration.ZERO)).orElseThrow();
        Thread.sleep(400); // the job outran lockAtMostFor
        SimpleLock oldLock = old.lock(conf("job4", Duration.ofSeconds(10), Duration.ZERO)).orElseThrow();
        String theirs = srv.get("job-lock:default:job4");
        newLock.unlock(); // no exception, and not their key
        assertEquals(theirs, srv.get("job-lock:default:job4"));
        oldLock.unlock();
        assertNull(srv.get("job-lock:default:job4"));
    }

    /**
     * What the old bean does, asserted so the docs stay true: a
     * RedisLockProvider lock whose lockAtMostFor has passed still extends
     * (its extend is SET XX PX, with no check of the value): it overwrites
     * the new holder's token and both believe they hold the lock. The new
     * holder's own unlock then leaves the key, which is no longer its.
     */
    @Test
    void oldProviderExtendAfterItsLeaseOverwritesTheNewHolder() throws Exception {
        SimpleLock oldLock = old.lock(conf("job8", Duration.ofMillis(300), Duration.ZERO)).orElseThrow();
        Thread.sleep(400); // the job outran lockAtMostFor
        SimpleLock newLock = neu.lock(conf("job8", Duration.ofSeconds(10), Duration.ZERO)).orElseThrow();
        String ours = srv.get("job-lock:default:job8");
        // RedisLockProvider: "extended"
        SimpleLock extended = oldLock.extend(Duration.ofSeconds(10), Duration.ZERO).orElseThrow();
        String theirs = srv.get("job-lock:default:job8");
        assertTrue(theirs.startsWith("ADDED:") && !theirs.equals(ours),
                "the old provider overwrote the new holder's token");
        newLock.unlock(); // lockbridge: no longer its key, left alone
        assertEquals(theirs, srv.get("job-lock:default:job8"));
        extended.unlock();
        assertNull(srv.get("job-lock:default:job8"));
    }

    @Test
    void jobsOfBothProvidersNeverOverlap() throws Exception {
        LockingTaskExecutor[] sides = {new DefaultLockingTaskExecutor(old), new DefaultLockingTaskExecutor(neu)};
        AtomicInteger inside = new AtomicInteger();
        AtomicLong overlaps = new AtomicLong();
        AtomicLong[] ran = {new AtomicLong(), new AtomicLong()};
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long end = System.nanoTime() + Duration.ofSeconds(3).toNanos();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            int side = i;
            for (int j = 0; j < 2; j++) {
                threads.add(new Thread(() -> {
                    try {
                        while (System.nanoTime() < end) {
                            sides[side].executeWithLock((Runnable) () -> {
                                if (inside.incrementAndGet() != 1) {
                                    overlaps.incrementAndGet();
                                }
                                ran[side].incrementAndGet();
                                try {
                                    Thread.sleep(5);
                                } catch (InterruptedException e) {
                                    Thread.currentThread().interrupt();
                                }
                                inside.decrementAndGet();
                            }, conf("job5", Duration.ofSeconds(10), Duration.ZERO));
                            Thread.sleep(1);
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }));
            }
        }
        threads.forEach(Thread::start);
        for (Thread thread : threads) {
            thread.join();
        }
        assertNull(failure.get());
        assertEquals(0, overlaps.get());
        assertTrue(ran[0].get() > 0 && ran[1].get() > 0, "both ran jobs: " + ran[0] + " / " + ran[1]);
    }

    @Test
    void crashedHoldersAreTakenOverBothWays() throws Exception {
        takeover(old, neu, "job6");
        takeover(neu, old, "job7");
    }

    /** crashed takes the lock for 1 s and is gone (never unlocks); taker polls as ShedLock's next run would. */
    static void takeover(LockProvider crashed, LockProvider taker, String name) throws InterruptedException {
        assertTrue(crashed.lock(conf(name, Duration.ofSeconds(1), Duration.ZERO)).isPresent());
        long start = System.nanoTime();
        Optional<SimpleLock> got = Optional.empty();
        while (got.isEmpty() && System.nanoTime() - start < Duration.ofSeconds(5).toNanos()) {
            got = taker.lock(conf(name, Duration.ofSeconds(10), Duration.ZERO));
            if (got.isEmpty()) {
                Thread.sleep(20);
            }
        }
        Duration after = Duration.ofNanos(System.nanoTime() - start);
        assertTrue(got.isPresent(), "taken over within 5 s");
        assertTrue(after.compareTo(Duration.ofMillis(900)) >= 0, "not before the crashed holder's lease ended: "
                + after);
        got.get().unlock();
    }
}
