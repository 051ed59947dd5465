package io.lockbridge;

/**
 * Redis answered with an error reply (a refused argument, WRONGTYPE, …): the
 * command ran, or was refused, and lockbridge's scripts change nothing when
 * they fail.
 */
public class RedisErrorException extends LockbridgeException {
    private static final long serialVersionUID = 1L;

    public RedisErrorException(String message, Throwable cause) {
        super(message, cause);
    }
}
