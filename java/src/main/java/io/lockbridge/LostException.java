package io.lockbridge;

/**
 * A held lock was lost: taken, expired without a refresh, ended because its
 * locker moved to a phase that does not exclude it, or an operation on it
 * had an unknown outcome. Delivered by {@link Lock#lost()}, and as the
 * cause of later operations' exceptions. Go: ErrLost.
 */
public class LostException extends LockbridgeException {
    private static final long serialVersionUID = 1L;

    public LostException(String message, Throwable cause) {
        super(message, cause);
    }
}
