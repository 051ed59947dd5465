package io.lockbridge.interop;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import com.github.jedis.lock.JedisLock;
import io.lockbridge.interop.common.Harness;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.redis.spring.RedisLockProvider;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.RedisTemplate;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.integration.redis.util.RedisLockRegistry;

/** The Java lockers, each written the way its users write it. */
final class Lockers {
    private Lockers() {}

    /** The --locker kinds. */
    static final List<String> KINDS = List.of("spring-callback", "spring-ops", "jedis-lock", "spring-integration", "shedlock",
            "lockbridge-migrate", "lockbridge-legacy", "lockbridge-modern");

    /** One lock, as the worker drives it. */
    interface JavaLock extends AutoCloseable {
        /** Tries to take the lock, waiting up to waitMs; true when held. */
        boolean acquire(long waitMs) throws Exception;

        /** Releases the lock, as the library's users do. */
        void release() throws Exception;

        /** The fence of the lock held (0: the locker hands out none). */
        default long fence() {
            return 0;
        }

        @Override
        default void close() {}
    }

    static JavaLock create(Map<String, String> f) {
        String kind = f.get("locker");
        String name = f.get("name");
        long lease = Harness.num(f, "lease-ms", 1000);
        long poll = Harness.num(f, "poll-ms", 100);
        String[] redis = f.get("redis").split(":");
        String host = redis[0];
        int port = Integer.parseInt(redis[1]);
        if (kind == null || name == null) {
            throw new IllegalArgumentException("--locker and --name are required; lockers: " + KINDS);
        }
        if (kind.equals("jedis-lock")) {
            return new JedisLockLocker(host, port, name, lease);
        }
        if (kind.equals("lockbridge-migrate")) {
            return new LockbridgeMigrateLock(f, host, port, name, lease);
        }
        if (kind.equals("lockbridge-modern")) {
            return new LockbridgeModernLock(f, host, port, name, lease);
        }
        if (kind.equals("lockbridge-legacy")) {
            return new LockbridgeLegacyLock(f, host, port, name, lease);
        }
        RedisConnectionFactory factory = factory(f.getOrDefault("client", "lettuce"), host, port);
        return switch (kind) {
            case "spring-callback" -> new CallbackLock(template(f, factory), name, lease, poll, factory);
            case "spring-ops" -> new OpsLock(template(f, factory), name, lease, poll, factory);
            case "spring-integration" -> new IntegrationLock(factory, f.getOrDefault("registry", "locks"), name, lease, poll,
                    f.getOrDefault("lock-type", "spin"));
            case "shedlock" -> new ShedLockLock(factory, f.getOrDefault("env", "default"), name, lease, poll);
            default -> throw new IllegalArgumentException("unknown --locker " + kind + "; lockers: " + KINDS);
        };
    }

    static RedisConnectionFactory factory(String client, String host, int port) {
        RedisStandaloneConfiguration conf = new RedisStandaloneConfiguration(host, port);
        switch (client) {
            case "lettuce" -> {
                LettuceConnectionFactory cf = new LettuceConnectionFactory(conf);
                cf.afterPropertiesSet();
                cf.start();
                return cf;
            }
            case "jedis" -> {
                JedisConnectionFactory cf = new JedisConnectionFactory(conf);
                cf.afterPropertiesSet();
                cf.start();
                return cf;
            }
            default -> throw new IllegalArgumentException("unknown --client " + client + "; lettuce or jedis");
        }
    }

    /**
     * StringRedisTemplate, or a plain RedisTemplate with no serializer set:
     * what Spring Boot's auto-configured redisTemplate bean is (JDK
     * serialization for keys and values).
     */
    @SuppressWarnings({"rawtypes", "unchecked"})
    static RedisTemplate<Object, Object> template(Map<String, String> f, RedisConnectionFactory factory) {
        String t = f.getOrDefault("template", "string");
        RedisTemplate tpl = switch (t) {
            case "string" -> new StringRedisTemplate();
            case "jdk" -> new RedisTemplate<Object, Object>();
            default -> throw new IllegalArgumentException("unknown --template " + t + "; string or jdk");
        };
        tpl.setConnectionFactory(factory);
        tpl.afterPropertiesSet();
        return tpl;
    }

    static void destroy(RedisConnectionFactory factory) {
        if (factory instanceof LettuceConnectionFactory l) {
            l.destroy();
        } else if (factory instanceof JedisConnectionFactory j) {
            j.destroy();
        }
    }

