package io.lockbridge.spring.testing;

import io.lockbridge.Fixtures;
import io.lockbridge.spring.Locks;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The starter on spring.data.redis.cluster.nodes: lockbridge locks on the
 * master that owns the key's slot. Each Boot line's ClusterTest extends it
 * with its {@code @SpringBootTest(properties = {"lockbridge.mode=modern",
 * "lockbridge.modern.fencing=true"})}.
 */
public abstract class AbstractClusterTest {
    protected static Fixtures.Cluster cluster;

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) throws Exception {
        cluster = new Fixtures.Cluster();
        registry.add("spring.data.redis.cluster.nodes", () -> String.join(",", cluster.nodes()));
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    @Autowired
    protected Locks locks;

    @Test
    void locksOnTheSlotOwner() {
        StarterScenarios.locksOnTopology(locks, cluster::get);
    }
}
