package io.lockbridge;

/**
 * A command that may have reached Redis got no reply (a timeout, a
 * connection lost after sending). Whether it ran is unknown, and
 * lockbridge-java never sends it again: a replayed owner-window release
 * could delete a successor's lock. Go: ErrUnknownOutcome.
 */
public class UnknownOutcomeException extends LockbridgeException {
    private static final long serialVersionUID = 1L;

    /**
     * Ends the request's connection on its server, when the request came from
     * one of lockbridge's own; null otherwise.
     */
    transient java.util.function.BooleanSupplier stopper;

    public UnknownOutcomeException(String message, Throwable cause) {
        super(message, cause);
    }

    /**
     * Makes sure the request can no longer run: true only when its
     * connection was killed on the server that it was sent to, and the
     * server confirmed it (CLIENT KILL ID replied 1), or when its reply
     * came and only the server that ran it is not trusted (a master the
     * sentinels replaced). Then a read, on the server that counts, that
     * finds no trace of the request settles it. False (cannot tell: no
     * CLIENT rights, no reply to the kill, a Sentinel master) leaves the
     * outcome unknown.
     */
    boolean stopRequest() {
        java.util.function.BooleanSupplier stop = stopper;
        stopper = null;
        return stop != null && stop.getAsBoolean();
    }
}