    /**
     * The timestamp lock of the Java services, on the wire: a value is the
     * holder's deadline, System.currentTimeMillis() + lease + 1, as decimal
     * ASCII. A round sends SETNX key deadline; when the key exists, GET it,
     * and when the deadline read has passed, GETSET key deadline: the lock is
     * ours only if GETSET handed back the very value GET read (else another
     * contender's GETSET came first; ours still overwrote theirs, as the
     * scheme does). That takeover test is jedis-lock's (JedisLock.acquire),
     * which the Spring copies of the scheme follow; the seed lock that
     * internal/testing/javareplay replays tests the old value's deadline
     * instead. No TTL is ever set. Release: DEL, and only while our
     * deadline has not passed by the local clock. A value that is not a
     * number throws NumberFormatException, as the scheme's parse does.
     *
     * The subclasses say how the four commands reach Redis.
     */
    abstract static class TimestampLock implements JavaLock {
        private final long leaseMs;
        private final long pollMs;
        private final RedisConnectionFactory factory;
        private long heldUntil;

        TimestampLock(long leaseMs, long pollMs, RedisConnectionFactory factory) {
            this.leaseMs = leaseMs;
            this.pollMs = pollMs;
            this.factory = factory;
        }

        /** SETNX: true when the key was absent and now holds value. */
        abstract boolean setIfAbsent(String value);

        /** GET: the stored value, null when there is none. */
        abstract String read();

        /** GETSET: stores value, returns the one it replaced (null when none). */
        abstract String swap(String value);

        /** DEL. */
        abstract void remove();

        @Override
        public final boolean acquire(long waitMs) throws InterruptedException {
            long giveUpAt = System.currentTimeMillis() + waitMs;
            while (!tryOnce()) {
                if (System.currentTimeMillis() + pollMs > giveUpAt) {
                    return false;
                }
                Thread.sleep(pollMs);
            }
            return true;
        }

        /** One round of SETNX, then GET and GETSET on an expired deadline. */
        private boolean tryOnce() {
            long roundStart = System.currentTimeMillis();
            long deadline = roundStart + leaseMs + 1;
            String ours = Long.toString(deadline);
            boolean won = setIfAbsent(ours);
            if (!won) {
                String seen = read();
                boolean expired = seen != null && Long.parseLong(seen) < roundStart;
                won = expired && seen.equals(swap(ours));
            }
            if (won) {
                heldUntil = deadline;
            }
            return won;
        }

        @Override
        public final void release() {
            if (heldUntil > System.currentTimeMillis()) {
                remove();
            }
        }

        @Override
        public final void close() {
            destroy(factory);
        }
    }

    /**
     * The scheme as most copies of it send it: through a RedisCallback with
     * the raw bytes of String.getBytes() for key and value (past the
     * template's serializers), while the release calls
     * redisTemplate.delete(key), which does go through the template's key
     * serializer. On a default (JDK-serializing) RedisTemplate that DEL names
     * another key: this lock never releases, it only expires.
     */
    static final class CallbackLock extends TimestampLock {
        private final RedisTemplate<Object, Object> template;
        private final byte[] key;
        private final String name;

        CallbackLock(RedisTemplate<Object, Object> t, String name, long lease, long poll, RedisConnectionFactory f) {
            super(lease, poll, f);
            this.template = t;
            this.name = name;
            this.key = name.getBytes();
        }

        private static String text(byte[] b) {
            return b == null ? null : new String(b);
        }

        @Override
        boolean setIfAbsent(String value) {
            return Boolean.TRUE.equals(template.execute((RedisCallback<Boolean>) c -> c.setNX(key, value.getBytes())));
        }

        @Override
        String read() {
            return template.execute((RedisCallback<String>) c -> text(c.get(key)));
        }

        @Override
        String swap(String value) {
            return template.execute((RedisCallback<String>) c -> text(c.getSet(key, value.getBytes())));
        }

        @Override
        void remove() {
            template.delete(name);
        }
    }

    /**
     * The scheme through the template's value operations (setIfAbsent, get,
     * getAndSet) and delete(key): key and value both go through the
     * template's serializers, UTF-8 on a StringRedisTemplate, JDK
     * serialization on a default RedisTemplate.
     */
    static final class OpsLock extends TimestampLock {
        private final RedisTemplate<Object, Object> template;
        private final String name;

        OpsLock(RedisTemplate<Object, Object> t, String name, long lease, long poll, RedisConnectionFactory f) {
            super(lease, poll, f);
            this.template = t;
            this.name = name;
        }

