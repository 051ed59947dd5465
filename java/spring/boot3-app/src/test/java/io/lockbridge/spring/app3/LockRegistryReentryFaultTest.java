package io.lockbridge.spring.app3;

import io.lockbridge.Redis;
import io.lockbridge.spring.boot3.LockbridgeLockRegistry;
import io.lockbridge.spring.testing.AbstractReentryFaultTest;
import io.lockbridge.spring.testing.RegistryScenarios;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.redis.util.RedisLockRegistry;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;
import org.springframework.integration.support.locks.LockRegistry;

/** Re-entry renews the lease, on Spring Integration 6.5 ({@link AbstractReentryFaultTest}). */
class LockRegistryReentryFaultTest extends AbstractReentryFaultTest {
    @Override
    protected Registry framework(RedisConnectionFactory factory) {
        RedisLockRegistry registry = new RedisLockRegistry(factory, "locks", RegistryScenarios.EXPIRE.toMillis());
        return new Registry(registry::obtain, registry::destroy);
    }

    @Override
    protected Registry lockbridge(Redis redis) {
        LockbridgeLockRegistry registry = new LockbridgeLockRegistry(redis, "locks", RegistryScenarios.EXPIRE);
        return new Registry(registry::obtain, registry::destroy);
    }

    @Override
    protected RegistryScenarios.Election elect(boolean onLockbridge, int side, RegistryScenarios.Leaders leaders) {
        LockRegistry reg = onLockbridge ? new LockbridgeLockRegistry(redis, "locks", RegistryScenarios.EXPIRE)
                : new RedisLockRegistry(factory, "locks", RegistryScenarios.EXPIRE.toMillis());
        DefaultCandidate candidate = new DefaultCandidate("side-" + side, "leader") {
            @Override
            public void onGranted(Context ctx) {
                leaders.granted(side);
            }

            @Override
            public void onRevoked(Context ctx) {
                leaders.revoked(side);
            }
        };
        LockRegistryLeaderInitiator init = new LockRegistryLeaderInitiator(reg, candidate);
        init.setHeartBeatMillis(100);
        init.setBusyWaitMillis(50);
        init.start();
        return () -> {
            init.stop();
            try {
                init.destroy();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        };
    }
}
