package io.lockbridge;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisStaticMasterReplicaConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * {@link SpringRedis#of} takes the Redis the factory really talks to. A
 * LettuceConnectionFactory keeps its configuration in a field with no
 * getter for the static master/replica case (Boot 4's
 * {@code spring.data.redis.masterreplica.nodes}), and
 * {@code getStandaloneConfiguration()} then answers its default,
 * localhost:6379: every instance would lock on a Redis of its own, or on
 * none. Likewise a standalone configuration handed to the
 * {@code RedisConfiguration} constructor (what
 * {@code LettuceConnectionFactory.createRedisConfiguration(uri)} returns).
 */
class SpringRedisFaultTest {
    @Test
    void testFaultStaticMasterReplicaFactoryIsRefused() throws Exception {
        try (RedisServer server = new RedisServer()) {
            LettuceConnectionFactory factory = new LettuceConnectionFactory(
                    new RedisStaticMasterReplicaConfiguration("127.0.0.1", server.port),
                    LettuceClientConfiguration.defaultConfiguration());
            InvalidException invalid = assertThrows(InvalidException.class, () -> {
                try (Redis redis = SpringRedis.of(factory)) {
                    ModernLocker.builder(redis).build().tryLock("orders", Duration.ofSeconds(10));
                }
            }, "a static master/replica factory must be refused, not taken for localhost:6379");
            assertTrue(invalid.getMessage().contains("RedisStaticMasterReplicaConfiguration"), invalid.getMessage());
        }
    }

    @Test
    void testFaultStandaloneConfigurationGivenAsRedisConfigurationLocksOnItsServer() throws Exception {
        try (RedisServer server = new RedisServer()) {
            LettuceConnectionFactory factory = new LettuceConnectionFactory(
                    LettuceConnectionFactory.createRedisConfiguration("redis://127.0.0.1:" + server.port + "/0"),
                    LettuceClientConfiguration.defaultConfiguration());
            try (Redis redis = SpringRedis.of(factory)) {
                Lock lock = ModernLocker.builder(redis).build().tryLock("orders", Duration.ofSeconds(10));
                byte[] stored = server.raw.get("orders".getBytes(StandardCharsets.UTF_8));
                assertTrue(stored != null, "the lock is on the factory's server");
                lock.unlock();
                assertArrayEquals(null, server.raw.get("orders".getBytes(StandardCharsets.UTF_8)));
            }
        }
    }
}
