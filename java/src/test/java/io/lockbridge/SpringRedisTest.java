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
    static LettuceConnectionFactory started(LettuceConnectionFactory f) {
        f.afterPropertiesSet();
        f.start();
        return f;
    }

    @Test
    void lettuceStandaloneFactoryIsAccepted() throws Exception {
        try (RedisServer s = new RedisServer()) {
            LettuceConnectionFactory f = started(new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", s.port)));
            try (Redis r = SpringRedis.of(f); MigrateLocker m = MigrateLocker.builder(r).phase(Phase.DUAL_WRITE).build()) {
                assertEquals(Redis.Kind.STANDALONE, r.kind());
                Lock l = m.tryLock("orders", Duration.ofSeconds(10));
                assertEquals(2L, s.raw.exists("orders".getBytes(StandardCharsets.UTF_8), "{orders}:modern".getBytes(StandardCharsets.UTF_8)));
                l.unlock();
            } finally {
                f.destroy();
            }
            // The template entry takes its factory.
            LettuceConnectionFactory f2 = started(new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", s.port)));
            StringRedisTemplate t = new StringRedisTemplate(f2);
            try (Redis r = SpringRedis.of(t); LegacyLocker m = LegacyLocker.builder(r).build()) {
                m.tryLock("orders", Duration.ofSeconds(10)).unlock();
            } finally {
                f2.destroy();
            }
        }
    }

    @Test
    void lettuceSentinelFactoryIsAcceptedAndReachesTheMaster() throws Exception {
        try (Topology.Sentinel s = new Topology.Sentinel()) {
            LettuceConnectionFactory f = started(new LettuceConnectionFactory(
                    new RedisSentinelConfiguration().master("mymaster").sentinel("127.0.0.1", s.sentinel.port)));
            try (Redis r = SpringRedis.of(f); MigrateLocker m = MigrateLocker.builder(r).phase(Phase.DUAL_WRITE).build()) {
                assertEquals(Redis.Kind.SENTINEL, r.kind());
                Lock l = m.tryLock("orders", Duration.ofSeconds(10));
                assertEquals(2L, s.master.cmd.exists("orders", "{orders}:modern"), "the lock is on the master");
                l.unlock();
                assertEquals(0L, s.master.cmd.exists("orders", "{orders}:modern"));
            } finally {
                f.destroy();
            }
        }
    }

    @Test
    void lettuceClusterFactoryIsAcceptedAndLocksOnEveryNode() throws Exception {
        try (Topology.Cluster c = new Topology.Cluster()) {
            List<String> nodes = new ArrayList<>();
            c.nodes.forEach(n -> nodes.add("127.0.0.1:" + n.port));
            LettuceConnectionFactory f = started(new LettuceConnectionFactory(new RedisClusterConfiguration(nodes)));
            try (Redis r = SpringRedis.of(f); MigrateLocker m = MigrateLocker.builder(r).phase(Phase.DUAL_WRITE).build()) {
                assertEquals(Redis.Kind.CLUSTER, r.kind());
                assertEquals("SPUBLISH", r.publishCommand());
                for (int i = 0; i < 3; i++) {
                    String name = TopologyFaultTest.nameOn(c, i, "orders-");
                    Lock l = m.tryLock(name, Duration.ofSeconds(10));
                    assertEquals(2L, c.nodes.get(i).cmd.exists(name, "{" + name + "}:modern"), "the lock is on node " + i + ", its slot's master");
                    l.unlock();
                    assertEquals(0L, c.nodes.get(i).cmd.exists(name, "{" + name + "}:modern"));
                }
            } finally {
                f.destroy();
            }
        }
    }

    @Test
    void jedisFactoryIsRefusedWithTheReason() {
        JedisConnectionFactory f = new JedisConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", 6379));
        InvalidException e = assertThrows(InvalidException.class, () -> SpringRedis.of(f));
        assertTrue(e.getMessage().contains("a Jedis connection factory cannot be used"), e.getMessage());
        assertTrue(e.getMessage().contains("retries a command after a connection error"), e.getMessage());
        assertTrue(e.getMessage().contains("use a LettuceConnectionFactory"), e.getMessage());
        StringRedisTemplate t = new StringRedisTemplate(f);
        assertThrows(InvalidException.class, () -> SpringRedis.of(t));
        JedisConnectionFactory cluster = new JedisConnectionFactory(new RedisClusterConfiguration(List.of("127.0.0.1:7000")));
        assertThrows(InvalidException.class, () -> SpringRedis.of(cluster));
    }
}
