package io.lockbridge.spring.boot4;

import io.lockbridge.Redis;
import io.lockbridge.SpringRedis;
import io.lockbridge.spring.LockObserver;
import io.lockbridge.spring.LockbridgeMeters;
import io.lockbridge.spring.LockbridgeProperties;
import io.lockbridge.spring.Locks;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.actuate.info.InfoContributor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * lockbridge on Spring Boot 4.0: a {@link Redis} from the application's
 * Lettuce connection factory ({@code spring.data.redis.*}), the
 * {@link Locks} {@code lockbridge.*} describes, and — when the application
 * has them — the Micrometer instruments (named as Go's OpenTelemetry ones),
 * the {@code lockbridge} health indicator (the phase followed, the phase
 * lease, the locks held) and the {@code lockbridge} info entry.
 */
@AutoConfiguration(after = DataRedisAutoConfiguration.class)
@ConditionalOnClass({Redis.class, RedisConnectionFactory.class})
@ConditionalOnBean(RedisConnectionFactory.class)
@ConditionalOnProperty(prefix = "lockbridge", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(LockbridgeProperties.class)
public class LockbridgeAutoConfiguration {
    /** lockbridge's own connections to the Redis of the application's connection factory (a Jedis factory is refused). */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public Redis lockbridgeRedis(RedisConnectionFactory factory) {
        return SpringRedis.of(factory);
    }

    /** The locker of lockbridge.mode; a following locker reads its phase and starts heartbeating at once. */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public Locks lockbridgeLocks(Redis redis, LockbridgeProperties properties, ObjectProvider<LockObserver> observer) {
        return Locks.bean(redis, properties, observer.getIfAvailable(() -> LockObserver.NONE));
    }

    /**
     * The instruments, on the application's MeterRegistry when it has one
     * (looked up when the bean is made, not by a condition: the metrics
     * auto-configuration may be processed after this one).
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    static class Metrics {
        @Bean
        @ConditionalOnMissingBean(LockObserver.class)
        LockObserver lockbridgeMeters(ObjectProvider<MeterRegistry> registry) {
            MeterRegistry r = registry.getIfAvailable();
            return r == null ? LockObserver.NONE : new LockbridgeMeters(r);
        }
    }

    /** The lockbridge health indicator and info entry. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(HealthIndicator.class)
    static class Actuator {
        @Bean
        @ConditionalOnEnabledHealthIndicator("lockbridge")
        @ConditionalOnMissingBean(name = "lockbridgeHealthIndicator")
        HealthIndicator lockbridgeHealthIndicator(Locks locks) {
            return () -> {
                Locks.Status s = locks.status();
                return (s.up() ? Health.up() : Health.down()).withDetails(s.details()).build();
            };
        }

        @Bean
        @ConditionalOnMissingBean(name = "lockbridgeInfoContributor")
        InfoContributor lockbridgeInfoContributor(Locks locks) {
            return b -> b.withDetail("lockbridge", locks.info());
        }
    }
}
