package io.lockbridge.spring.testing;

import java.util.concurrent.locks.Lock;
import java.util.function.Function;

import io.lockbridge.Fixtures;
import io.lockbridge.Redis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The two registries of a rolling deploy on one redis-server, each with its
 * own connections (two instances of the fleet): Spring Integration's
 * RedisLockRegistry on a Lettuce connection factory, and lockbridge's
 * LockRegistry on a lockbridge {@link Redis}. A Spring Integration line's
 * test says how it builds each ({@link #framework}, {@link #lockbridge}):
 * registry key "locks", lease {@link RegistryScenarios#EXPIRE}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class AbstractRegistryTest {
    /** A registry's obtain, and how it is destroyed. */
    public record Registry(Function<String, Lock> obtain, Runnable destroy) {}

    protected Fixtures.Standalone srv;
    protected LettuceConnectionFactory factory;
    protected Redis redis;

    /** A new RedisLockRegistry(factory, "locks", EXPIRE): an instance still on the framework's bean. */
    protected abstract Registry framework(RedisConnectionFactory factory);

    /** A new lockbridge LockRegistry(redis, "locks", EXPIRE): an instance on the new bean. */
    protected abstract Registry lockbridge(Redis redis);

    /** A lock of a new framework registry on each call: the fleet's other old instances. */
    protected Function<String, Lock> newFramework() {
        return k -> framework(factory).obtain().apply(k);
    }

    /** A lock of a new lockbridge registry on each call: the fleet's other new instances. */
    protected Function<String, Lock> newLockbridge() {
        return k -> lockbridge(redis).obtain().apply(k);
    }

    @BeforeAll
    void startRedis() throws Exception {
        srv = new Fixtures.Standalone();
        factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", srv.port()));
        factory.afterPropertiesSet();
        factory.start();
        redis = srv.redis();
    }

    @AfterAll
    void stopRedis() {
        redis.close();
        factory.destroy();
        srv.close();
    }
}
