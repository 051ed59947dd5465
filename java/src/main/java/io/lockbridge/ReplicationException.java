package io.lockbridge;

/**
 * An acquire of a {@link ModernLocker} with
 * {@link ModernLocker.Builder#waitForReplicas} ran on the master, but fewer
 * replicas than asked acknowledged it within the timeout (or WAIT got no
 * reply): the lock is not reported held. It was released at once
 * (owner-checked; {@link #released()} says whether that release was
 * confirmed; if not, the key expires by its lease). lock() throws it
 * without waiting for another attempt. Go: {@code modern.ReplicationError}.
 */
public class ReplicationException extends LockbridgeException {
    private static final long serialVersionUID = 1L;
    private final int want;
    private final long acked;
    private final boolean released;

    ReplicationException(String name, int want, long acked, boolean released, Throwable cause) {
        super("lockbridge: lock " + Keys.show(name) + ": " + acked + " of the " + want
                + " replicas asked for acknowledged the acquire"
                + (cause == null ? "" : " (WAIT: " + cause.getMessage() + ")") + "; "
                + (released ? "released" : "the release was not confirmed: it expires by its lease"), cause);
        this.want = want;
        this.acked = acked;
        this.released = released;
    }

    /** The replicas asked for. */
    public int want() {
        return want;
    }

    /** How many acknowledged (0 when WAIT failed). */
    public long acked() {
        return acked;
    }

    /** Whether the acquire was confirmed released. */
    public boolean released() {
        return released;
    }
}
