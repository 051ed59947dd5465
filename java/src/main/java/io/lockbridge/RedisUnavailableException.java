package io.lockbridge;

/** Redis could not be reached: the command was not sent, so nothing changed. */
public class RedisUnavailableException extends LockbridgeException {
    private static final long serialVersionUID = 1L;

    public RedisUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
