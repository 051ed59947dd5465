package io.lockbridge.jmh;

import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;

/**
 * The uncontended cycle, per subject (the redis-server's port in the system
 * property lockbridge.jmh.port). The contended hand-off is {@link Handoff}.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class Locks {
    /** The subject: one of {@link Subject#NAMES}. */
    @State(Scope.Benchmark)
    public static class Shared {
        @Param({"lettuce-floor"})
        public String subject;
        Subject client;

        @Setup(Level.Trial)
        public void up() {
            client = Subject.of(subject, Integer.getInteger("lockbridge.jmh.port"));
        }

        @TearDown(Level.Trial)
        public void down() {
            client.close();
        }
    }

    /** Acquire and release a free lock, one thread. */
    @Benchmark
    @Threads(1)
    public void uncontended(Shared state) throws Exception {
        state.client.cycle("jmh:uncontended");
    }
}
