package io.lockbridge;

/**
 * The root of lockbridge-java's exceptions, which mirror the Go package's
 * errors: {@link NotObtainedException} (ErrNotObtained),
 * {@link NotHeldException} (ErrNotHeld, with a reason), {@link LostException}
 * (ErrLost), {@link PhaseUnknownException} (migrate.ErrPhaseUnknown),
 * {@link InvalidException} (ErrInvalid), {@link UnknownOutcomeException}
 * (ErrUnknownOutcome), and for Redis itself {@link RedisErrorException} (an
 * error reply) and {@link RedisUnavailableException} (nothing was sent).
 */
public class LockbridgeException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public LockbridgeException(String message) {
        super(message);
    }

    public LockbridgeException(String message, Throwable cause) {
        super(message, cause);
    }
}
