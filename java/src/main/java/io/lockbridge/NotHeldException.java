package io.lockbridge;

/**
 * An unlock or refresh found the lock no longer ours. Go: ErrNotHeld and
 * lockbridge.NotHeldError with its Reason.
 */
public class NotHeldException extends LockbridgeException {
    private static final long serialVersionUID = 1L;

    /** Why the lock is not held, as Go's lockbridge.Reason. */
    public enum Reason {
        /** The key is gone (expired, or deleted by someone else). */
        GONE,
        /** The key holds another holder's value. */
        TAKEN,
        /** The lease had ended (by our clock, or the server's beyond the margin). */
        EXPIRED,
        /** The lock had already ended here (released, or lost). */
        ENDED
    }

    private final Reason reason;

    public NotHeldException(String lockName, Reason reason, String detail) {
        super("lockbridge: lock " + Keys.show(lockName) + " not held (" + reason.name().toLowerCase() + "): " + detail);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
