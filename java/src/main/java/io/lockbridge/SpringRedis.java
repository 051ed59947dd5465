package io.lockbridge;

import java.time.Duration;

import io.lettuce.core.RedisURI;
import org.springframework.data.redis.connection.RedisConnectionFactory;
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
 * server (host, port, database, user, password, TLS, and the factory's
 * ClientResources), with replay off. A factory whose server it cannot read
 * (Jedis, Sentinel, Cluster, a socket) is refused with an
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

    /** Redis for the server of factory, a LettuceConnectionFactory on a standalone server. */
    public static Redis of(RedisConnectionFactory factory) {
        if (!(factory instanceof LettuceConnectionFactory lf)) {
            throw new InvalidException("lockbridge: only a LettuceConnectionFactory can be used (got "
                    + (factory == null ? "null" : factory.getClass().getName())
                    + "); lockbridge needs connections it can keep from resending lock writes: build io.lockbridge.Redis.of(RedisURI) instead");
        }
        if (lf.getClusterConfiguration() != null || lf.getSentinelConfiguration() != null || lf.getSocketConfiguration() != null) {
            throw new InvalidException("lockbridge: Redis Cluster, Sentinel and socket factories are not supported by lockbridge-java yet");
        }
        RedisStandaloneConfiguration conf = lf.getStandaloneConfiguration();
        LettuceClientConfiguration cc = lf.getClientConfiguration();
        RedisURI.Builder b = RedisURI.builder().withHost(conf.getHostName()).withPort(conf.getPort()).withDatabase(conf.getDatabase())
                .withSsl(cc.isUseSsl());
        char[] password = conf.getPassword().isPresent() ? conf.getPassword().get() : null;
        if (password != null && conf.getUsername() != null) {
            b.withAuthentication(conf.getUsername(), password);
        } else if (password != null) {
            b.withPassword(password);
        }
        Duration timeout = cc.getCommandTimeout() == null ? Redis.DEFAULT_TIMEOUT : cc.getCommandTimeout();
        return Redis.of(b.build(), cc.getClientResources().orElse(null), timeout);
    }
}
