package io.lockbridge.spring.app3;

import io.lockbridge.Redis;
import io.lockbridge.spring.boot3.LockbridgeLockRegistry;
import io.lockbridge.spring.testing.AbstractRollingDeployTest;
import io.lockbridge.spring.testing.RegistryScenarios;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry;

/** Mid-deploy on Spring Integration 6.5 ({@link AbstractRollingDeployTest}). */
class LockRegistryRollingDeployTest extends AbstractRollingDeployTest {
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
}
