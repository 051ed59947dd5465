package io.lockbridge;

import java.util.concurrent.ThreadFactory;

final class Threads {
    private Threads() {}

    /** Daemon threads named name: a locker never keeps a JVM alive. */
    static ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }
}
