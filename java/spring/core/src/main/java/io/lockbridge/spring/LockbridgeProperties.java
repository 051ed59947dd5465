package io.lockbridge.spring;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.lockbridge.KeyCodec;
import io.lockbridge.Phase;
import io.lockbridge.ValueCodec;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code lockbridge.*} properties. Where Redis is comes from
 * {@code spring.data.redis.*}: the starter takes the application's Lettuce
 * connection factory (standalone, Sentinel or Cluster; user, password,
 * database, SSL) and opens lockbridge's own connections to the same Redis,
 * with replay off (lockbridge never sends a lock write twice).
 */
@ConfigurationProperties(prefix = "lockbridge")
public class LockbridgeProperties {
    /** The lock the application takes. */
    public enum Mode {
        /** The legacy SETNX/GETSET lock of the Java services, as they write it (lockbridge.legacy.*). */
        LEGACY,
        /** A migrating lock: the phase of lockbridge.namespace, followed from Redis, or the fixed lockbridge.phase. */
        MIGRATE,
        /** The modern lock (SET NX PX, owner-checked release), as Go's modern.Locker. */
        MODERN
    }

    /** Whether the starter creates lockbridge's beans. */
    private boolean enabled = true;

    /** The lock the application takes: legacy, migrate or modern. */
    private Mode mode = Mode.MIGRATE;

    /**
     * The migration namespace (migrate mode): the locker follows its phase
     * from Redis and heartbeats into its registry, so the controller counts
     * this instance. Without it, a migrating locker runs the fixed
     * lockbridge.phase; with neither, the starter refuses to start.
     */
    private String namespace;

    /**
     * A fixed phase (migrate mode): legacy, dual-write, dual-read or modern.
     * With a namespace too, the locker runs this phase and only heartbeats
     * (the controller still counts it). Default: follow the namespace; a
     * migrating locker with neither refuses to start (no guess).
     */
    private Phase phase;

    /** How often a following locker reads the phase and heartbeats. */
    private Duration phaseInterval = Duration.ofSeconds(2);

    /** How long a phase reading is trusted; default 3 phase intervals. */
    private Duration phaseLease;

    /** The lease of a lock taken without a ttl (Locks.tryLock(name), Locks.lock(name)). */
    private Duration defaultTtl = Duration.ofSeconds(30);

    /** How long Locks.lock(name) waits for the lock. */
    private Duration defaultWait = Duration.ofSeconds(10);

    /** Refresh held locks every ttl/3 until released (the lost-lock signal on Lock.done() either way). */
    private boolean autoRefresh;

    /** The Java services' legacy lock, as they write it. */
    private final Legacy legacy = new Legacy();

    /** The modern lock. */
    private final Modern modern = new Modern();

    /** The legacy lock's wire format: the same options as lockbridge-java's LegacyProfile. */
    public static class Legacy {
        /** The unit of the stored expiry: MILLISECONDS or SECONDS. */
        private TimeUnit unit = TimeUnit.MILLISECONDS;

        /** Whether the stored expiry is now + lease + 1 (the common Java lock) or now + lease. */
        private boolean plusOne = true;

        /** How the Java services encode the key: raw (UTF-8) or jdk-string (a default RedisTemplate). */
        private KeyCodec keyCodec = KeyCodec.RAW;

        /** How the Java services encode the expiry: decimal, jdk-string, jdk-long, json-string or json-number. */
        private ValueCodec valueCodec = ValueCodec.DECIMAL;

        /** Take over a stored expiry only once it is below now minus this margin. */
        private Duration skewMargin = Duration.ZERO;

        /** How far past our expiry the server's clock may be before a release or refresh is refused. */
        private Duration serverClockMargin = Duration.ofSeconds(2);

        public TimeUnit getUnit() {
            return unit;
        }

        public void setUnit(TimeUnit unit) {
            this.unit = unit;
        }

        public boolean isPlusOne() {
            return plusOne;
        }

        public void setPlusOne(boolean plusOne) {
            this.plusOne = plusOne;
        }

        public KeyCodec getKeyCodec() {
            return keyCodec;
        }

        public void setKeyCodec(KeyCodec keyCodec) {
            this.keyCodec = keyCodec;
        }

        public ValueCodec getValueCodec() {
            return valueCodec;
        }

        public void setValueCodec(ValueCodec valueCodec) {
            this.valueCodec = valueCodec;
        }

        public Duration getSkewMargin() {
            return skewMargin;
        }

        public void setSkewMargin(Duration skewMargin) {
            this.skewMargin = skewMargin;
        }

        public Duration getServerClockMargin() {
            return serverClockMargin;
        }

        public void setServerClockMargin(Duration serverClockMargin) {
            this.serverClockMargin = serverClockMargin;
        }
    }

    /** The modern lock's options. */
    public static class Modern {
        /**
         * Whether a lock name is a legacy lock name whose modern key is
         * derived as a migration derives it (the key a fleet that finished
         * its migration keeps), or the Redis key itself.
         */
        private boolean deriveKey = true;

        /** Hand out a fence with every acquire (Lock.fence()). */
        private boolean fencing;

        /** Wake waiters on the key's release notices. */
        private boolean notifications = true;

        public boolean isDeriveKey() {
            return deriveKey;
        }

        public void setDeriveKey(boolean deriveKey) {
            this.deriveKey = deriveKey;
        }

        public boolean isFencing() {
            return fencing;
        }

        public void setFencing(boolean fencing) {
            this.fencing = fencing;
        }

        public boolean isNotifications() {
            return notifications;
        }

        public void setNotifications(boolean notifications) {
            this.notifications = notifications;
        }
    }

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public Mode getMode() {
        return mode;
    }

    public void setMode(Mode mode) {
        this.mode = mode;
    }

    public String getNamespace() {
        return namespace;
    }

    public void setNamespace(String namespace) {
        this.namespace = namespace;
    }

    public Phase getPhase() {
        return phase;
    }

    public void setPhase(Phase phase) {
        this.phase = phase;
    }

    public Duration getPhaseInterval() {
        return phaseInterval;
    }

    public void setPhaseInterval(Duration phaseInterval) {
        this.phaseInterval = phaseInterval;
    }

    public Duration getPhaseLease() {
        return phaseLease;
    }

    public void setPhaseLease(Duration phaseLease) {
        this.phaseLease = phaseLease;
    }

    public Duration getDefaultTtl() {
        return defaultTtl;
    }

    public void setDefaultTtl(Duration defaultTtl) {
        this.defaultTtl = defaultTtl;
    }

    public Duration getDefaultWait() {
        return defaultWait;
    }

    public void setDefaultWait(Duration defaultWait) {
        this.defaultWait = defaultWait;
    }

    public boolean isAutoRefresh() {
        return autoRefresh;
    }

    public void setAutoRefresh(boolean autoRefresh) {
        this.autoRefresh = autoRefresh;
    }

    public Legacy getLegacy() {
        return legacy;
    }

    public Modern getModern() {
        return modern;
    }
}
