package io.lockbridge.shedlock;

import java.time.Duration;
import java.util.Optional;

import io.lockbridge.InvalidException;
import io.lockbridge.Lock;
import io.lockbridge.ModernLocker;
import io.lockbridge.NotHeldException;
import io.lockbridge.NotObtainedException;
import io.lockbridge.Redis;
import net.javacrumbs.shedlock.core.AbstractSimpleLock;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * A ShedLock {@code LockProvider} on lockbridge, on the keys ShedLock's own
 * {@code RedisLockProvider} uses — {@code job-lock:<environment>:<name>}
 * (prefix and environment as that provider's, default {@code job-lock} and
 * {@code default}) — so an instance on this bean and one still on
 * RedisLockProvider exclude each other during a rolling deploy:
 *
 * <pre>{@code
 * @Bean
 * LockProvider lockProvider(io.lockbridge.Redis redis) {   // was: new RedisLockProvider(connectionFactory)
 *     return new LockbridgeLockProvider(redis);
 * }
 * }</pre>
 *
 * <p>On the wire: lock is {@code SET key token NX PX lockAtMostFor}, as
 * RedisLockProvider's (whose value, {@code ADDED:<time>@<host>:<uuid>},
 * this provider never reads: a key present is a holder). Unlike
 * RedisLockProvider's, every later write is owner-checked: unlock before
 * lockAtLeastFor has passed shortens the lease to what remains of it,
 * unlock after deletes the key, extend moves the lease — each only while
 * the key still holds this lock's token. An unlock that finds the lease
 * already over (the job outran lockAtMostFor, and another instance may
 * hold the key now) changes nothing, and neither does it throw: ShedLock's
 * unlock has no failure to report, the job has run.
 */
public class LockbridgeLockProvider implements ExtensibleLockProvider {
    /** RedisLockProvider's default key prefix. */
    public static final String DEFAULT_KEY_PREFIX = "job-lock";
    /** RedisLockProvider's default environment. */
    public static final String DEFAULT_ENVIRONMENT = "default";

    private final ModernLocker locker;
    private final String prefix;

    /** Locks under job-lock:default:. */
    public LockbridgeLockProvider(Redis redis) {
        this(redis, DEFAULT_ENVIRONMENT, DEFAULT_KEY_PREFIX);
    }

    /** Locks under keyPrefix:environment: (RedisLockProvider's constructor arguments). */
    public LockbridgeLockProvider(Redis redis, String environment, String keyPrefix) {
        if (redis == null) {
            throw new InvalidException("lockbridge: a LockProvider needs a Redis");
        }
        if (environment == null || keyPrefix == null) {
            throw new InvalidException("lockbridge: the environment and the key prefix must not be null");
        }
        this.locker = ModernLocker.builder(redis).build();
        this.prefix = keyPrefix + ":" + environment + ":";
    }

    /** The Redis key of the lock called name. */
    public String key(String name) {
        return prefix + name;
    }

    @Override
    public Optional<SimpleLock> lock(LockConfiguration config) {
        Duration atMost = until(config.getLockAtMostUntil());
        if (atMost.compareTo(Duration.ofMillis(1)) < 0) {
            return Optional.empty(); // the lease would already be over
        }
        try {
            return Optional.of(new Held(config, locker.tryLock(key(config.getName()), atMost)));
        } catch (NotObtainedException e) {
            return Optional.empty();
        }
    }

    private static Duration until(java.time.Instant instant) {
        return Duration.between(ClockProvider.now(), instant);
    }

    /** A lock this provider holds. */
    private static final class Held extends AbstractSimpleLock {
        private final Lock lock;

        Held(LockConfiguration config, Lock lock) {
            super(config);
            this.lock = lock;
        }

        @Override
        protected void doUnlock() {
            Duration keep = until(lockConfiguration.getLockAtLeastUntil());
            try {
                if (keep.compareTo(Duration.ofMillis(1)) >= 0) {
                    lock.refresh(keep); // held on until lockAtLeastFor has passed, then it expires
                } else {
                    lock.unlock();
                }
            } catch (NotHeldException e) {
                // The lease was over: the key is not ours to touch.
            }
        }

        @Override
        protected Optional<SimpleLock> doExtend(LockConfiguration config) {
            Duration atMost = until(config.getLockAtMostUntil());
            if (atMost.compareTo(Duration.ofMillis(1)) < 0) {
                return Optional.empty();
            }
            try {
                lock.refresh(atMost);
                return Optional.of(new Held(config, lock));
            } catch (NotHeldException e) {
                return Optional.empty();
            }
        }
    }
}
