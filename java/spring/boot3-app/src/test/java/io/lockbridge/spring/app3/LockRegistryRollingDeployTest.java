package io.lockbridge.spring.app3;

import java.util.concurrent.locks.Lock;
import java.util.function.Function;

import io.lockbridge.Fixtures;
import io.lockbridge.Redis;
import io.lockbridge.spring.boot3.LockbridgeLockRegistry;
import io.lockbridge.spring.testing.RegistryScenarios;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.redis.util.RedisLockRegistry;

/**
 * Mid-deploy on Spring Integration 6.5: instances still on RedisLockRegistry
 * and instances on LockbridgeLockRegistry, on one redis-server, each with its
 * own connections.
 */
class LockRegistryRollingDeployTest {
    static Fixtures.Standalone srv;
    static LettuceConnectionFactory factory;
    static Redis redis;
    static RedisLockRegistry old;
    static LockbridgeLockRegistry neu;

    @BeforeAll
    static void start() throws Exception {
        srv = new Fixtures.Standalone();
        factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", srv.port()));
        factory.afterPropertiesSet();
        factory.start();
        redis = srv.redis();
        old = new RedisLockRegistry(factory, "locks", RegistryScenarios.EXPIRE.toMillis());
        neu = new LockbridgeLockRegistry(redis, "locks", RegistryScenarios.EXPIRE);
    }

    @AfterAll
    static void stop() {
        neu.destroy();
        old.destroy();
        redis.close();
        factory.destroy();
        srv.close();
    }

    static final Function<String, Lock> NEW_OLD = k -> new RedisLockRegistry(factory, "locks", RegistryScenarios.EXPIRE.toMillis()).obtain(k);
    static final Function<String, Lock> NEW_NEU = k -> new LockbridgeLockRegistry(redis, "locks", RegistryScenarios.EXPIRE).obtain(k);

    @Test
    void sameKeyEachRefusesTheOther() throws Exception {
        RegistryScenarios.sameKeyEachRefusesTheOther(srv, old::obtain, neu::obtain);
    }

    @Test
    void lockbridgeKeepsRedisLockRegistrysSemantics() throws Exception {
        RegistryScenarios.semantics(srv, neu::obtain, NEW_OLD, "sem-neu");
    }

    @Test
    void redisLockRegistryHasTheSameSemantics() throws Exception {
        RegistryScenarios.semantics(srv, old::obtain, NEW_NEU, "sem-old");
    }

    @Test
    void neverOverlap() throws Exception {
        RegistryScenarios.neverOverlap(old::obtain, neu::obtain);
    }

    @Test
    void crashTakeoversBothWays() throws Exception {
        RegistryScenarios.crashTakeoversBothWays(NEW_OLD, NEW_NEU);
    }
}
