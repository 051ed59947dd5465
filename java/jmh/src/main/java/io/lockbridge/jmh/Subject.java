package io.lockbridge.jmh;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lockbridge.LegacyLocker;
import io.lockbridge.MigrateLocker;
import io.lockbridge.ModernLocker;
import io.lockbridge.Phase;
import io.lockbridge.Redis;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry;

/**
 * One lock implementation under benchmark, with its own connections: one
 * acquire-and-release on a free key ({@link #cycle}), and a waiting acquire
 * on a contended key ({@link #lock}) whose lock is released by the thread
 * that took it. Threads may share a subject (its client) as a service's
 * threads do.
 */
abstract class Subject implements AutoCloseable {
    /** The lease of every lock taken. */
    static final Duration TTL = Duration.ofSeconds(30);
    /** How long a hand-off waits at most. */
    static final Duration WAIT = Duration.ofSeconds(30);

    /** The subjects, in the order of the report. */
    static final String[] NAMES = {"lettuce-floor", "floor-via-lockbridge", "legacy", "migrate-legacy",
        "migrate-dual-write", "migrate-dual-read", "migrate-modern", "modern", "redisson", "redis-lock-registry"};

    /** A lock taken by {@link #lock}. */
    interface Held {
        void unlock() throws Exception;
    }

    abstract void cycle(String key) throws Exception;

    /** Waits (up to {@link #WAIT}) for the lock on key, each implementation its own way. */
    abstract Held lock(String key) throws Exception;

    @Override
    public abstract void close();

    static Subject of(String name, int port) {
        RedisURI uri = RedisURI.create("127.0.0.1", port);
        return switch (name) {
        case "lettuce-floor" -> new Floor(uri);
        case "floor-via-lockbridge" -> new FloorVia(uri);
        case "legacy" -> new Lockbridge(uri, r -> LegacyLocker.builder(r).build());
        case "migrate-legacy" -> new Lockbridge(uri, r -> MigrateLocker.builder(r).phase(Phase.LEGACY).build());
        case "migrate-dual-write" -> new Lockbridge(uri, r -> MigrateLocker.builder(r).phase(Phase.DUAL_WRITE).build());
        case "migrate-dual-read" -> new Lockbridge(uri, r -> MigrateLocker.builder(r).phase(Phase.DUAL_READ).build());
        case "migrate-modern" -> new Lockbridge(uri, r -> MigrateLocker.builder(r).phase(Phase.MODERN).build());
        case "modern" -> new Lockbridge(uri, r -> ModernLocker.builder(r).build());
        case "redisson" -> new RedissonSubject(port);
        case "redis-lock-registry" -> new Registry(port);
        default -> throw new IllegalArgumentException("unknown subject " + name);
        };
    }

    /** The floor: SET key token NX PX, and a compare-and-delete script; a waiter polls every millisecond. */
    static final class Floor extends Subject {
        private static final String DEL =
                "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
        private final RedisClient client;
        private final StatefulRedisConnection<String, String> conn;
        private final RedisCommands<String, String> cmd;
        private final String sha;
        private final SetArgs args = SetArgs.Builder.nx().px(TTL.toMillis());

        Floor(RedisURI uri) {
            client = RedisClient.create(uri);
            conn = client.connect();
            cmd = conn.sync();
            sha = cmd.scriptLoad(DEL);
        }

        private boolean once(String key, String token) {
            return "OK".equals(cmd.set(key, token, args));
        }

        private void release(String key, String token) {
            cmd.evalsha(sha, ScriptOutputType.INTEGER, new String[] {key}, token);
        }

        @Override
        void cycle(String key) {
            String token = Long.toHexString(ThreadLocalRandom.current().nextLong());
            if (!once(key, token)) {
                throw new IllegalStateException("floor: " + key + " held");
            }
            release(key, token);
        }

