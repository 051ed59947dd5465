package io.lockbridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * No resends, for MigrateLocker in each phase that runs scripts by token:
 * a release or refresh whose reply never comes (the {@link FaultProxy}
 * forwards it, the server runs it, the reply is swallowed) is sent once,
 * counted at the server's door by its script's SHA1, and the call throws
 * {@link UnknownOutcomeException} — never a release, never
 * {@link NotHeldException}. Go's migrate tests (fault_noresend_test.go) show
 * the same.
 */
class NoResendFaultTest extends ServerTest {
    private static Script releaseOf(Phase phase) {
        return phase == Phase.MODERN ? Scripts.MODERN_RELEASE : Scripts.MIGRATE_RELEASE;
    }

    private static Script refreshOf(Phase phase) {
        return phase == Phase.MODERN ? Scripts.MODERN_REFRESH : Scripts.MIGRATE_REFRESH;
    }

    /** Takes, refreshes and releases a lock of its own, so the scripts are loaded (EVALSHA runs them at once). */
    private static void warmUp(MigrateLocker locker) {
        Lock warm = locker.tryLock("warm", Duration.ofSeconds(5));
        warm.refresh(Duration.ofSeconds(5));
        warm.unlock();
    }

    @ParameterizedTest
    @EnumSource(value = Phase.class, names = {"DUAL_WRITE", "DUAL_READ", "MODERN"})
    void faultLostReleaseReplyIsNotResent(Phase phase) throws Exception {
        try (FaultProxy proxy = new FaultProxy(srv.port);
                Redis proxied = Redis.of(proxy.uri(), Duration.ofMillis(500));
                MigrateLocker locker = MigrateLocker.builder(proxied).phase(phase).build()) {
            warmUp(locker);
            Lock lock = locker.tryLock("k", Duration.ofSeconds(10));
            String sha = releaseOf(phase).sha1();
            int before = proxy.sent(sha);
            proxy.dropReplies(true);
            CompletableFuture<Void> unlock = LossSignalFaultTest.async(lock::unlock);
            Throwable thrown = LossSignalFaultTest.failureOf(unlock);
            assertInstanceOf(UnknownOutcomeException.class, thrown, "never a release, never NotHeldException: "
                    + thrown);
            Thread.sleep(300); // a resend would have come by now
            proxy.dropReplies(false);
            assertEquals(before + 1, proxy.sent(sha), "the release was sent once");
            LossSignalFaultTest.assertLostNow(lock);
            assertThrows(NotHeldException.class, lock::unlock, "a second unlock sends nothing");
            assertEquals(before + 1, proxy.sent(sha));
            byte[] modernKey = locker.keys("k").get(1);
            assertEquals(0L, srv.raw.exists(modernKey), "the one release ran");
        }
    }

    @ParameterizedTest
    @EnumSource(value = Phase.class, names = {"DUAL_WRITE", "DUAL_READ", "MODERN"})
    void faultLostRefreshReplyIsNotResent(Phase phase) throws Exception {
        try (FaultProxy proxy = new FaultProxy(srv.port);
                Redis proxied = Redis.of(proxy.uri(), Duration.ofMillis(500));
                MigrateLocker locker = MigrateLocker.builder(proxied).phase(phase).build()) {
            warmUp(locker);
            Lock lock = locker.tryLock("k", Duration.ofSeconds(10));
            String sha = refreshOf(phase).sha1();
            int before = proxy.sent(sha);
            proxy.dropReplies(true);
            CompletableFuture<Void> refresh = LossSignalFaultTest.async(() -> lock.refresh(Duration.ofSeconds(10)));
            Throwable thrown = LossSignalFaultTest.failureOf(refresh);
            assertInstanceOf(UnknownOutcomeException.class, thrown, "never NotHeldException: " + thrown);
            Thread.sleep(300); // a resend would have come by now
            proxy.dropReplies(false);
            assertEquals(before + 1, proxy.sent(sha), "the refresh was sent once");
            assertTrue(lock.done().isDone(), "the lock ends: its refresh's outcome is unknown");
        }
    }
}
