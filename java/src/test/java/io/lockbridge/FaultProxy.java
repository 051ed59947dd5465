package io.lockbridge;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.lettuce.core.RedisURI;

/**
 * A TCP proxy in front of a test's redis-server that can swallow the
 * server's replies: while {@link #dropReplies(boolean)} is on, every command
 * still reaches the server and runs at once, and its reply never comes back
 * — a reply lost on the way with the connection left hanging (what
 * SIGSTOP cannot do: a paused server runs nothing). Go's tests use the same
 * fault through their proxy.
 */
final class FaultProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final int upstream;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean drop;
    private volatile boolean closed;
    private String holdText; // the next command chunk naming it is held (Go: faultproxy.Hold); guarded by commands
    private long holdMillis;
    private final StringBuilder commands = new StringBuilder(); // every command byte sent, as ISO-8859-1 chars

    FaultProxy(int upstreamPort) throws IOException {
        this.upstream = upstreamPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread thread = new Thread(this::accept, "fault-proxy-accept");
        thread.setDaemon(true);
        thread.start();
    }

    RedisURI uri() {
        return RedisURI.create("127.0.0.1", listener.getLocalPort());
    }

    /**
     * How many times text (an ASCII word: a script's SHA1, say) has passed
     * towards the server since the proxy started: the sends of a command
     * that names it, counted at the server's door.
     */
    int sent(String text) {
        synchronized (commands) {
            int count = 0;
            for (int i = commands.indexOf(text); i >= 0; i = commands.indexOf(text, i + text.length())) {
                count++;
            }
            return count;
        }
    }

    /**
     * Holds the next chunk of a command that names text (a script's SHA1,
     * say) for millis before passing it to the server — also when its client
     * gave up and closed the connection meanwhile: a command that reaches the
     * server after its caller's timeout, held in the network. Commands after
     * it on that connection wait behind it; other connections pass at once.
     */
    void hold(String text, long millis) {
        synchronized (commands) {
            holdText = text;
            holdMillis = millis;
        }
    }

    /** The hold for a chunk of commands (0: none), taking the pending one if the chunk names its text. */
    private long held(String chunk) {
        synchronized (commands) {
            if (holdText == null || !chunk.contains(holdText)) {
                return 0;
            }
            holdText = null;
            return holdMillis;
        }
    }

    /** While on, the server's replies are read and thrown away. */
    void dropReplies(boolean enabled) {
        drop = enabled;
    }

    private void accept() {
        while (!closed) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket(InetAddress.getLoopbackAddress(), upstream);
                client.setTcpNoDelay(true);
                server.setTcpNoDelay(true);
                sockets.add(client);
                sockets.add(server);
                pump(client, server, false);
                pump(server, client, true);
            } catch (IOException e) {
                if (closed) {
                    return;
                }
            }
        }
    }

    private void pump(Socket from, Socket to, boolean replies) {
        Thread thread = new Thread(() -> {
            byte[] buf = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int count;
                while ((count = in.read(buf)) >= 0) {
                    if (replies && drop) {
                        continue;
                    }
                    if (!replies) {
                        String chunk = new String(buf, 0, count, java.nio.charset.StandardCharsets.ISO_8859_1);
                        synchronized (commands) {
                            commands.append(chunk);
                        }
                        long hold = held(chunk);
                        if (hold > 0) {
                            try {
                                Thread.sleep(hold);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                                return;
                            }
                        }
                    }
                    out.write(buf, 0, count);
                    out.flush();
                }
            } catch (IOException ignored) {
                // a side closed
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, replies ? "fault-proxy-replies" : "fault-proxy-commands");
        thread.setDaemon(true);
        thread.start();
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            listener.close();
        } catch (IOException ignored) {
            // closing
        }
        sockets.forEach(FaultProxy::closeQuietly);
    }
}