        @Override
        boolean setIfAbsent(String value) {
            return Boolean.TRUE.equals(template.opsForValue().setIfAbsent(name, value));
        }

        @Override
        String read() {
            return (String) template.opsForValue().get(name);
        }

        @Override
        String swap(String value) {
            return (String) template.opsForValue().getAndSet(name, value);
        }

        @Override
        void remove() {
            template.delete(name);
        }
    }

    /**
     * jedis-lock 1.0.0 itself (com.github.jedis.lock.JedisLock), running on
     * Jedis 3.10.0 (relocated in this jar). Its acquire polls every 100 ms.
     */
    static final class JedisLockLocker implements JavaLock {
        private final io.lockbridge.interop.jedis3.redis.clients.jedis.Jedis jedis;
        private final String name;
        private final int lease;
        private JedisLock lock;

        JedisLockLocker(String host, int port, String name, long lease) {
            this.jedis = new io.lockbridge.interop.jedis3.redis.clients.jedis.Jedis(host, port);
            this.name = name;
            this.lease = (int) lease;
        }

        @Override
        public boolean acquire(long waitMs) throws InterruptedException {
            lock = new JedisLock(jedis, name, (int) waitMs, lease);
            return lock.acquire();
        }

        @Override
        public void release() {
            lock.release();
        }

        @Override
        public void close() {
            jedis.close();
        }
    }

    /**
     * Spring Integration's RedisLockRegistry: key registryKey:name, value the
     * registry's client id, PX the lease (expireAfter).
     */
    static final class IntegrationLock implements JavaLock {
        private final RedisLockRegistry registry;
        private final RedisConnectionFactory factory;
        private final Lock lock;

        IntegrationLock(RedisConnectionFactory f, String registryKey, String name, long lease, long poll, String type) {
            this.factory = f;
            this.registry = new RedisLockRegistry(f, registryKey, lease);
            this.registry.setIdleBetweenTries(Duration.ofMillis(poll));
            this.registry.setRedisLockType(type.equals("pubsub")
                    ? RedisLockRegistry.RedisLockType.PUB_SUB_LOCK
                    : RedisLockRegistry.RedisLockType.SPIN_LOCK);
            this.lock = registry.obtain(name);
        }

        @Override
        public boolean acquire(long waitMs) throws InterruptedException {
            return lock.tryLock(waitMs, TimeUnit.MILLISECONDS);
        }

        @Override
        public void release() {
            lock.unlock();
        }

        @Override
        public void close() {
            registry.destroy();
            destroy(factory);
        }
    }

    /**
     * ShedLock's Spring Data Redis provider: key job-lock:env:name, SET NX PX
     * lockAtMostFor (the lease); unlock after lockAtLeastFor (0 here) is a
     * plain DEL. ShedLock never waits (a scheduled job that finds the lock
     * taken skips its run), so acquire polls the way a scheduler's next run
     * would.
     */
    static final class ShedLockLock implements JavaLock {
        private final RedisLockProvider provider;
        private final RedisConnectionFactory factory;
        private final String name;
        private final long lease;
        private final long poll;
        private SimpleLock held;

        ShedLockLock(RedisConnectionFactory f, String env, String name, long lease, long poll) {
            this.factory = f;
            this.provider = new RedisLockProvider(f, env);
            this.name = name;
            this.lease = lease;
            this.poll = poll;
        }

        @Override
        public boolean acquire(long waitMs) throws InterruptedException {
            long deadline = System.currentTimeMillis() + waitMs;
            while (true) {
                Optional<SimpleLock> l = provider.lock(
                        new LockConfiguration(Instant.now(), name, Duration.ofMillis(lease), Duration.ZERO));
                if (l.isPresent()) {
                    held = l.get();
                    return true;
                }
                if (System.currentTimeMillis() + poll > deadline) {
                    return false;
                }
                Thread.sleep(poll);
            }
        }

        @Override
        public void release() {
            held.unlock();
        }

        @Override
        public void close() {
            destroy(factory);
        }
    }

    /**
     * lockbridge-java's MigrateLocker, the way a Spring service uses it: a
     * Redis from the service's LettuceConnectionFactory (lockbridge opens
     * its own connections to that server, with replay off). Flags:
     * {@code --namespace=} follow that namespace's phase (else
     * {@code --phase=} a fixed phase), {@code --interval-ms=} the phase
     * interval, {@code --profile=raw|jdk}, {@code --auto-refresh=true}.
     */
    static final class LockbridgeMigrateLock implements JavaLock {
        private final LettuceConnectionFactory factory;
        private final io.lockbridge.Redis redis;
        private final io.lockbridge.MigrateLocker locker;
        private final String name;
        private final Duration lease;
        private final boolean contending;
        private io.lockbridge.Lock held;

