package io.lockbridge;

/**
 * A command that may have reached Redis got no reply (a timeout, a
 * connection lost after sending). Whether it ran is unknown, and
 * lockbridge-java never sends it again: a replayed owner-window release
 * could delete a successor's lock. Go: ErrUnknownOutcome.
 */
public class UnknownOutcomeException extends LockbridgeException {
    private static final long serialVersionUID = 1L;

    public UnknownOutcomeException(String message, Throwable cause) {
        super(message, cause);
    }
}
