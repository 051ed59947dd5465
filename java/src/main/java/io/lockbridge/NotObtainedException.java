package io.lockbridge;

import java.time.Duration;

/** The lock is held by another holder (or the wait ended first). Go: ErrNotObtained. */
public class NotObtainedException extends LockbridgeException {
    private static final long serialVersionUID = 1L;
    private final transient Duration holderLeft;

    public NotObtainedException(String message, Duration holderLeft) {
        super(message);
        this.holderLeft = holderLeft;
    }

    public NotObtainedException(String message, Duration holderLeft, Throwable cause) {
        super(message, cause);
        this.holderLeft = holderLeft;
    }

    /** How long the holder has left when the attempt learnt it; zero when unknown. */
    public Duration holderLeft() {
        return holderLeft == null ? Duration.ZERO : holderLeft;
    }
}
