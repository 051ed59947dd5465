package io.lockbridge.spring.app4;

import io.lockbridge.Redis;
import io.lockbridge.spring.boot4.LockbridgeLockRegistry;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * A Spring Boot 4.0 application on the lockbridge starter: the starter's
 * Locks (lockbridge.* in application.properties) and a Spring Integration
 * LockRegistry that replaced a RedisLockRegistry by one bean.
 */
@SpringBootApplication
public class App {
    public static void main(String[] args) {
        SpringApplication.run(App.class, args);
    }

    /** Was: new RedisLockRegistry(connectionFactory, "locks"). */
    @Bean
    LockRegistry<DistributedLock> lockRegistry(Redis redis) {
        return new LockbridgeLockRegistry(redis, "locks");
    }
}
