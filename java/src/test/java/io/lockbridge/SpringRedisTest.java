package io.lockbridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * {@link SpringRedis#of}: a LettuceConnectionFactory for a standalone
 * server, a Sentinel master and a Cluster is accepted and its Redis locks on
 * that topology (checked on the servers themselves); a JedisConnectionFactory
 * is refused, with the reason.
 */
class SpringRedisTest {
    static LettuceConnectionFactory started(LettuceConnectionFactory factory) {
        factory.afterPropertiesSet();
        factory.start();
        return factory;
    }

    @Test
    void lettuceStandaloneFactoryIsAccepted() throws Exception {
        try (RedisServer server = new RedisServer()) {
            LettuceConnectionFactory factory = started(
                    new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", server.port)));
            try (Redis redis = SpringRedis.of(factory); MigrateLocker locker = MigrateLocker.builder(redis)
                    .phase(Phase.DUAL_WRITE).build()) {
                assertEquals(Redis.Kind.STANDALONE, redis.kind());
                Lock lock = locker.tryLock("orders", Duration.ofSeconds(10));
                assertEquals(2L,
                        server.raw.exists("orders".getBytes(StandardCharsets.UTF_8),
                        "{orders}:modern".getBytes(StandardCharsets.UTF_8)));
                lock.unlock();
            } finally {
                factory.destroy();
            }
            // The template entry takes its factory.
            LettuceConnectionFactory templateFactory = started(
                    new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", server.port)));
            StringRedisTemplate template = new StringRedisTemplate(templateFactory);
            try (Redis redis = SpringRedis.of(template); LegacyLocker locker = LegacyLocker.builder(redis).build()) {
                locker.tryLock("orders", Duration.ofSeconds(10)).unlock();
            } finally {
                templateFactory.destroy();
            }
        }
    }

    @Test
    void lettuceSentinelFactoryIsAcceptedAndReachesTheMaster() throws Exception {
        try (Topology.Sentinel topology = new Topology.Sentinel()) {
            LettuceConnectionFactory factory = started(new LettuceConnectionFactory(
                    new RedisSentinelConfiguration().master("mymaster").sentinel("127.0.0.1", topology.sentinel.port)));
            try (Redis redis = SpringRedis.of(factory); MigrateLocker locker = MigrateLocker.builder(redis)
                    .phase(Phase.DUAL_WRITE).build()) {
                assertEquals(Redis.Kind.SENTINEL, redis.kind());
                Lock lock = locker.tryLock("orders", Duration.ofSeconds(10));
                assertEquals(2L, topology.master.cmd.exists("orders", "{orders}:modern"), "the lock is on the master");
                lock.unlock();
                assertEquals(0L, topology.master.cmd.exists("orders", "{orders}:modern"));
            } finally {
                factory.destroy();
            }
        }
    }

    @Test
    void lettuceClusterFactoryIsAcceptedAndLocksOnEveryNode() throws Exception {
        try (Topology.Cluster cluster = new Topology.Cluster()) {
            List<String> nodes = new ArrayList<>();
            cluster.nodes.forEach(n -> nodes.add("127.0.0.1:" + n.port));
            LettuceConnectionFactory factory = started(
                    new LettuceConnectionFactory(new RedisClusterConfiguration(nodes)));
            try (Redis redis = SpringRedis.of(factory); MigrateLocker locker = MigrateLocker.builder(redis)
                    .phase(Phase.DUAL_WRITE).build()) {
                assertEquals(Redis.Kind.CLUSTER, redis.kind());
                assertEquals("SPUBLISH", redis.publishCommand());
                for (int i = 0; i < 3; i++) {
                    String name = TopologyFaultTest.nameOn(cluster, i, "orders-");
                    Lock lock = locker.tryLock(name, Duration.ofSeconds(10));
                    assertEquals(2L, cluster.nodes.get(i).cmd.exists(name, "{" + name + "}:modern"),
                            "the lock is on node " + i + ", its slot's master");
                    lock.unlock();
                    assertEquals(0L, cluster.nodes.get(i).cmd.exists(name, "{" + name + "}:modern"));
                }
            } finally {
                factory.destroy();
            }
        }
    }

    @Test
    void jedisFactoryIsRefusedWithTheReason() {
        JedisConnectionFactory jedis = new JedisConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", 6379));
        InvalidException invalid = assertThrows(InvalidException.class, () -> SpringRedis.of(jedis));
        assertTrue(invalid.getMessage().contains("a Jedis connection factory cannot be used"), invalid.getMessage());
        assertTrue(invalid.getMessage().contains("retries a command after a connection error"), invalid.getMessage());
        assertTrue(invalid.getMessage().contains("use a LettuceConnectionFactory"), invalid.getMessage());
        StringRedisTemplate template = new StringRedisTemplate(jedis);
        assertThrows(InvalidException.class, () -> SpringRedis.of(template));
        JedisConnectionFactory cluster = new JedisConnectionFactory(
                new RedisClusterConfiguration(List.of("127.0.0.1:7000")));
        assertThrows(InvalidException.class, () -> SpringRedis.of(cluster));
    }
}