        LockbridgeMigrateLock(Map<String, String> f, String host, int port, String name, long leaseMs) {
            factory = lettuceFactory(f, host, port);
            factory.afterPropertiesSet();
            factory.start();
            redis = io.lockbridge.SpringRedis.of(factory);
            io.lockbridge.MigrateLocker.Builder b = io.lockbridge.MigrateLocker.builder(redis).legacy(profile(f))
                    .autoRefresh(Boolean.parseBoolean(f.getOrDefault("auto-refresh", "false")));
            if (f.containsKey("namespace")) {
                b.followPhase(f.get("namespace")).phaseInterval(Duration.ofMillis(Harness.num(f, "interval-ms", 2000)));
            } else {
                b.phase(io.lockbridge.Phase.ofWire(f.getOrDefault("phase", "legacy")));
            }
            locker = b.build();
            this.name = name;
            this.lease = Duration.ofMillis(leaseMs);
            this.contending = "contend".equals(f.getOrDefault("mode", "contend"));
        }

        @Override
        public boolean acquire(long waitMs) {
            try {
                held = locker.lock(name, lease, Duration.ofMillis(waitMs));
                return true;
            } catch (io.lockbridge.NotObtainedException | io.lockbridge.PhaseUnknownException e) {
                return false;
            } catch (io.lockbridge.LockbridgeException e) {
                // Redis unreachable, an unknown outcome: not held; say why
                System.err.println("acquire: " + e);
                return false;
            }
        }

        @Override
        public void release() {
            io.lockbridge.Lock l = held;
            held = null;
            try {
                l.unlock();
            } catch (io.lockbridge.NotHeldException e) {
                // ended (a phase move, an expiry): as Go's workers, go on
            } catch (io.lockbridge.LockbridgeException e) {
                if (!contending) {
                    throw e; // mode once reports it
                }
                // contending, cut off from Redis or in a failover (an error
                // reply such as READONLY: the release did not run): the lock
                // ends by its lease; go on
                System.err.println("release: " + e);
            }
        }

        @Override
        public void close() {
            locker.close();
            redis.close();
            factory.destroy();
        }
    }

    /**
     * The service's LettuceConnectionFactory for the lockbridge-migrate
     * locker: {@code --cluster=host:port,…} a Redis Cluster's seed nodes,
     * {@code --sentinels=host:port,…} with {@code --master=} (default
     * mymaster) a Sentinel-watched master, else the standalone server at
     * --redis.
     */
    static LettuceConnectionFactory lettuceFactory(Map<String, String> f, String host, int port) {
        if (f.containsKey("cluster")) {
            return new LettuceConnectionFactory(new org.springframework.data.redis.connection.RedisClusterConfiguration(
                    List.of(f.get("cluster").split(","))));
        }
        if (f.containsKey("sentinels")) {
            return new LettuceConnectionFactory(new org.springframework.data.redis.connection.RedisSentinelConfiguration(
                    f.getOrDefault("master", "mymaster"), new java.util.HashSet<>(List.of(f.get("sentinels").split(",")))));
        }
        return new LettuceConnectionFactory(new RedisStandaloneConfiguration(host, port));
    }

    /** The --profile of a lockbridge-java locker: raw (the default) or jdk (a default RedisTemplate's). */
    static io.lockbridge.LegacyProfile profile(Map<String, String> f) {
        io.lockbridge.LegacyProfile p = io.lockbridge.LegacyProfile.defaults();
        if ("jdk".equals(f.get("profile"))) {
            p = p.keyCodec(io.lockbridge.KeyCodec.JDK_STRING).valueCodec(io.lockbridge.ValueCodec.JDK_STRING);
        }
        return p;
    }

    /** lockbridge-java's LegacyLocker: the same lock as the seed code, done safely. Flag {@code --profile=raw|jdk}. */
    static final class LockbridgeLegacyLock implements JavaLock {
        private final LettuceConnectionFactory factory;
        private final io.lockbridge.Redis redis;
        private final io.lockbridge.LegacyLocker locker;
        private final String name;
        private final Duration lease;
        private io.lockbridge.Lock held;

