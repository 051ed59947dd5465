package io.lockbridge;

import java.lang.reflect.Field;
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
 * Jedis factory is refused with an {@link InvalidException}: better no
 * lock than a lock that may be written twice; so are a socket factory and a
 * static master/replica one: better no lock than a lock on a guessed
 * server.
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
     * standalone server, a Sentinel master or a Cluster.
     */
    public static Redis of(RedisConnectionFactory factory) {
        if (factory != null && factory.getClass().getName().contains("Jedis")) {
            throw new InvalidException("lockbridge: a Jedis connection factory cannot be used ("
                    + factory.getClass().getName()
                    + "): lockbridge opens its own Lettuce connections, built never to send a lock write twice, and "
                    + "takes their settings from a LettuceConnectionFactory only (Jedis's cluster client retries a "
                    + "command after a connection error, which may run a lock write twice); use a "
                    + "LettuceConnectionFactory, or io.lockbridge.Redis.of(RedisURI) / Redis.cluster(seeds)");
        }
        if (!(factory instanceof LettuceConnectionFactory lettuce)) {
            throw new InvalidException("lockbridge: only a LettuceConnectionFactory can be used (got "
                    + (factory == null ? "null" : factory.getClass().getName())
                    + "); lockbridge needs connections it can keep from resending lock writes: build "
                    + "io.lockbridge.Redis.of(RedisURI) instead");
        }
        LettuceClientConfiguration clientConf = lettuce.getClientConfiguration();
        Duration timeout = clientConf.getCommandTimeout() == null ? Redis.DEFAULT_TIMEOUT
                : clientConf.getCommandTimeout();
        if (lettuce.getSocketConfiguration() != null) {
            throw new InvalidException("lockbridge: a Unix socket factory is not supported by lockbridge-java; give "
                    + "Redis.of a RedisURI");
        }
        if (lettuce.getClusterConfiguration() != null) {
            RedisClusterConfiguration conf = lettuce.getClusterConfiguration();
            List<RedisURI> seeds = new ArrayList<>();
            for (RedisNode node : conf.getClusterNodes()) {
                RedisURI.Builder seed = RedisURI.builder().withHost(node.getHost()).withPort(node.getPort())
                        .withSsl(clientConf.isUseSsl());
                auth(seed, conf.getUsername(), conf.getPassword());
                seeds.add(seed.build());
            }
            return Redis.cluster(seeds, clientConf.getClientResources().orElse(null), timeout, false);
        }
        if (lettuce.getSentinelConfiguration() != null) {
            RedisSentinelConfiguration conf = lettuce.getSentinelConfiguration();
            if (conf.getSentinels().isEmpty()) {
                throw new InvalidException("lockbridge: the Sentinel configuration names no sentinel");
            }
            // getMaster(), not getRequiredMaster(): the latter is Spring Data Redis 4's only, and Boot 3.5 runs 3.5.
            if (conf.getMaster() == null || conf.getMaster().getName() == null) {
                throw new InvalidException("lockbridge: the Sentinel configuration names no master");
            }
            RedisURI.Builder master = RedisURI.builder().withSentinelMasterId(conf.getMaster().getName());
            for (RedisNode node : conf.getSentinels()) {
                RedisURI.Builder sentinel = RedisURI.builder().withHost(node.getHost()).withPort(node.getPort())
                        .withSsl(clientConf.isUseSsl());
                auth(sentinel, conf.getSentinelUsername(), conf.getSentinelPassword());
                master.withSentinel(sentinel.build());
            }
            master.withDatabase(conf.getDatabase()).withSsl(clientConf.isUseSsl());
            auth(master, conf.getUsername(), conf.getPassword());
            RedisURI masterUri = master.build();
            return Redis.of(masterUri, clientConf.getClientResources().orElse(null), timeout);
        }
        RedisStandaloneConfiguration conf = standalone(lettuce);
        RedisURI.Builder builder = RedisURI.builder().withHost(conf.getHostName()).withPort(conf.getPort())
                .withDatabase(conf.getDatabase()).withSsl(clientConf.isUseSsl());
        auth(builder, conf.getUsername(), conf.getPassword());
        return Redis.of(builder.build(), clientConf.getClientResources().orElse(null), timeout);
    }

    /**
     * The standalone configuration the factory connects with. Its
     * {@code getStandaloneConfiguration()} cannot be trusted for that: a
     * factory built on any other RedisConfiguration (a static
     * master/replica, Boot 4's {@code spring.data.redis.masterreplica.*};
     * or a standalone one given as a RedisConfiguration, as
     * {@code createRedisConfiguration(uri)} returns it) answers its default
     * there, localhost:6379. The configuration it uses has no getter: it is
     * read from the factory's field, and anything but a standalone one —
     * or a field that cannot be read — is refused, never guessed.
     */
    private static RedisStandaloneConfiguration standalone(LettuceConnectionFactory lettuce) {
        Object configured;
        try {
            Field field = LettuceConnectionFactory.class.getDeclaredField("configuration");
            field.setAccessible(true);
            configured = field.get(lettuce);
        } catch (ReflectiveOperationException | RuntimeException e) {
            InvalidException invalid = new InvalidException("lockbridge: cannot tell which Redis this "
                    + "LettuceConnectionFactory connects to (its configuration is not readable: " + e
                    + "); give Redis.of a RedisURI instead");
            invalid.initCause(e);
            throw invalid;
        }
        if (configured instanceof RedisStandaloneConfiguration conf) {
            return conf;
        }
        throw new InvalidException("lockbridge: a LettuceConnectionFactory on a "
                + (configured == null ? "null configuration" : configured.getClass().getSimpleName())
                + " is not supported (standalone, Sentinel and Cluster are): lockbridge must lock on the master, and "
                + "will not guess it; give Redis.of a RedisURI for the master instead");
    }

    private static void auth(RedisURI.Builder builder, String username, RedisPassword redisPassword) {
        char[] password = redisPassword.isPresent() ? redisPassword.get() : null;
        if (password != null && username != null) {
            builder.withAuthentication(username, password);
        } else if (password != null) {
            builder.withPassword(password);
        }
    }
}
