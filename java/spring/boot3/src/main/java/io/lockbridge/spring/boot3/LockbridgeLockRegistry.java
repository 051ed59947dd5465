package io.lockbridge.spring.boot3;

import java.time.Duration;
import java.util.concurrent.locks.Lock;

import io.lockbridge.Redis;
import io.lockbridge.spring.RegistryLock;
import io.lockbridge.spring.RegistryLocks;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;

/**
 * A Spring Integration 6.5 {@code LockRegistry} on lockbridge that takes
 * its locks where and as {@code RedisLockRegistry} does
 * ({@code registryKey:lockKey}, a PX lease, owner-checked release), so the
 * two exclude each other while a rolling deploy replaces one bean with the
 * other:
 *
 * <pre>{@code
 * @Bean
 * LockRegistry lockRegistry(io.lockbridge.Redis redis) {   // was: new RedisLockRegistry(connectionFactory, "locks")
 *     return new LockbridgeLockRegistry(redis, "locks");
 * }
 * }</pre>
 *
 * <p>The locks' semantics (reentrancy, interruption, unlock after the lease
 * was lost) are {@link RegistryLock}'s. Unlike RedisLockRegistry's, a held
 * lock's {@link RegistryLock#held()} carries lockbridge's lost-lock signal,
 * and no lock write is ever sent twice.
 */
public class LockbridgeLockRegistry implements ExpirableLockRegistry, RenewableLockRegistry, DisposableBean {
    private final RegistryLocks<RegistryLock> locks;

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
        this.locks = new RegistryLocks<>(redis, registryKey, expireAfter, autoRefresh, RegistryLock6::new);
    }

    /** The Spring Integration 6.5 lock: the core lock as it is. */
    private static final class RegistryLock6 extends RegistryLock {
        RegistryLock6(RegistryLocks<?> registry, String key) {
            super(registry, key);
        }
    }

    @Override
    public Lock obtain(Object lockKey) {
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

    /** Extends the held lock of lockKey to ttl from now. */
    public void renewLock(Object lockKey, Duration ttl) {
        locks.renewLock(lockKey, ttl);
    }

    @Override
    public void destroy() {
        locks.close();
    }
}
