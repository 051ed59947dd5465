package io.lockbridge;

import static io.lockbridge.RedisServer.b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A stored legacy expiry far in the future (another client's, or written by
 * hand) is a live lock held for a very long time: a NotObtainedException,
 * the stored value untouched. Before, a value in seconds beyond
 * java.time.Instant's range (about 3.2e16 s) made the attempt throw an
 * untyped DateTimeException while computing the holder's time left.
 */
class FarValueFaultTest extends ServerTest {
    static Stream<Arguments> cases() {
        Stream.Builder<Arguments> cases = Stream.builder();
        for (String value : new String[] {"31556889864403200", "99999999999999999", "4611686018427387904",
                "9223372036854775806", "9223372036854775807"}) {
            for (TimeUnit unit : new TimeUnit[] {TimeUnit.SECONDS, TimeUnit.MILLISECONDS}) {
                cases.add(Arguments.of(value, unit, null));
                cases.add(Arguments.of(value, unit, Phase.DUAL_WRITE));
                cases.add(Arguments.of(value, unit, Phase.DUAL_READ));
            }
        }
        return cases.build();
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @MethodSource("cases")
    void faultFarLegacyValueIsHeld(String value, TimeUnit unit, Phase phase) {
        srv.raw.set(b("far"), b(value));
        LegacyProfile prof = LegacyProfile.defaults().unit(unit);
        NotObtainedException notObtained;
        if (phase == null) {
            try (LegacyLocker locker = LegacyLocker.builder(redis).profile(prof).build()) {
                notObtained = assertThrows(NotObtainedException.class,
                        () -> locker.tryLock("far", Duration.ofSeconds(5)));
            }
        } else {
            try (MigrateLocker locker = MigrateLocker.builder(redis).legacy(prof).phase(phase).build()) {
                notObtained = assertThrows(NotObtainedException.class,
                        () -> locker.tryLock("far", Duration.ofSeconds(5)));
            }
        }
        assertTrue(notObtained.holderLeft().compareTo(Duration.ofDays(365)) > 0,
                "held for long: " + notObtained.holderLeft());
        assertEquals(value, srv.get("far"), "the stored value untouched");
        assertEquals(0, srv.raw.exists(b("{far}:modern")));
    }
}