        LockbridgeLegacyLock(Map<String, String> f, String host, int port, String name, long leaseMs) {
            factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(host, port));
            factory.afterPropertiesSet();
            factory.start();
            redis = io.lockbridge.SpringRedis.of(factory);
            locker = io.lockbridge.LegacyLocker.builder(redis).profile(profile(f)).build();
            this.name = name;
            this.lease = Duration.ofMillis(leaseMs);
        }

        @Override
        public boolean acquire(long waitMs) {
            try {
                held = locker.lock(name, lease, Duration.ofMillis(waitMs));
                return true;
            } catch (io.lockbridge.NotObtainedException e) {
                return false;
            }
        }

        @Override
        public void release() {
            io.lockbridge.Lock l = held;
            held = null;
            try {
                l.unlock();
            } catch (io.lockbridge.NotHeldException e) {
                // a seed contender's GETSET over our value, or an expiry: as the seed code, go on
            }
        }

        @Override
        public void close() {
            locker.close();
            redis.close();
            factory.destroy();
        }
    }

    /**
     * lockbridge-java's ModernLocker: Go's modern.Locker. Flags
     * {@code --fencing=true}, {@code --auto-refresh=true},
     * {@code --derived=true} (the name is a legacy name: the lock is on its
     * derived modern key, {@code --profile=raw|jdk}), {@code --backoff-ms=}
     * a constant backoff (default Go's 8 ms doubling to 512 ms),
     * {@code --pollers-ms=} wait as a poller; {@code --cluster=} or
     * {@code --sentinels=} / {@code --master=} as lockbridge-migrate's
     * (through a Lettuce Cluster / Sentinel connection factory).
     */
    static final class LockbridgeModernLock implements JavaLock {
        private final LettuceConnectionFactory factory; // null: standalone, by RedisURI
        private final io.lockbridge.Redis redis;
        private final io.lockbridge.ModernLocker locker;
        private final String name;
        private final Duration lease;
        private final boolean contending;
        private io.lockbridge.Lock held;

        LockbridgeModernLock(Map<String, String> f, String host, int port, String name, long leaseMs) {
            if (f.containsKey("cluster") || f.containsKey("sentinels")) {
                factory = lettuceFactory(f, host, port);
                factory.afterPropertiesSet();
                factory.start();
                redis = io.lockbridge.SpringRedis.of(factory);
            } else {
                factory = null;
                redis = io.lockbridge.Redis.of(io.lettuce.core.RedisURI.create(host, port));
            }
            io.lockbridge.ModernLocker.Builder b = io.lockbridge.ModernLocker.builder(redis)
                    .fencing(Boolean.parseBoolean(f.getOrDefault("fencing", "false")))
                    .autoRefresh(Boolean.parseBoolean(f.getOrDefault("auto-refresh", "false")));
            if (Boolean.parseBoolean(f.getOrDefault("derived", "false"))) {
                b.derivedFrom(profile(f));
            }
            if (f.containsKey("backoff-ms")) {
                Duration d = Duration.ofMillis(Harness.num(f, "backoff-ms", 0));
                b.backoff(io.lockbridge.Backoff.exponential(d, d));
            }
            if (f.containsKey("pollers-ms")) {
                b.pollers(Duration.ofMillis(Harness.num(f, "pollers-ms", 0)));
            }
            locker = b.build();
            this.name = name;
            this.lease = Duration.ofMillis(leaseMs);
            this.contending = "contend".equals(f.getOrDefault("mode", "contend"));
        }

        @Override
        public boolean acquire(long waitMs) {
            try {
                held = locker.lock(name, lease, Duration.ofMillis(waitMs));
                return true;
            } catch (io.lockbridge.NotObtainedException e) {
                return false;
            } catch (io.lockbridge.LockbridgeException e) {
                System.err.println("acquire: " + e);
                return false;
            }
        }

        @Override
        public long fence() {
            io.lockbridge.Lock l = held;
            return l == null ? 0 : l.fence();
        }

        @Override
        public void release() {
            io.lockbridge.Lock l = held;
            held = null;
            try {
                l.unlock();
            } catch (io.lockbridge.NotHeldException e) {
                // expired: as Go's workers, go on
            } catch (io.lockbridge.LockbridgeException e) {
                if (!contending) {
                    throw e;
                }
                // contending, cut off from Redis or in a failover (an error
                // reply such as READONLY: the release did not run): the lock
                // ends by its lease; go on
                System.err.println("release: " + e);
            }
        }

        @Override
        public void close() {
            locker.close();
            redis.close();
            if (factory != null) {
                factory.destroy();
            }
        }
    }
}
