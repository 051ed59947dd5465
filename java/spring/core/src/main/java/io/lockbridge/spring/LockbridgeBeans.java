package io.lockbridge.spring;

import io.lockbridge.Redis;
import io.lockbridge.SpringRedis;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * The beans both Boot lines' auto-configurations make alike (each imports
 * this and adds what its line's API names differently: the health
 * indicator): lockbridge's {@link Redis} from the application's connection
 * factory, the {@link Locks} {@code lockbridge.*} describes, and the
 * Micrometer instruments when the application has a MeterRegistry.
 */
@Configuration(proxyBeanMethods = false)
public class LockbridgeBeans {
    /**
     * lockbridge's own connections to the Redis of the application's connection
     * factory (a Jedis factory is refused).
     */
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
            MeterRegistry meters = registry.getIfAvailable();
            return meters == null ? LockObserver.NONE : new LockbridgeMeters(meters);
        }
    }
}
