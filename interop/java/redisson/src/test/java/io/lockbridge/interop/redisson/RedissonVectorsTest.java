package io.lockbridge.interop.redisson;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import java.util.regex.Pattern;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import org.junit.jupiter.api.Test;
import org.redisson.RedissonObject;
import org.redisson.config.Config;
import org.redisson.pubsub.LockPubSub;

/**
 * The golden vectors of testdata/vectors/redisson.json, checked against
 * Redisson itself (the version this module is built with): the names it
 * derives from a lock name, its unlock message, its watchdog and fair-wait
 * defaults. (lockbridge's scripts are its own text: the Go interop tests show
 * by behaviour, on live servers, that they act on the same data as
 * Redisson's.)
 */
class RedissonVectorsTest {
    static final Path REPO = Path.of(System.getProperty("lockbridge.repo", "../../.."));

    static JsonObject vectors() throws Exception {
        return JsonParser.parseString(Files.readString(REPO.resolve("testdata/vectors/redisson.json"))).getAsJsonObject();
    }

    @Test
    void namesAreRedissons() throws Exception {
        int n = 0;
        for (JsonElement e : vectors().getAsJsonArray("names")) {
            JsonObject v = e.getAsJsonObject();
            String name = v.get("name").getAsString();
            assertEquals(v.get("channel").getAsString(), RedissonObject.prefixName("redisson_lock__channel", name), "channel of " + name);
            assertEquals(v.get("latch_prefix").getAsString(), RedissonObject.prefixName("redisson_unlock_latch", name) + ":", "latch of " + name);
            assertEquals(v.get("key").getAsString(), name, "the key is the name");
            assertEquals(v.get("fair_queue").getAsString(), RedissonObject.prefixName("redisson_lock_queue", name), "fair queue of " + name);
            assertEquals(v.get("fair_timeouts").getAsString(), RedissonObject.prefixName("redisson_lock_timeout", name), "fair timeouts of " + name);
            assertEquals(v.get("fenced_token").getAsString(), RedissonObject.prefixName("redisson_lock_token", name), "fenced token of " + name);
            assertEquals(v.get("waiter_channel_prefix").getAsString(), RedissonObject.prefixName("redisson_lock__channel", name) + ":", "waiter channel of " + name);
            n++;
        }
        assertTrue(n > 0);
    }

    @Test
    void messageAndWatchdogAreRedissons() throws Exception {
        JsonObject v = vectors();
        assertEquals(v.get("unlock_message").getAsString(), LockPubSub.UNLOCK_MESSAGE.toString());
        JsonObject w = v.getAsJsonObject("watchdog");
        assertEquals(w.get("timeout_ms").getAsLong(), new Config().getLockWatchdogTimeout());
        assertEquals(w.get("renew_every_ms").getAsLong(), new Config().getLockWatchdogTimeout() / 3);
        assertEquals(v.get("fair_wait_ms").getAsLong(), new Config().getFairLockWaitTimeout());
    }

    @Test
    void fieldPatternFitsAJavaField() throws Exception {
        Pattern p = Pattern.compile(vectors().get("field_pattern").getAsString());
        String field = UUID.randomUUID() + ":" + Thread.currentThread().getId();
        assertTrue(p.matcher(field).matches(), field);
    }
}
