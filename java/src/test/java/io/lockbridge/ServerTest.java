package io.lockbridge;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * A test class on one real redis-server ({@link RedisServer}) with one
 * lockbridge connection to it ({@link #redis}), flushed before each test.
 */
abstract class ServerTest {
    static RedisServer srv;
    static Redis redis;

    @BeforeAll
    static void start() throws Exception {
        srv = new RedisServer();
        redis = srv.redis();
    }

    @AfterAll
    static void stop() {
        redis.close();
        srv.close();
    }

    @BeforeEach
    void flush() {
        srv.raw.flushall();
    }
}
