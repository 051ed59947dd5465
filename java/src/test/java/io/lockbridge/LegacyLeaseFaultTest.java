package io.lockbridge;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A legacy lock's holder counts its lease as no longer than the legacy
 * value keeps others out: a locker on the same clock (the seed code, or
 * another LegacyLocker) takes over once its now passes the stored expiry W,
 * at W + 1 unit — before now + ttl when the ttl is not a whole number of
 * units (here 1.5 s in seconds without +1, taken at k.95 s: W = k + 1, taken
 * over at k + 2 = 1.05 s later). Before, the holder counted 1.5 s and still
 * held the lock when the rival got it: two holders.
 */
class LegacyLeaseFaultTest extends ServerTest {
    /** The system clock shifted so that it reads k.950 s now. */
    static Clock atPoint95() {
        Instant now = Instant.now();
        Instant target = Instant.ofEpochSecond(now.getEpochSecond() + 10, 950_000_000);
        return Clock.offset(Clock.systemUTC(), Duration.between(now, target));
    }

    static Stream<Arguments> lockers() {
        BiFunction<LegacyProfile, Duration, Lock> legacy = (p, ttl) -> LegacyLocker.builder(redis).profile(p).build()
                .tryLock("lease", ttl);
        BiFunction<LegacyProfile, Duration, Lock> migrate = (p, ttl) -> MigrateLocker.builder(redis).legacy(p)
                .phase(Phase.LEGACY).build() .tryLock("lease", ttl);
        return Stream.of(Arguments.of("LegacyLocker", legacy), Arguments.of("MigrateLocker legacy", migrate));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("lockers")
    void faultLegacyLeaseEndsWhenTheValueCanBeTakenOver(String what,
            BiFunction<LegacyProfile, Duration, Lock> locker) throws Exception {
        LegacyProfile profile = LegacyProfile.defaults().unit(TimeUnit.SECONDS).plusOne(false).clock(atPoint95());
        Lock holder = locker.apply(profile, Duration.ofMillis(1500));
        long expiry = Long.parseLong(srv.get("lease"));
        Lock rival = null;
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (rival == null && System.nanoTime() < end) {
            try {
                rival = LegacyLocker.builder(redis).profile(profile).build().tryLock("lease", Duration.ofSeconds(5));
            } catch (NotObtainedException e) {
                Thread.sleep(5);
            }
        }
        assertNotNull(rival, "taken over once the clock passed W");
        assertFalse(holder.isHeld(), "the holder's lease ended when the rival could take the lock over (W "
                + expiry + ")");
        rival.unlock();
    }
}
