package io.lockbridge.spring.app3;

import java.time.Duration;

import io.lockbridge.Redis;
import io.lockbridge.shedlock.LockbridgeLockProvider;
import io.lockbridge.spring.Locks;
import io.lockbridge.spring.boot3.LockbridgeLockRegistry;
import io.lockbridge.spring.fleet.Fleet;
import io.lockbridge.spring.fleet.Reports;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.provider.redis.spring.RedisLockProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.integration.support.locks.LockRegistry;
import org.springframework.integration.redis.util.RedisLockRegistry;

/**
 * A Spring Boot 3.5 application on the lockbridge starter: the starter's
 * Locks (lockbridge.* in application.properties), and a Spring Integration
 * 6.5 LockRegistry and a ShedLock LockProvider that replaced
 * RedisLockRegistry and RedisLockProvider by one bean each.
 * {@code app.lock-lease} is the registry's expireAfter (default 60 s, as
 * RedisLockRegistry's).
 */
@SpringBootApplication
public class App {
    public static void main(String[] args) {
        SpringApplication.run(App.class, args);
    }

    /** This release's beans (app.locks=lockbridge, the default). */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(name = "app.locks", havingValue = "lockbridge", matchIfMissing = true)
    static class Lockbridge {
        /** Was: new RedisLockRegistry(connectionFactory, "locks", expireAfter). */
        @Bean
        LockRegistry lockRegistry(Redis redis, @Value("${app.lock-lease:60s}") Duration lease) {
            return new LockbridgeLockRegistry(redis, "locks", lease);
        }

        /** Was: new RedisLockProvider(connectionFactory). */
        @Bean
        LockProvider lockProvider(Redis redis) {
            return new LockbridgeLockProvider(redis);
        }
    }

    /**
     * The previous release's beans (app.locks=framework): the instances not
     * yet redeployed still run them, beside this release's, during the
     * rolling deploy.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(name = "app.locks", havingValue = "framework")
    static class Framework {
        @Bean
        LockRegistry lockRegistry(RedisConnectionFactory factory, @Value("${app.lock-lease:60s}") Duration lease) {
            return new RedisLockRegistry(factory, "locks", lease.toMillis());
        }

        @Bean
        LockProvider lockProvider(RedisConnectionFactory factory) {
            return new RedisLockProvider(factory);
        }
    }

    /** The application's job, locked per report. */
    @Bean
    Reports reports(Locks locks) {
        return new Reports(locks);
    }

    /**
     * The interop fleet's driver (interop/spring_test.go runs this
     * application as a process): only when fleet.guard names the guard's
     * redis-server; fleet.id is this instance's name in the guard.
     */
    @Bean
    @ConditionalOnProperty("fleet.guard")
    ApplicationRunner fleet(Locks locks, LockRegistry registry, LockProvider shedlock, Environment env) {
        return args -> new Fleet(env.getRequiredProperty("fleet.id"), env.getRequiredProperty("fleet.guard"), locks,
                registry::obtain, shedlock, env.getProperty("app.lock-lease", Duration.class, Duration.ofSeconds(60)))
                .start(System.in, env.getRequiredProperty("local.server.port", Integer.class));
    }
}
