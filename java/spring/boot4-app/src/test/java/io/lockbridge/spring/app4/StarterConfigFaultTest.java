package io.lockbridge.spring.app4;

import java.util.function.Consumer;

import io.lockbridge.spring.boot4.LockbridgeAutoConfiguration;
import io.lockbridge.spring.testing.AbstractStarterConfigFaultTest;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The starter refuses a migrating locker with neither namespace nor phase, on
 * Boot 4.0 ({@link AbstractStarterConfigFaultTest}).
 */
class StarterConfigFaultTest extends AbstractStarterConfigFaultTest {
    final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(
                    AutoConfigurations.of(DataRedisAutoConfiguration.class, LockbridgeAutoConfiguration.class));

    @Override
    protected void run(String[] properties, Consumer<Started> check) {
        runner.withPropertyValues(properties).run(ctx -> check.accept(new Started(ctx.getStartupFailure(), ctx)));
    }
}
