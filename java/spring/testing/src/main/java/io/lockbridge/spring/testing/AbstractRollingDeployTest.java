package io.lockbridge.spring.testing;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Mid-deploy: instances still on RedisLockRegistry and instances on
 * lockbridge's LockRegistry exclude each other and share the semantics
 * ({@link RegistryScenarios}). Each Spring Integration line's
 * LockRegistryRollingDeployTest extends it with its two registries.
 */
public abstract class AbstractRollingDeployTest extends AbstractRegistryTest {
    private Registry old;
    private Registry neu;

    @BeforeAll
    void registries() {
        old = framework(factory);
        neu = lockbridge(redis);
    }

    @AfterAll
    void destroyRegistries() {
        neu.destroy().run();
        old.destroy().run();
    }

    @Test
    void sameKeyEachRefusesTheOther() throws Exception {
        RegistryScenarios.sameKeyEachRefusesTheOther(srv, old.obtain(), neu.obtain());
    }

    @Test
    void lockbridgeKeepsRedisLockRegistrysSemantics() throws Exception {
        RegistryScenarios.semantics(srv, neu.obtain(), newFramework(), "sem-neu");
    }

    @Test
    void redisLockRegistryHasTheSameSemantics() throws Exception {
        RegistryScenarios.semantics(srv, old.obtain(), newLockbridge(), "sem-old");
    }

    @Test
    void neverOverlap() throws Exception {
        RegistryScenarios.neverOverlap(old.obtain(), neu.obtain());
    }

    @Test
    void crashTakeoversBothWays() throws Exception {
        RegistryScenarios.crashTakeoversBothWays(newFramework(), newLockbridge());
    }
}
