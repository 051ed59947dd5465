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

    /** Redis for the Redis of factory, a LettuceConnectionFactory on a standalone server, a Sentinel master or a Cluster. */
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
        RedisStandaloneConfiguration conf = standalone(lf);
        RedisURI.Builder b = RedisURI.builder().withHost(conf.getHostName()).withPort(conf.getPort()).withDatabase(conf.getDatabase())
                .withSsl(cc.isUseSsl());
        auth(b, conf.getUsername(), conf.getPassword());
        return Redis.of(b.build(), cc.getClientResources().orElse(null), timeout);
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
    private static RedisStandaloneConfiguration standalone(LettuceConnectionFactory lf) {
        Object c;
        try {
            Field f = LettuceConnectionFactory.class.getDeclaredField("configuration");
            f.setAccessible(true);
            c = f.get(lf);
        } catch (ReflectiveOperationException | RuntimeException e) {
            InvalidException x = new InvalidException("lockbridge: cannot tell which Redis this LettuceConnectionFactory connects to (its"
                    + " configuration is not readable: " + e + "); give Redis.of a RedisURI instead");
            x.initCause(e);
            throw x;
        }
        if (c instanceof RedisStandaloneConfiguration conf) {
            return conf;
        }
        throw new InvalidException("lockbridge: a LettuceConnectionFactory on a " + (c == null ? "null configuration" : c.getClass().getSimpleName())
                + " is not supported (standalone, Sentinel and Cluster are): lockbridge must lock on the master, and will not guess it;"
                + " give Redis.of a RedisURI for the master instead");
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
