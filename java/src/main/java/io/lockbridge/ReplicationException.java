package io.lockbridge;

/**
 * A write of a {@link ModernLocker} with
 * {@link ModernLocker.Builder#waitForReplicas} ran on the master, but fewer
 * replicas than asked acknowledged it within the timeout (or WAIT got no
 * reply). Go: {@code modern.ReplicationError}.
 *
 * <p>From an acquire: the lock is not reported held. It was released at
 * once (owner-checked; {@link #released()} says whether that release was
 * confirmed; if not, the key expires by its lease). lock() throws it
 * without waiting for another attempt.
 *
 * <p>From a refresh ({@link Lock#refresh}, or the auto-refresh, which
 * tries again until the lease's give-up point): the refresh is not
 * counted. The lock is still held, but its lease keeps the end it had
 * (shortened, for a shorter ttl), for a failover to a replica that missed
 * the refresh would keep the key with its earlier expiry; {@link #released()}
 * is false.
 */
public class ReplicationException extends LockbridgeException {
    private static final long serialVersionUID = 1L;
    private final int want;
    private final long acked;
    private final boolean released;

    /** An acquire's. */
    ReplicationException(String name, int want, long acked, boolean released, Throwable cause) {
        this("lockbridge: lock " + Keys.show(name) + ": " + acked + " of the " + want
                + " replicas asked for acknowledged the acquire" + waitError(cause) + "; "
                + (released ? "released" : "the release was not confirmed: it expires by its lease"),
                cause, want, acked, released);
    }

    /** A refresh's: not counted. */
    ReplicationException(String name, int want, long acked, Throwable cause) {
        this("lockbridge: lock " + Keys.show(name) + ": refresh not counted: " + acked + " of the " + want
                + " replicas asked for acknowledged it" + waitError(cause) + "; the lease keeps its end",
                cause, want, acked, false);
    }

    private ReplicationException(String message, Throwable cause, int want, long acked, boolean released) {
        super(message, cause);
        this.want = want;
        this.acked = acked;
        this.released = released;
    }

    private static String waitError(Throwable cause) {
        return cause == null ? "" : " (WAIT: " + cause.getMessage() + ")";
    }

    /** The replicas asked for. */
    public int want() {
        return want;
    }

    /** How many acknowledged (0 when WAIT failed). */
    public long acked() {
        return acked;
    }

    /** Whether the acquire was confirmed released (false for a refresh's: the lock is still held). */
    public boolean released() {
        return released;
    }
}
