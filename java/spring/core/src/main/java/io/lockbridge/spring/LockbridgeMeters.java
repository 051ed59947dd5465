package io.lockbridge.spring;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.lockbridge.MigrateLocker;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;

/**
 * The Micrometer instruments of lockbridge, named and tagged as Go's
 * OpenTelemetry instruments (docs/observability.md), so a Prometheus scrape
 * of a Java service and of a Go service shows one set of series:
 * {@code lockbridge.lock.acquire.duration} (timer, seconds; tags
 * {@code lockbridge.lock.system}, {@code lockbridge.lock.operation},
 * {@code lockbridge.lock.outcome}), {@code lockbridge.lock.wait.duration}
 * (timer; system), {@code lockbridge.lock.contention},
 * {@code lockbridge.lock.refreshes} (system, outcome),
 * {@code lockbridge.lock.lost} (counters; system),
 * {@code lockbridge.lock.fence} (gauge; system),
 * {@code lockbridge.migrate.phase} (gauge, 1 legacy … 4 modern; namespace,
 * client id) and {@code lockbridge.migrate.sightings} (counter; namespace).
 * Lock keys are never tags. Contention, waits, refreshes, losses and
 * sightings are what the locker reports as its
 * {@link io.lockbridge.LockListener}: each attempt that found the lock held,
 * the time a lock() call slept between attempts, the auto-refresher's
 * refreshes, the loss of auto-refreshed and migrate locks, the legacy
 * sightings recorded.
 */
public final class LockbridgeMeters implements LockObserver {
    static final String SYSTEM = "lockbridge.lock.system";
    static final String OPERATION = "lockbridge.lock.operation";
    static final String OUTCOME = "lockbridge.lock.outcome";

    private final MeterRegistry registry;
    private final Map<Tags, Timer> acquire = new ConcurrentHashMap<>();
    private final Map<String, Timer> wait = new ConcurrentHashMap<>();
    private final Map<String, Counter> contention = new ConcurrentHashMap<>();
    private final Map<Tags, Counter> refreshes = new ConcurrentHashMap<>();
    private final Map<String, Counter> lost = new ConcurrentHashMap<>();
    private final Map<String, AtomicLong> fences = new ConcurrentHashMap<>();
    private final Map<String, Counter> sightings = new ConcurrentHashMap<>();

    public LockbridgeMeters(MeterRegistry registry) {
        this.registry = registry;
    }

    /**
     * Registers {@code lockbridge.migrate.phase} for a migrating locker with
     * a namespace: the phase it last read, 1 legacy, 2 dual-write,
     * 3 dual-read, 4 modern (NaN before its first reading).
     */
    public void bindPhase(MigrateLocker locker) {
        MigrateLocker.PhaseLease lease = locker.phaseLease();
        if (lease == null) {
            return;
        }
        Gauge.builder("lockbridge.migrate.phase", locker, migrating -> {
            MigrateLocker.PhaseLease now = migrating.phaseLease();
            return now == null || now.phase() == null ? Double.NaN : now.phase().ordinal() + 1;
        }).description("the phase a migrating client runs: 1 legacy, 2 dual-write, 3 dual-read, 4 modern")
                .baseUnit("{phase}")
                .tags("lockbridge.migrate.namespace", lease.namespace(),
                        "lockbridge.migrate.client.id", lease.clientId())
                .register(registry);
    }

    @Override
    public void acquired(String system, String operation, String outcome, long nanos) {
        Tags tags = Tags.of(SYSTEM, system, OPERATION, operation, OUTCOME, outcome);
        acquire.computeIfAbsent(tags, key -> Timer.builder("lockbridge.lock.acquire.duration")
                .description("how long a tryLock or lock call took, waits included").tags(key).register(registry))
                .record(nanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void waited(String system, long nanos) {
        wait.computeIfAbsent(system, key -> Timer.builder("lockbridge.lock.wait.duration")
                .description("the time one lock call spent waiting between attempts (recorded only for calls"
                        + " that waited)")
                .tags(SYSTEM, key).register(registry)).record(nanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void contended(String system) {
        contention.computeIfAbsent(system, key -> Counter.builder("lockbridge.lock.contention")
                .description("attempts that found the lock held by another: each tryLock not obtained, each failed"
                        + " attempt of lock")
                .baseUnit("{attempt}").tags(SYSTEM, key).register(registry)).increment();
    }

    @Override
    public void refreshed(String system, Refresh outcome) {
        refreshes.computeIfAbsent(Tags.of(SYSTEM, system, OUTCOME, outcome.tag()),
                key -> Counter.builder("lockbridge.lock.refreshes")
                        .description("refreshes the background refresher made").baseUnit("{refresh}").tags(key)
                        .register(registry)).increment();
    }

    @Override
    public void lost(String system) {
        lost.computeIfAbsent(system, key -> Counter.builder("lockbridge.lock.lost")
                .description("locks lost while held: of those an auto-refresh keeps, and every migrate lock (a phase"
                        + " move's end included)")
                .baseUnit("{lock}").tags(SYSTEM, key).register(registry)).increment();
    }

    @Override
    public void sighted(String namespace) {
        sightings.computeIfAbsent(namespace, key -> Counter.builder("lockbridge.migrate.sightings")
                .description("legacy-only holders a migrating client met and recorded in the registry")
                .baseUnit("{sighting}").tags("lockbridge.migrate.namespace", key).register(registry)).increment();
    }

    @Override
    public void fence(String system, long fence) {
        fences.computeIfAbsent(system, key -> {
            AtomicLong lastFence = new AtomicLong();
            Gauge.builder("lockbridge.lock.fence", lastFence, AtomicLong::doubleValue)
                    .description("the last fence handed out to this process")
                    .baseUnit("{fence}").tags(SYSTEM, key).register(registry);
            return lastFence;
        }).set(fence);
    }
}
