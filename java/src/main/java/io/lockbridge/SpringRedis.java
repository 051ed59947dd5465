package io.lockbridge;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.lettuce.core.RedisURI;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisNode;
import org.springframework.data.redis.connection.RedisPassword;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisTemplate;

/**
 * The Spring entry: lockbridge's {@link Redis} from a Spring Data Redis
 * connection factory or template. lockbridge does not send lock writes
 * through the factory's own connections — their client options are the
 * application's, and Lettuce replays unanswered commands after a reconnect
 * unless told not to — but opens its own Lettuce connections to the same
 * Redis (standalone server, Sentinel master, or Cluster; user, password,
 * database, TLS, and the factory's ClientResources), with replay off. A
 * Jedis factory or a socket factory is refused with an
 * {@link InvalidException}: better no lock than a lock that may be written
 * twice.
 */
public final class SpringRedis {
    private SpringRedis() {}

    /** Redis for the server of template's connection factory. */
    public static Redis of(RedisTemplate<?, ?> template) {
        if (template == null || template.getConnectionFactory() == null) {
            throw new InvalidException("lockbridge: a RedisTemplate with a connection factory is needed");
        }
        return of(template.getConnectionFactory());
    }

    /**
     * Redis for the Redis of factory, a LettuceConnectionFactory on a
     * standalone server, a Sentinel master or a Cluster; a static
     * master/replica factory is refused ({@link InvalidException}).
     */
    public static Redis of(RedisConnectionFactory factory) {
        if (factory != null && factory.getClass().getName().contains("Jedis")) {
            throw new InvalidException("lockbridge: a Jedis connection factory cannot be used (" + factory.getClass().getName()
                    + "): lockbridge opens its own Lettuce connections, built never to send a lock write twice, and takes their"
                    + " settings from a LettuceConnectionFactory only (Jedis's cluster client retries a command after a connection"
                    + " error, which may run a lock write twice); use a LettuceConnectionFactory, or io.lockbridge.Redis.of(RedisURI)"
                    + " / Redis.cluster(seeds)");
        }
        if (!(factory instanceof LettuceConnectionFactory lf)) {
            throw new InvalidException("lockbridge: only a LettuceConnectionFactory can be used (got "
                    + (factory == null ? "null" : factory.getClass().getName())
                    + "); lockbridge needs connections it can keep from resending lock writes: build io.lockbridge.Redis.of(RedisURI) instead");
        }
        LettuceClientConfiguration cc = lf.getClientConfiguration();
        Duration timeout = cc.getCommandTimeout() == null ? Redis.DEFAULT_TIMEOUT : cc.getCommandTimeout();
        if (lf.getSocketConfiguration() != null) {
            throw new InvalidException("lockbridge: a Unix socket factory is not supported by lockbridge-java; give Redis.of a RedisURI");
        }
        if (lf.getClusterConfiguration() != null) {
            RedisClusterConfiguration conf = lf.getClusterConfiguration();
            List<RedisURI> seeds = new ArrayList<>();
            for (RedisNode n : conf.getClusterNodes()) {
                RedisURI.Builder b = RedisURI.builder().withHost(n.getHost()).withPort(n.getPort()).withSsl(cc.isUseSsl());
                auth(b, conf.getUsername(), conf.getPassword());
                seeds.add(b.build());
            }
            return Redis.cluster(seeds, cc.getClientResources().orElse(null), timeout, false);
        }
        if (lf.getSentinelConfiguration() != null) {
            RedisSentinelConfiguration conf = lf.getSentinelConfiguration();
            if (conf.getSentinels().isEmpty()) {
                throw new InvalidException("lockbridge: the Sentinel configuration names no sentinel");
            }
            // getMaster(), not getRequiredMaster(): the latter is Spring Data Redis 4's only, and Boot 3.5 runs 3.5.
            if (conf.getMaster() == null || conf.getMaster().getName() == null) {
                throw new InvalidException("lockbridge: the Sentinel configuration names no master");
            }
            RedisURI.Builder b = RedisURI.builder().withSentinelMasterId(conf.getMaster().getName());
            for (RedisNode n : conf.getSentinels()) {
                RedisURI.Builder sb = RedisURI.builder().withHost(n.getHost()).withPort(n.getPort()).withSsl(cc.isUseSsl());
                auth(sb, conf.getSentinelUsername(), conf.getSentinelPassword());
                b.withSentinel(sb.build());
            }
            b.withDatabase(conf.getDatabase()).withSsl(cc.isUseSsl());
            auth(b, conf.getUsername(), conf.getPassword());
            RedisURI u = b.build();
            return Redis.of(u, cc.getClientResources().orElse(null), timeout);
        }
        // The configuration the factory connects with, not
        // getStandaloneConfiguration(): a factory made with the
        // RedisConfiguration constructor (a static master/replica
        // configuration, or createRedisConfiguration(uri)'s standalone one)
        // keeps there an unused default, localhost:6379, and locking on it
        // would lock on another server than the application's.
        Object used = configuration(lf);
        if (!(used instanceof RedisStandaloneConfiguration conf)) {
            throw new InvalidException("lockbridge: this LettuceConnectionFactory is not on a standalone server, a Sentinel master or a Cluster ("
                    + (used == null ? "its configuration cannot be read" : used.getClass().getSimpleName() + ": a static master/replica configuration is not supported")
                    + "): give io.lockbridge.Redis.of the master's RedisURI");
        }
        RedisURI.Builder b = RedisURI.builder().withHost(conf.getHostName()).withPort(conf.getPort()).withDatabase(conf.getDatabase())
                .withSsl(cc.isUseSsl());
        auth(b, conf.getUsername(), conf.getPassword());
        return Redis.of(b.build(), cc.getClientResources().orElse(null), timeout);
    }

    /**
     * The configuration lf connects with: the object behind its standalone,
     * Sentinel, Cluster or socket getters — or a static master/replica
     * configuration, which has no getter. Spring Data Redis keeps it in a
     * private field (3.5 to 4.1); null when it cannot be read.
     */
    private static Object configuration(LettuceConnectionFactory lf) {
        try {
            java.lang.reflect.Field f = LettuceConnectionFactory.class.getDeclaredField("configuration");
            f.setAccessible(true);
            return f.get(lf);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    private static void auth(RedisURI.Builder b, String username, RedisPassword pw) {
        char[] password = pw.isPresent() ? pw.get() : null;
        if (password != null && username != null) {
            b.withAuthentication(username, password);
        } else if (password != null) {
            b.withPassword(password);
        }
    }
}
