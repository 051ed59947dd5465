package io.lockbridge.spring.app4;

import java.util.concurrent.locks.Lock;
import java.util.function.Function;

import io.lockbridge.Fixtures;
import io.lockbridge.Redis;
import io.lockbridge.spring.boot4.LockbridgeLockRegistry;
import io.lockbridge.spring.testing.RegistryScenarios;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.redis.util.RedisLockRegistry;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * Re-entry renews the lease, as RedisLockRegistry's obtain script does
 * (PEXPIRE on a re-entrant tryLock), on Spring Integration 7.0. Without
 * it a holder that keeps re-entering — LockRegistryLeaderInitiator does,
 * every heartbeat — lost the lock after one lease while it still believed
 * it held it, and another instance took it: two leaders.
 */
class LockRegistryReentryFaultTest {
    static Fixtures.Standalone srv;
    static LettuceConnectionFactory factory;
    static Redis redis;

    @BeforeAll
    static void start() throws Exception {
        srv = new Fixtures.Standalone();
        factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", srv.port()));
        factory.afterPropertiesSet();
        factory.start();
        redis = srv.redis();
    }

    @AfterAll
    static void stop() {
        redis.close();
        factory.destroy();
        srv.close();
    }

    static final Function<String, Lock> OLD = k -> new RedisLockRegistry(factory, "locks", RegistryScenarios.EXPIRE.toMillis()).obtain(k);
    static final Function<String, Lock> NEU = k -> new LockbridgeLockRegistry(redis, "locks", RegistryScenarios.EXPIRE).obtain(k);

    @Test
    void testFaultReentryRenewsTheLease() throws Exception {
        RegistryScenarios.reentryRenewsTheLease(srv, NEU, OLD, "reenter-neu");
    }

    @Test
    void redisLockRegistryReentryRenewsTheLease() throws Exception {
        RegistryScenarios.reentryRenewsTheLease(srv, OLD, NEU, "reenter-old");
    }

    @Test
    void testFaultReentryAfterLossIsRefused() throws Exception {
        RegistryScenarios.reentryAfterLossIsRefused(srv, NEU, OLD, "lost-neu");
    }

    @Test
    void redisLockRegistryReentryAfterLossIsRefused() throws Exception {
        RegistryScenarios.reentryAfterLossIsRefused(srv, OLD, NEU, "lost-old");
    }

    @Test
    void testFaultLeaderOnLockbridgeStaysTheOnlyLeader() throws Exception {
        RegistryScenarios.leadersNeverOverlap((side, leaders) -> elect(side == 0 ? neu() : old(), side, leaders));
    }

    @Test
    void leaderOnRedisLockRegistryStaysTheOnlyLeader() throws Exception {
        RegistryScenarios.leadersNeverOverlap((side, leaders) -> elect(side == 0 ? old() : neu(), side, leaders));
    }

    static LockRegistry<?> neu() {
        return new LockbridgeLockRegistry(redis, "locks", RegistryScenarios.EXPIRE);
    }

    static LockRegistry<?> old() {
        return new RedisLockRegistry(factory, "locks", RegistryScenarios.EXPIRE.toMillis());
    }

    /** A LockRegistryLeaderInitiator for role "leader" on reg, heartbeat 100 ms, reporting side's grants and revocations. */
    static RegistryScenarios.Election elect(LockRegistry<?> reg, int side, RegistryScenarios.Leaders leaders) {
        DefaultCandidate c = new DefaultCandidate("side-" + side, "leader") {
            @Override
            public void onGranted(Context ctx) {
                leaders.granted(side);
            }

            @Override
            public void onRevoked(Context ctx) {
                leaders.revoked(side);
            }
        };
        LockRegistryLeaderInitiator init = new LockRegistryLeaderInitiator(reg, c);
        init.setHeartBeatMillis(100);
        init.setBusyWaitMillis(50);
        init.start();
        return () -> {
            init.stop();
            try {
                init.destroy();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        };
    }
}
