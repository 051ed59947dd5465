package io.lockbridge.spring.testing;

import org.junit.jupiter.api.Test;

/**
 * Re-entry renews the lease, as RedisLockRegistry's obtain script does
 * (PEXPIRE on a re-entrant tryLock). Without it a holder that keeps
 * re-entering — LockRegistryLeaderInitiator does, every heartbeat — lost
 * the lock after one lease while it still believed it held it, and another
 * instance took it: two leaders. Each Spring Integration line's
 * LockRegistryReentryFaultTest extends it with its registries and its
 * leader election ({@link #elect}).
 */
public abstract class AbstractReentryFaultTest extends AbstractRegistryTest {
    /**
     * A LockRegistryLeaderInitiator for role "leader" on a new lockbridge
     * registry (onLockbridge) or a new RedisLockRegistry, heartbeat 100 ms,
     * busy wait 50 ms, reporting side's grants and revocations to leaders.
     */
    protected abstract RegistryScenarios.Election elect(boolean onLockbridge, int side,
            RegistryScenarios.Leaders leaders);

    @Test
    void testFaultReentryRenewsTheLease() throws Exception {
        RegistryScenarios.reentryRenewsTheLease(srv, newLockbridge(), newFramework(), "reenter-neu");
    }

    @Test
    void redisLockRegistryReentryRenewsTheLease() throws Exception {
        RegistryScenarios.reentryRenewsTheLease(srv, newFramework(), newLockbridge(), "reenter-old");
    }

    @Test
    void testFaultReentryAfterLossIsRefused() throws Exception {
        RegistryScenarios.reentryAfterLossIsRefused(srv, newLockbridge(), newFramework(), "lost-neu");
    }

    @Test
    void redisLockRegistryReentryAfterLossIsRefused() throws Exception {
        RegistryScenarios.reentryAfterLossIsRefused(srv, newFramework(), newLockbridge(), "lost-old");
    }

    @Test
    void testFaultLeaderOnLockbridgeStaysTheOnlyLeader() throws Exception {
        RegistryScenarios.leadersNeverOverlap((side, leaders) -> elect(side == 0, side, leaders));
    }

    @Test
    void leaderOnRedisLockRegistryStaysTheOnlyLeader() throws Exception {
        RegistryScenarios.leadersNeverOverlap((side, leaders) -> elect(side != 0, side, leaders));
    }
}
