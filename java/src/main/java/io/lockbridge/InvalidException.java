package io.lockbridge;

/** A bad argument or option, or a connection lockbridge cannot use safely. Go: ErrInvalid. */
public class InvalidException extends LockbridgeException {
    private static final long serialVersionUID = 1L;

    public InvalidException(String message) {
        super(message);
    }
}