        @Override
        Held lock(String key) throws InterruptedException {
            String token = Long.toHexString(ThreadLocalRandom.current().nextLong());
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (!once(key, token)) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("floor: " + key + " not obtained");
                }
                Thread.sleep(1);
            }
            return () -> release(key, token);
        }

        @Override
        public void close() {
            conn.close();
            client.shutdown();
        }
    }

    /** The floor's two commands through lockbridge-java's connections (io.lockbridge.Redis), without any lock logic. */
    static final class FloorVia extends Subject {
        private final Redis redis;

        FloorVia(RedisURI uri) {
            redis = Redis.of(uri);
        }

        @Override
        void cycle(String key) {
            byte[] keyBytes = key.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            byte[] token = Long.toHexString(ThreadLocalRandom.current().nextLong())
                    .getBytes(java.nio.charset.StandardCharsets.UTF_8);
            if (!io.lockbridge.BenchAccess.setNxPx(redis, keyBytes, token, TTL.toMillis())) {
                throw new IllegalStateException("floor-via-lockbridge: " + key + " held");
            }
            io.lockbridge.BenchAccess.compareAndDelete(redis, keyBytes, token);
        }

        @Override
        Held lock(String key) throws InterruptedException {
            byte[] keyBytes = key.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            byte[] token = Long.toHexString(ThreadLocalRandom.current().nextLong())
                    .getBytes(java.nio.charset.StandardCharsets.UTF_8);
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (!io.lockbridge.BenchAccess.setNxPx(redis, keyBytes, token, TTL.toMillis())) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("floor-via-lockbridge: " + key + " not obtained");
                }
                Thread.sleep(1);
            }
            return () -> io.lockbridge.BenchAccess.compareAndDelete(redis, keyBytes, token);
        }

        @Override
        public void close() {
            redis.close();
        }
    }

    interface Build<T> {
        T build(Redis redis);
    }

    /** A lockbridge-java locker: tryLock then unlock; lock (its own wait) then unlock. */
    static final class Lockbridge extends Subject {
        private final Redis redis;
        private final Object locker;

        Lockbridge(RedisURI uri, Build<AutoCloseable> make) {
            redis = Redis.of(uri);
            locker = make.build(redis);
        }

        @Override
        void cycle(String key) {
            if (locker instanceof LegacyLocker legacy) {
                legacy.tryLock(key, TTL).unlock();
            } else if (locker instanceof MigrateLocker migrate) {
                migrate.tryLock(key, TTL).unlock();
            } else {
                ((ModernLocker) locker).tryLock(key, TTL).unlock();
            }
        }

        @Override
        Held lock(String key) {
            io.lockbridge.Lock lock;
            if (locker instanceof LegacyLocker legacy) {
                lock = legacy.lock(key, TTL, WAIT);
            } else if (locker instanceof MigrateLocker migrate) {
                lock = migrate.lock(key, TTL, WAIT);
            } else {
                lock = ((ModernLocker) locker).lock(key, TTL, WAIT);
            }
            return lock::unlock;
        }

        @Override
        public void close() {
            try {
                ((AutoCloseable) locker).close();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
            redis.close();
        }
    }

    /** Redisson's RLock with an explicit lease (no watchdog). */
    static final class RedissonSubject extends Subject {
        private final RedissonClient client;

        RedissonSubject(int port) {
            Config config = new Config();
            config.useSingleServer().setAddress("redis://127.0.0.1:" + port).setConnectionMinimumIdleSize(2)
                    .setConnectionPoolSize(4);
            client = Redisson.create(config);
        }

        @Override
        void cycle(String key) throws InterruptedException {
            RLock lock = client.getLock(key);
            if (!lock.tryLock(0, TTL.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("redisson: " + key + " held");
            }
            lock.unlock();
        }

        @Override
        Held lock(String key) throws InterruptedException {
            RLock lock = client.getLock(key);
            if (!lock.tryLock(WAIT.toMillis(), TTL.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("redisson: " + key + " not obtained");
            }
            return lock::unlock;
        }

        @Override
        public void close() {
            client.shutdown();
        }
    }

    /** Spring Integration's RedisLockRegistry (its default spin lock: a retry every 100 ms). */
    static final class Registry extends Subject {
        private final LettuceConnectionFactory factory;
        private final RedisLockRegistry registry;

        Registry(int port) {
            factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", port));
            factory.afterPropertiesSet();
            factory.start();
            registry = new RedisLockRegistry(factory, "jmh", TTL.toMillis());
        }

        @Override
        void cycle(String key) {
            java.util.concurrent.locks.Lock lock = registry.obtain(key);
            if (!lock.tryLock()) {
                throw new IllegalStateException("registry: " + key + " held");
            }
            lock.unlock();
        }

        @Override
        Held lock(String key) throws InterruptedException {
            java.util.concurrent.locks.Lock lock = registry.obtain(key);
            if (!lock.tryLock(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("registry: " + key + " not obtained");
            }
            return lock::unlock;
        }

        @Override
        public void close() {
            registry.destroy();
            factory.destroy();
        }
    }
}
