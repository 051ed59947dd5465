package io.lockbridge.spring.app3;

import java.util.function.Consumer;

import io.lockbridge.spring.boot3.LockbridgeAutoConfiguration;
import io.lockbridge.spring.testing.AbstractStarterConfigFaultTest;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The starter refuses a migrating locker with neither namespace nor phase, on
 * Boot 3.5 ({@link AbstractStarterConfigFaultTest}).
 */
class StarterConfigFaultTest extends AbstractStarterConfigFaultTest {
    final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RedisAutoConfiguration.class, LockbridgeAutoConfiguration.class));

    @Override
    protected void run(String[] properties, Consumer<Started> check) {
        runner.withPropertyValues(properties).run(ctx -> check.accept(new Started(ctx.getStartupFailure(), ctx)));
    }
}
