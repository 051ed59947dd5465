package io.lockbridge;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.function.Function;
import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A ttl with a fraction of a millisecond (1.999 ms): PX takes whole
 * milliseconds, so the server keeps the key 1 ms, while a holder that
 * counted the whole 1.999 ms had its give-up point (ttl/12 before that end)
 * some 0.8 ms after the key could expire. A second locker polls the key
 * until it gets it; the moment its reply is back, the first holder's lease
 * must have passed its give-up point (where done() completes), else both
 * held the lock at once. The point is read from the lease itself
 * ({@link AbstractLock#left()}), so a late timer thread decides nothing.
 * For the acquire and for a refresh to that ttl (a round whose refresh
 * came back after its own give-up point is over, and skipped); ModernLocker,
 * which takes whole milliseconds, is the control.
 */
class SubMillisecondTtlFaultTest extends ServerTest {
    static final Duration TTL = Duration.ofNanos(1_999_000);
    static final int ROUNDS = 40;

    static Stream<Arguments> lockers() {
        return Stream.of(
                Arguments.of("MigrateLocker modern", phase(Phase.MODERN), false),
                Arguments.of("MigrateLocker modern, refresh", phase(Phase.MODERN), true),
                Arguments.of("MigrateLocker dual-read", phase(Phase.DUAL_READ), false),
                Arguments.of("MigrateLocker dual-read, refresh", phase(Phase.DUAL_READ), true),
                Arguments.of("ModernLocker", (Function<Duration, Function<String, Lock>>) ttl -> {
                    ModernLocker l = ModernLocker.builder(redis).build();
                    return name -> l.tryLock(name, ttl);
                }, false),
                Arguments.of("ModernLocker, refresh", (Function<Duration, Function<String, Lock>>) ttl -> {
                    ModernLocker l = ModernLocker.builder(redis).build();
                    return name -> l.tryLock(name, ttl);
                }, true));
    }

    static Function<Duration, Function<String, Lock>> phase(Phase p) {
        return ttl -> {
            MigrateLocker l = MigrateLocker.builder(redis).phase(p).build();
            return name -> l.tryLock(name, ttl);
        };
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("lockers")
    void faultSubMillisecondTtlOutlivesPx(String what, Function<Duration, Function<String, Lock>> locker,
            boolean refresh) {
        Function<String, Lock> first = locker.apply(refresh ? Duration.ofSeconds(1) : TTL);
        Function<String, Lock> second = locker.apply(Duration.ofSeconds(1));
        int overlaps = 0;
        Duration worst = Duration.ZERO;
        for (int i = 0; i < ROUNDS; i++) {
            String name = "sub-ms-" + i;
            AbstractLock a = (AbstractLock) first.apply(name);
            if (refresh) {
                try {
                    a.refresh(TTL);
                } catch (NotHeldException e) {
                    // its reply came after the new give-up point (a cold
                    // JIT, a loaded host): the lock is over, nothing to judge
                    assertEquals(NotHeldException.Reason.ENDED, e.reason(), what);
                    continue;
                }
            }
            Lock b = null;
            while (b == null) {
                try {
                    b = second.apply(name);
                } catch (NotObtainedException e) {
                    // held: poll again
                }
            }
            Duration beforeGiveUp = a.left().minus(TTL.dividedBy(12));
            if (!beforeGiveUp.isNegative() && !beforeGiveUp.isZero()) {
                overlaps++;
                worst = beforeGiveUp.compareTo(worst) > 0 ? beforeGiveUp : worst;
            }
            b.unlock();
        }
        assertEquals(0, overlaps, what + ": in " + overlaps + " of " + ROUNDS
                + " rounds the second locker got the lock while the first one's lease still ran (by up to " + worst
                + " before its give-up point): the local lease counted the fraction of a millisecond that PX drops");
    }
}
