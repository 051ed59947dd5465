package io.lockbridge;

import static io.lockbridge.RedisServer.b;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

/**
 * Release notices on one Redis: the waiters of a key share its
 * subscription, and the last one's UNSUBSCRIBE never overtakes the next
 * one's SUBSCRIBE.
 */
class SubscribeFaultTest {
    static long subscribes(RedisServer srv) {
        for (String line : srv.raw.info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_subscribe:")) {
                return Long.parseLong(line.replaceAll("^cmdstat_\\w+:calls=(\\d+),.*", "$1"));
            }
        }
        return 0;
    }

    /** PUBSUB NUMSUB of channel (its reply's keys are byte arrays: read the one value). */
    static long numsub(RedisServer srv, byte[] channel) {
        return srv.raw.pubsubNumsub(channel).values().iterator().next();
    }

    /** A second listener of a channel whose subscription Redis confirmed sends no SUBSCRIBE, and hears the notices. */
    @Test
    void theWaitersOfAKeyShareItsSubscription() throws Exception {
        try (RedisServer srv = new RedisServer(); Redis redis = srv.redis()) {
            byte[] channel = b("shared:released");
            AtomicInteger first = new AtomicInteger();
            AtomicInteger second = new AtomicInteger();
            long before = subscribes(srv);
            AutoCloseable firstSub = redis.subscribe(channel, first::incrementAndGet);
            AutoCloseable secondSub = redis.subscribe(channel, second::incrementAndGet);
            assertEquals(before + 1, subscribes(srv), "one SUBSCRIBE for both");
            // A confirmation calls the channel's listeners too (Redis.subscribe), on Lettuce's thread, maybe
            // after the second listener came: counted from when the calls have settled.
            Thread.sleep(200);
            int firstBefore = first.get(), secondBefore = second.get();
            srv.raw.publish(channel, b("released"));
            MigrateLockerTest.eventually("both heard the notice", () -> first.get() == firstBefore + 1
                    && second.get() == secondBefore + 1);
            firstSub.close();
            srv.raw.publish(channel, b("released"));
            MigrateLockerTest.eventually("the one left heard the next", () -> second.get() == secondBefore + 2);
            secondSub.close();
            MigrateLockerTest.eventually("the last one unsubscribed", () -> numsub(srv, channel) == 0);
        }
    }

    /**
     * The last listener of a channel leaves while another subscribes: its
     * UNSUBSCRIBE goes out first. Sent after the newcomer's SUBSCRIBE (as it
     * was, once the listeners' lock was let go), it unsubscribed the
     * newcomer's channel, which then heard no release notice and slept its
     * whole backoff (up to 512 ms by default).
     */
    @Test
    void faultTheLastListenersUnsubscribeDoesNotOvertakeTheNextSubscribe() throws Exception {
        try (RedisServer srv = new RedisServer(); Redis redis = srv.redis()) {
            byte[] channel = b("race:released");
            AutoCloseable leaving = redis.subscribe(channel, () -> { });
            AtomicInteger heard = new AtomicInteger();
            CompletableFuture<AutoCloseable> next = new CompletableFuture<>();
            redis.beforeUnsubscribe = () -> {
                redis.beforeUnsubscribe = null;
                new Thread(() -> {
                    try {
                        next.complete(redis.subscribe(channel, heard::incrementAndGet));
                    } catch (Throwable e) {
                        next.completeExceptionally(e);
                    }
                }, "next-listener").start();
                try {
                    next.get(500, TimeUnit.MILLISECONDS); // the newcomer subscribes now, if nothing holds it back
                } catch (TimeoutException e) {
                    // held back until this UNSUBSCRIBE is sent
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            };
            leaving.close();
            AutoCloseable newcomer = next.get(10, TimeUnit.SECONDS);
            MigrateLockerTest.eventually("the newcomer hears the release notice", () -> {
                srv.raw.publish(channel, b("released"));
                return heard.get() > 0;
            });
            assertEquals(1L, numsub(srv, channel), "subscribed");
            newcomer.close();
        }
    }
}
