package io.lockbridge;

import static org.junit.jupiter.api.Assertions.assertNull;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

/**
 * An acquire whose reply is lost is settled by reading the key back on
 * another connection (ModernLocker, as Go's modern.Locker). The read is
 * conclusive when the key holds our token; when it does not, the acquire may
 * still be on its way to the server on the connection that was given up
 * (closed by the client, its bytes not yet delivered: a retransmission, a
 * proxy), overtaken by the read, and run after it: the caller is told
 * NotObtainedException while a lock with its token, that nobody holds,
 * keeps the key for its whole lease.
 *
 * <p>Disabled: a finding of review rev28, not fixed here (Go's readBack has
 * the same gap, and a sound fix — CLIENT KILL of the given-up connection on
 * the same server before reading, or reporting the negative read as an
 * unknown outcome — belongs in both libraries at once). Enable with the fix.
 */
class ReadBackFaultTest {
    /**
     * A proxy that, once armed, holds the next bytes a client sends for
     * hold ms before it forwards them — also after the client closed its
     * side — and then closes the server side: a command that reaches the
     * server after its client gave up. Other connections pass at once.
     */
    static final class HoldProxy implements AutoCloseable {
        final ServerSocket listener;
        private final int upstream;
        private final long holdMs;
        private final List<Socket> sockets = new CopyOnWriteArrayList<>();
        private volatile boolean armed;

        HoldProxy(int upstreamPort, long holdMs) throws IOException {
            this.upstream = upstreamPort;
            this.holdMs = holdMs;
            listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            Thread t = new Thread(this::accept, "hold-proxy");
            t.setDaemon(true);
            t.start();
        }

        RedisURI uri() {
            return RedisURI.create("127.0.0.1", listener.getLocalPort());
        }

        void holdNext() {
            armed = true;
        }

        private void accept() {
            try {
                while (true) {
                    Socket c = listener.accept();
                    Socket s = new Socket(InetAddress.getLoopbackAddress(), upstream);
                    sockets.add(c);
                    sockets.add(s);
                    pump(c, s, true);
                    pump(s, c, false);
                }
            } catch (IOException e) {
                // closed
            }
        }

        private void pump(Socket from, Socket to, boolean commands) {
            Thread t = new Thread(() -> {
                byte[] buf = new byte[16 * 1024];
                try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                    int n;
                    while ((n = in.read(buf)) >= 0) {
                        if (commands && armed) {
                            armed = false;
                            Thread.sleep(holdMs);
                        }
                        out.write(buf, 0, n);
                        out.flush();
                    }
                } catch (IOException | InterruptedException ignored) {
                    // a side closed
                } finally {
                    quiet(to);
                }
            });
            t.setDaemon(true);
            t.start();
        }

        private static void quiet(Socket s) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing
            }
        }

        @Override
        public void close() throws IOException {
            listener.close();
            sockets.forEach(HoldProxy::quiet);
        }
    }

    @Test
    @Disabled("rev28 finding: a negative read-back after a lost acquire reply is reported as NotObtainedException; see the class comment")
    void faultAcquireOvertakenByItsReadBackIsNotReportedNotObtained() throws Exception {
        try (RedisServer srv = new RedisServer(); HoldProxy px = new HoldProxy(srv.uri().getPort(), 1500);
                Redis r = Redis.of(px.uri(), Duration.ofMillis(300)); ModernLocker m = ModernLocker.builder(r).build()) {
            for (Script s : Scripts.all().values()) {
                srv.raw.scriptLoad(s.source()); // EVALSHA runs at once (a NOSCRIPT reply would make the client send EVAL)
            }
            px.holdNext();
            RuntimeException err = null;
            try {
                m.tryLock("orders", Duration.ofSeconds(30)).unlock();
            } catch (LockbridgeException e) {
                err = e;
            }
            Thread.sleep(2500); // the held acquire reaches the server and runs
            if (err instanceof NotObtainedException) {
                assertNull(srv.get("orders"), "told NotObtainedException, and then the acquire ran: a lock nobody holds, PTTL "
                        + srv.raw.pttl(RedisServer.b("orders")) + " ms");
            }
        }
    }
}
