package io.lockbridge.spring.testing;

import io.lockbridge.Fixtures;
import io.lockbridge.spring.Locks;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The starter on spring.data.redis.sentinel.*: lockbridge locks on the
 * master the Sentinel names. Each Boot line's SentinelTest extends it with
 * its {@code @SpringBootTest(properties = {"lockbridge.mode=modern",
 * "lockbridge.modern.fencing=true"})}.
 */
public abstract class AbstractSentinelTest {
    protected static Fixtures.Sentinel sentinel;

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) throws Exception {
        sentinel = new Fixtures.Sentinel();
        registry.add("spring.data.redis.sentinel.master", () -> Fixtures.Sentinel.MASTER);
        registry.add("spring.data.redis.sentinel.nodes", () -> "127.0.0.1:" + sentinel.sentinelPort());
    }

    @AfterAll
    static void stop() {
        sentinel.close();
    }

    @Autowired
    protected Locks locks;

    @Test
    void locksOnTheMaster() {
        StarterScenarios.locksOnTopology(locks, sentinel::getOnMaster);
    }
}
