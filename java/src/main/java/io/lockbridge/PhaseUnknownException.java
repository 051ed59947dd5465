package io.lockbridge;

/**
 * A following {@link MigrateLocker} cannot trust the phase, so it refuses
 * to lock or refresh (it never falls back to a weaker mode). Go:
 * migrate.ErrPhaseUnknown and migrate.PhaseUnknownError.
 */
public class PhaseUnknownException extends LockbridgeException {
    private static final long serialVersionUID = 1L;

    /** Why, as Go's migrate.PhaseReason. */
    public enum Reason {
        /** No good reading for the phase lease (Redis unreachable, say). */
        LEASE_LAPSED("phase lease lapsed"),
        /** The namespace never had a phase: run lockbridge phase init. */
        UNINITIALIZED("namespace not initialised"),
        /** The phase key is gone though the namespace ran: run lockbridge phase repair. */
        LOST("phase lost"),
        /** The namespace is another instance, or an older generation, than read before. */
        WENT_BACK("namespace state went back"),
        /** The phase key or the namespace hash holds something unreadable. */
        UNREADABLE("phase unreadable");

        private final String text;

        Reason(String text) {
            this.text = text;
        }

        @Override
        public String toString() {
            return text;
        }
    }

    private final String namespace;
    private final Reason reason;
    private final transient Phase last;

    public PhaseUnknownException(String namespace, Reason reason, Phase last, String remedy, Throwable cause) {
        super("migrate: phase unknown: namespace " + namespace + ": " + reason
                + (last == null ? "" : " (last ran " + last + ")")
                + (remedy == null ? "" : "; " + remedy) + (cause == null ? "" : ": " + cause.getMessage()), cause);
        this.namespace = namespace;
        this.reason = reason;
        this.last = last;
    }

    public String namespace() {
        return namespace;
    }

    public Reason reason() {
        return reason;
    }

    /** The phase the locker ran last; null when none. */
    public Phase last() {
        return last;
    }
}
