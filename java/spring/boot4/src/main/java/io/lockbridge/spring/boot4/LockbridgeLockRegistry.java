package io.lockbridge.spring.boot4;

import java.time.Duration;

import io.lockbridge.Redis;
import io.lockbridge.spring.RegistryLock;
import io.lockbridge.spring.RegistryLocks;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * A Spring Integration 7 {@code LockRegistry<DistributedLock>} on
 * lockbridge that takes its locks where and as {@code RedisLockRegistry}
 * does ({@code registryKey:lockKey}, a PX lease, owner-checked release), so
 * the two exclude each other while a rolling deploy replaces one bean with
 * the other:
 *
 * <pre>{@code
 * @Bean
 * LockRegistry<DistributedLock> lockRegistry(io.lockbridge.Redis redis) {
 *     // was: return new RedisLockRegistry(connectionFactory, "locks");
 *     return new LockbridgeLockRegistry(redis, "locks");
 * }
 * }</pre>
 *
 * <p>The locks' semantics (reentrancy, interruption, unlock after the lease
 * was lost) are {@link RegistryLock}'s; {@link DistributedLock#lock(Duration)}
 * and {@link DistributedLock#tryLock(Duration, Duration)} take a lease per
 * call, as Spring Integration 7's do.
 */
public class LockbridgeLockRegistry
        implements ExpirableLockRegistry<DistributedLock>, RenewableLockRegistry<DistributedLock>, DisposableBean {
    private final RegistryLocks<Lock7> locks;

    /** Locks under registryKey with RedisLockRegistry's default lease, 60 s. */
    public LockbridgeLockRegistry(Redis redis, String registryKey) {
        this(redis, registryKey, RegistryLocks.DEFAULT_EXPIRE_AFTER, false);
    }

    /** Locks under registryKey held for expireAfter. */
    public LockbridgeLockRegistry(Redis redis, String registryKey, Duration expireAfter) {
        this(redis, registryKey, expireAfter, false);
    }

    /** Locks under registryKey held for expireAfter; with autoRefresh, refreshed every expireAfter/3 while held. */
    public LockbridgeLockRegistry(Redis redis, String registryKey, Duration expireAfter, boolean autoRefresh) {
        this.locks = new RegistryLocks<>(redis, registryKey, expireAfter, autoRefresh, Lock7::new);
    }

    /**
     * The Spring Integration 7 lock: the core lock, whose lock(Duration) and
     * tryLock(Duration, Duration) are DistributedLock's.
     */
    static final class Lock7 extends RegistryLock implements DistributedLock {
        Lock7(RegistryLocks<?> registry, String key) {
            super(registry, key);
        }
    }

    @Override
    public DistributedLock obtain(Object lockKey) {
        return locks.obtain(lockKey);
    }

    @Override
    public void expireUnusedOlderThan(long age) {
        locks.expireUnusedOlderThan(age);
    }

    @Override
    public void renewLock(Object lockKey) {
        locks.renewLock(lockKey, locks.expireAfter());
    }

    @Override
    public void renewLock(Object lockKey, Duration ttl) {
        locks.renewLock(lockKey, ttl);
    }

    @Override
    public void destroy() {
        locks.close();
    }
}
