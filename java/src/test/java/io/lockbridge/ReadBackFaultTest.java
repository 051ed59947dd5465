package io.lockbridge;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * An acquire whose reply is lost is settled by reading the key back on
 * another connection (ModernLocker, MigrateLocker, as Go's lockers). The
 * read is conclusive when the key holds our token; when it does not, the
 * acquire may still be on its way to the server on the connection that was
 * given up (closed by the client, its bytes not yet delivered: a
 * retransmission, a proxy), overtaken by the read, and run after it. So a
 * negative read settles "not obtained" only after that connection was killed
 * on the server (CLIENT KILL ID, confirmed); without the right to kill it,
 * the outcome stays unknown (docs/safety.md, Rule 2).
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
            Thread thread = new Thread(this::accept, "hold-proxy");
            thread.setDaemon(true);
            thread.start();
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
                    Socket client = listener.accept();
                    Socket server = new Socket(InetAddress.getLoopbackAddress(), upstream);
                    sockets.add(client);
                    sockets.add(server);
                    pump(client, server, true);
                    pump(server, client, false);
                }
            } catch (IOException e) {
                // closed
            }
        }

        private void pump(Socket from, Socket to, boolean commands) {
            Thread thread = new Thread(() -> {
                byte[] buf = new byte[16 * 1024];
                try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                    int count;
                    while ((count = in.read(buf)) >= 0) {
                        if (commands && armed) {
                            armed = false;
                            Thread.sleep(holdMs);
                        }
                        out.write(buf, 0, count);
                        out.flush();
                    }
                } catch (IOException | InterruptedException ignored) {
                    // a side closed
                } finally {
                    quiet(to);
                }
            });
            thread.setDaemon(true);
            thread.start();
        }

        private static void quiet(Socket socket) {
            try {
                socket.close();
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

    /**
     * How the held acquire is sent: the acquire script (a locker's first
     * attempt), or the plain SET NX PX (ModernAcquire, once a script ran)
     * from a ModernLocker and from a MigrateLocker in the modern phase.
     */
    enum Via {
        SCRIPT, SET, MIGRATE_SET
    }

    /**
     * With CLIENT KILL allowed: the given-up connection is killed first, so the
     * read settles it, and the held acquire never runs.
     */
    @ParameterizedTest
    @EnumSource(Via.class)
    void faultAcquireOvertakenByItsReadBackIsKilledFirst(Via via) throws Exception {
        try (RedisServer srv = new RedisServer()) {
            Object err = overtaken(srv, null, via);
            assertInstanceOf(NotObtainedException.class, err, "the connection was killed: a confirmed not-obtained");
            assertNull(srv.get(key(via)), () -> "told NotObtainedException, and then the acquire ran: a lock nobody "
                    + "holds, PTTL " + srv.raw.pttl(RedisServer.b(key(via))) + " ms");
        }
    }

    /**
     * Without the right to kill (an ACL without CLIENT KILL): the outcome stays
     * unknown, naming the token; the late lock ends by its ttl.
     */
    @ParameterizedTest
    @EnumSource(Via.class)
    void faultAcquireOvertakenByItsReadBackWithoutClientKillIsUnknown(Via via) throws Exception {
        try (RedisServer srv = new RedisServer()) {
            srv.raw.aclSetuser("nokill", io.lettuce.core.AclSetuserArgs.Builder.on().addPassword("pw").allKeys()
                    .allChannels().allCommands()
                    .removeCommand(io.lettuce.core.protocol.CommandType.CLIENT,
                    io.lettuce.core.protocol.CommandKeyword.KILL));
            Object err = overtaken(srv, "nokill", via);
            UnknownOutcomeException unknown = assertInstanceOf(UnknownOutcomeException.class, err,
                    "a negative read-back without a kill settles nothing");
            byte[] stored = srv.raw.get(RedisServer.b(key(via)));
            assertNotNull(stored, "the held acquire ran after the read");
            String token = new String(stored, java.nio.charset.StandardCharsets.UTF_8);
            assertTrue(unknown.getMessage().contains(token), () -> "the error names the token " + token + ": "
                    + unknown.getMessage());
            long pttl = srv.raw.pttl(RedisServer.b(key(via)));
            assertTrue(pttl > 0 && pttl <= 30_000, "the late lock ends by its own ttl: PTTL " + pttl);
        }
    }

    private static final String NAME = "orders";

    /** The key the acquire of NAME writes. */
    private static String key(Via via) {
        if (via != Via.MIGRATE_SET) {
            return NAME;
        }
        return new String(Keys.modernKey(LegacyProfile.defaults().encodeKey(NAME)),
                java.nio.charset.StandardCharsets.UTF_8);
    }

    /**
     * A tryLock whose acquire a proxy holds past the 300 ms timeout; what it
     * threw, once the held bytes had time to arrive.
     */
    private static Object overtaken(RedisServer srv, String user, Via via) throws Exception {
        try (HoldProxy proxy = new HoldProxy(srv.uri().getPort(), 1500)) {
            RedisURI uri = user == null ? proxy.uri() : RedisURI.builder(proxy.uri()).withAuthentication(user, "pw")
                    .build();
            try (Redis redis = Redis.of(uri, Duration.ofMillis(300));
                    ModernLocker modern = ModernLocker.builder(redis).build();
                    MigrateLocker migrate = MigrateLocker.builder(redis).phase(Phase.MODERN).build()) {
                for (Script script : Scripts.all().values()) {
                    // EVALSHA runs at once (a NOSCRIPT reply would make the client send EVAL)
                    srv.raw.scriptLoad(script.source());
                }
                if (via == Via.SET) {
                    // a script ran: the next acquire is SET NX PX
                    modern.tryLock("warm-up", Duration.ofSeconds(30)).unlock();
                } else if (via == Via.MIGRATE_SET) {
                    migrate.tryLock("warm-up", Duration.ofSeconds(30)).unlock();
                }
                long sets = sets(srv);
                proxy.holdNext();
                Object err = null;
                try {
                    (via == Via.MIGRATE_SET ? migrate.tryLock(NAME, Duration.ofSeconds(30))
                            : modern.tryLock(NAME, Duration.ofSeconds(30))).unlock();
                } catch (LockbridgeException e) {
                    err = e;
                }
                Thread.sleep(2500); // the held acquire reaches the server (and runs, unless its connection was killed)
                if (via != Via.SCRIPT && user == null) {
                    assertTrue(sets(srv) == sets, "the held SET, its connection killed, never ran");
                } else if (via != Via.SCRIPT) {
                    assertTrue(sets(srv) == sets + 1, "the held acquire was the plain SET NX PX");
                }
                return err;
            }
        }
    }

    /** How many SET commands the server ran. */
    private static long sets(RedisServer srv) {
        String info = srv.raw.info("commandstats");
        java.util.regex.Matcher matcher = java.util.regex.Pattern.compile("cmdstat_set:calls=(\\d+)").matcher(info);
        return matcher.find() ? Long.parseLong(matcher.group(1)) : 0;
    }
}
