package io.lockbridge.spring.boot3;

import io.lockbridge.Redis;
import io.lockbridge.spring.LockbridgeBeans;
import io.lockbridge.spring.LockbridgeProperties;
import io.lockbridge.spring.Locks;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.info.InfoContributor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * lockbridge on Spring Boot 3.5: a {@link Redis} from the application's
 * Lettuce connection factory ({@code spring.data.redis.*}), the
 * {@link Locks} {@code lockbridge.*} describes, and — when the application
 * has them — the Micrometer instruments (named as Go's OpenTelemetry ones),
 * the {@code lockbridge} health indicator (the phase followed, the phase
 * lease, the locks held) and the {@code lockbridge} info entry.
 */
@AutoConfiguration(after = RedisAutoConfiguration.class)
@ConditionalOnClass({Redis.class, RedisConnectionFactory.class})
@ConditionalOnBean(RedisConnectionFactory.class)
@ConditionalOnProperty(prefix = "lockbridge", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(LockbridgeProperties.class)
@Import(LockbridgeBeans.class)
public class LockbridgeAutoConfiguration {
    /** The lockbridge health indicator and info entry. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(HealthIndicator.class)
    static class Actuator {
        @Bean
        @ConditionalOnEnabledHealthIndicator("lockbridge")
        @ConditionalOnMissingBean(name = "lockbridgeHealthIndicator")
        HealthIndicator lockbridgeHealthIndicator(Locks locks) {
            return () -> {
                Locks.Status status = locks.status();
                return (status.up() ? Health.up() : Health.down()).withDetails(status.details()).build();
            };
        }

        @Bean
        @ConditionalOnMissingBean(name = "lockbridgeInfoContributor")
        InfoContributor lockbridgeInfoContributor(Locks locks) {
            return b -> b.withDetail("lockbridge", locks.info());
        }
    }
}
