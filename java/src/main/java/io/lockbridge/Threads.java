package io.lockbridge;

import java.util.concurrent.ThreadFactory;

final class Threads {
    private Threads() {}

    /** A thread of lockbridge's own (a watchdog, the lease timer, a follower's loop). */
    static final class Own extends Thread {
        Own(Runnable task, String name) {
            super(task, name);
            setDaemon(true);
        }
    }

    /** Daemon threads named name: a locker never keeps a JVM alive. */
    static ThreadFactory daemon(String name) {
        return r -> new Own(r, name);
    }

    /** Whether the caller runs on one of lockbridge's own threads (where no caller's callback may run). */
    static boolean own() {
        return Thread.currentThread() instanceof Own;
    }
}
