package io.lockbridge.spring.app3;

import io.lockbridge.Fixtures;
import io.lockbridge.spring.Locks;
import io.lockbridge.spring.testing.StarterScenarios;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The starter on spring.data.redis.sentinel.*: lockbridge locks on the master the Sentinel names. */
@SpringBootTest(properties = {"lockbridge.mode=modern", "lockbridge.modern.fencing=true"})
class SentinelTest {
    static Fixtures.Sentinel s;

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry r) throws Exception {
        s = new Fixtures.Sentinel();
        r.add("spring.data.redis.sentinel.master", () -> Fixtures.Sentinel.MASTER);
        r.add("spring.data.redis.sentinel.nodes", () -> "127.0.0.1:" + s.sentinelPort());
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    @Autowired
    Locks locks;

    @Test
    void locksOnTheMaster() {
        StarterScenarios.locksOnTopology(locks, s::getOnMaster);
    }
}
