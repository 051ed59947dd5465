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

/** The starter on spring.data.redis.cluster.nodes: lockbridge locks on the master that owns the key's slot. */
@SpringBootTest(properties = {"lockbridge.mode=modern", "lockbridge.modern.fencing=true"})
class ClusterTest {
    static Fixtures.Cluster c;

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry r) throws Exception {
        c = new Fixtures.Cluster();
        r.add("spring.data.redis.cluster.nodes", () -> String.join(",", c.nodes()));
    }

    @AfterAll
    static void stop() {
        c.close();
    }

    @Autowired
    Locks locks;

    @Test
    void locksOnTheSlotOwner() {
        StarterScenarios.locksOnTopology(locks, c::get);
    }
}
