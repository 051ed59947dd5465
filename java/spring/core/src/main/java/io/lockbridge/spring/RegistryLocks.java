package io.lockbridge.spring;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;

import io.lockbridge.InvalidException;
import io.lockbridge.ModernLocker;
import io.lockbridge.Redis;

/**
 * What both Spring Integration {@code LockRegistry} beans (one per Spring
 * Integration line) share: the locks of one registry key, taken as Spring
 * Integration's {@code RedisLockRegistry} takes them on the wire, so that an
 * instance on the lockbridge bean and one still on {@code RedisLockRegistry}
 * exclude each other during a rolling deploy.
 *
 * <p>On the wire: the key is {@code registryKey + ":" + lockKey}, a STRING
 * with a PX expiry of {@code expireAfter} (default 60 s, RedisLockRegistry's).
 * RedisLockRegistry writes its registry's UUID there and obtains only when
 * the key is absent or holds its own UUID; lockbridge writes its own random
 * token with {@code SET NX PX} (its modern lock, the name taken as the key)
 * and releases or refreshes only while the key still holds that token. Each
 * sees the other's value as another holder; a crashed holder's key expires
 * by its PX, and either side then takes it.
 *
 * @param <L> the lock type the registry line hands out
 */
public final class RegistryLocks<L extends RegistryLock> implements AutoCloseable {
    /** RedisLockRegistry's default lease. */
    public static final Duration DEFAULT_EXPIRE_AFTER = Duration.ofSeconds(60);

    private final String registryKey;
    private final Duration expireAfter;
    private final ModernLocker locker;
    private final BiFunction<RegistryLocks<L>, String, L> make;
    private final Map<String, L> locks = new ConcurrentHashMap<>();

    /**
     * The locks of registryKey on redis (which stays the caller's to close),
     * each held for expireAfter; with autoRefresh, refreshed every
     * expireAfter/3 while held (RedisLockRegistry's renewal scheduler). make
     * builds the line's lock type.
     */
    public RegistryLocks(Redis redis, String registryKey, Duration expireAfter, boolean autoRefresh,
            BiFunction<RegistryLocks<L>, String, L> make) {
        if (redis == null) {
            throw new InvalidException("lockbridge: a LockRegistry needs a Redis");
        }
        if (registryKey == null || registryKey.isEmpty()) {
            throw new InvalidException("lockbridge: a LockRegistry needs a non-empty registry key");
        }
        if (expireAfter == null || expireAfter.compareTo(Duration.ofMillis(1)) < 0) {
            throw new InvalidException("lockbridge: a LockRegistry's expireAfter must be at least 1ms, got "
                    + expireAfter);
        }
        this.registryKey = registryKey;
        this.expireAfter = expireAfter;
        this.make = make;
        this.locker = ModernLocker.builder(redis).autoRefresh(autoRefresh).build();
    }

    /** The registry key: the prefix of every lock's Redis key. */
    public String registryKey() {
        return registryKey;
    }

    /** The lease of a lock taken without a ttl. */
    public Duration expireAfter() {
        return expireAfter;
    }

    ModernLocker locker() {
        return locker;
    }

    /** The lock of lockKey (a String, as RedisLockRegistry requires): the same object for the same key while cached. */
    public L obtain(Object lockKey) {
        if (!(lockKey instanceof String name)) {
            throw new IllegalArgumentException("lockbridge: a LockRegistry lock key must be a String, got "
                    + (lockKey == null ? "null" : lockKey.getClass().getName()));
        }
        return locks.computeIfAbsent(name, key -> make.apply(this, key));
    }

    /**
     * Forgets the locks not held in this process and not locked for age ms
     * (RedisLockRegistry's expireUnusedOlderThan).
     */
    public void expireUnusedOlderThan(long age) {
        long now = System.currentTimeMillis();
        locks.values().removeIf(l -> !l.isAcquiredInThisProcess() && now - l.lockedAt() > age);
    }

    /**
     * Extends the held lock of lockKey to ttl from now; IllegalStateException
     * when this process does not hold it, or no longer does.
     */
    public void renewLock(Object lockKey, Duration ttl) {
        L lock = lockKey instanceof String name ? locks.get(name) : null;
        if (lock == null) {
            throw new IllegalStateException("lockbridge: could not renew lock " + lockKey
                    + ": not held in this process");
        }
        lock.renew(ttl);
    }

    /** Stops auto-refreshing; held locks end at their lease (as RedisLockRegistry's destroy leaves them). */
    @Override
    public void close() {
        locker.close();
    }
}
