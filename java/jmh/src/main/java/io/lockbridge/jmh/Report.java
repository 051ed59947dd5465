package io.lockbridge.jmh;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lockbridge.Fixtures;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.util.Statistics;

/**
 * Runs the Java benchmarks on a redis-server of their own and writes the
 * Java section of docs/performance.md:
 *
 * <ol>
 * <li>what a cycle costs besides time, per subject, from a pass of its own
 * in this JVM: the commands Redis counts (INFO commandstats, the scripts'
 * own included), the server's CPU time (INFO cpu), this process's CPU time
 * (every thread's) and its threads' context switches;
 * <li>the uncontended cycle ({@link Locks}, JMH sample time, a fork per
 * run) in rounds, each subject's run paired with a run of the Lettuce
 * floor just before or after it (before in even rounds, after in odd ones,
 * the subjects' order rotated each round), as the Go bench pairs its
 * blocks: a subject's "× floor" is its p50 over the floor's p50 of its own
 * pair, so that a slow spell of the machine falls on both;
 * <li>the hand-off ({@link Handoff}, a JVM per subject and round, the
 * subjects' order rotated each round).
 * </ol>
 *
 * <p>Arguments: {@code --rounds N} (default 5), {@code --iteration-ms N}
 * (default 1000: one warm-up and three measured iterations per JMH run),
 * {@code --handoff-rounds N} (default 3), {@code --handoff-ms N} (default
 * 2000 measured per shape, after a warm-up of half that),
 * {@code --out PATH} (default ../../docs/performance.md),
 * {@code --only a,b} (subjects; the floor is always run),
 * {@code --save PATH} (default target/java-bench.ser: the figures measured,
 * for {@code --render}), {@code --render PATH} (measure nothing: write the
 * section from figures saved before, as after editing the hand-written
 * part, src/main/resources/analysis.md).
 */
public final class Report {
    static final String BEGIN = "<!-- begin java-bench -->";
    static final String END = "<!-- end java-bench -->";
    static final String FLOOR = "lettuce-floor";
    static final String[] LOCKBRIDGE = {"legacy", "migrate-legacy", "migrate-dual-write", "migrate-dual-read", "migrate-modern", "modern"};

    private Report() {}

    /** One JMH run of the uncontended cycle: p50 and p99 in µs. */
    record Run(double p50, double p99, long samples) implements java.io.Serializable {}

    /** A cycle's costs besides time: commands Redis counted (by name), server CPU µs, client CPU µs, context switches. */
    record Cost(Map<String, Double> commands, double serverCpu, double clientCpu, double switches) implements java.io.Serializable {
        double total() {
            return commands.values().stream().mapToDouble(Double::doubleValue).sum();
        }
    }

    static final class Options2 {
        int rounds = 5;
        int iterMs = 1000;
        int handoffRounds = 3;
        int handoffMs = 2000;
        Path out = Path.of("../../docs/performance.md");
        Path save = Path.of("target/java-bench.ser");
        Path render;
        List<String> subjects = List.of(Subject.NAMES);
    }

    /** How and where a run was made. */
    record Setup(int rounds, int iterMs, int handoffRounds, int handoffMs, List<String> subjects, String date, String os, String java, int cores,
            String redis, String loadBefore, String loadAfter) implements java.io.Serializable {}

    public static void main(String[] args) throws Exception {
        Options2 o = new Options2();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
            case "--rounds" -> o.rounds = Integer.parseInt(args[++i]);
            case "--iteration-ms" -> o.iterMs = Integer.parseInt(args[++i]);
            case "--handoff-rounds" -> o.handoffRounds = Integer.parseInt(args[++i]);
            case "--handoff-ms" -> o.handoffMs = Integer.parseInt(args[++i]);
            case "--out" -> o.out = Path.of(args[++i]);
            case "--save" -> o.save = Path.of(args[++i]);
            case "--render" -> o.render = Path.of(args[++i]);
            case "--only" -> {
                List<String> l = new ArrayList<>(List.of(FLOOR));
                for (String s : args[++i].split(",")) {
                    if (!s.equals(FLOOR)) {
                        l.add(s);
                    }
                }
                o.subjects = l;
            }
            default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        if (o.render != null) {
            Section sec;
            try (java.io.ObjectInputStream in = new java.io.ObjectInputStream(Files.newInputStream(o.render))) {
                sec = (Section) in.readObject();
            }
            write(o.out, sec.text());
            System.out.println(sec.text());
            return;
        }
        String loadBefore = loadavg();
        Map<String, Cost> costs;
        Map<String, List<Run>> cycle = new LinkedHashMap<>();
        Map<String, List<Run>> floorOf = new LinkedHashMap<>(); // the floor run paired with each of the subject's runs
        Map<String, List<Map<String, Double>>> shared = new LinkedHashMap<>();
        Map<String, List<Map<String, Double>>> own = new LinkedHashMap<>();
        List<String> others = o.subjects.stream().filter(s -> !s.equals(FLOOR)).toList();
        try (Fixtures.Standalone srv = new Fixtures.Standalone()) {
            costs = costs(o.subjects, srv.port());
            for (int r = 0; r < o.rounds; r++) {
                for (int k = 0; k < others.size(); k++) {
                    String s = others.get((k + r) % others.size());
                    Run f;
                    Run x;
                    if (r % 2 == 0) {
                        f = run(FLOOR, srv.port(), o.iterMs);
                        x = run(s, srv.port(), o.iterMs);
                    } else {
                        x = run(s, srv.port(), o.iterMs);
                        f = run(FLOOR, srv.port(), o.iterMs);
                    }
                    cycle.computeIfAbsent(s, z -> new ArrayList<>()).add(x);
                    floorOf.computeIfAbsent(s, z -> new ArrayList<>()).add(f);
                    cycle.computeIfAbsent(FLOOR, z -> new ArrayList<>()).add(f);
                    System.err.printf("cycle round %d/%d: %s done%n", r + 1, o.rounds, s);
                }
            }
            for (int r = 0; r < o.handoffRounds; r++) {
                for (int k = 0; k < o.subjects.size(); k++) {
                    String s = o.subjects.get((k + r) % o.subjects.size());
                    List<Map<String, Double>> h = handoff(s, srv.port(), o.handoffMs);
                    shared.computeIfAbsent(s, z -> new ArrayList<>()).add(h.get(0));
                    own.computeIfAbsent(s, z -> new ArrayList<>()).add(h.get(1));
                    System.err.printf("hand-off round %d/%d: %s done%n", r + 1, o.handoffRounds, s);
                }
            }
        }
        Setup su = new Setup(o.rounds, o.iterMs, o.handoffRounds, o.handoffMs, List.copyOf(o.subjects), LocalDate.now().toString(),
                System.getProperty("os.name"), System.getProperty("java.version"), Runtime.getRuntime().availableProcessors(), redisVersion(),
                loadBefore, loadavg());
        Section sec = new Section(su, costs, cycle, floorOf, shared, own);
        if (o.save.getParent() != null) {
            Files.createDirectories(o.save.getParent());
        }
        try (java.io.ObjectOutputStream os = new java.io.ObjectOutputStream(Files.newOutputStream(o.save))) {
            os.writeObject(sec);
        }
        String section = sec.text();
        write(o.out, section);
        System.out.println(section);
    }

    static Run run(String subject, int port, int iterMs) throws Exception {
        Options o = new OptionsBuilder().include(Locks.class.getName() + ".uncontended$").param("subject", subject).forks(1)
                .warmupIterations(1).warmupTime(TimeValue.milliseconds(iterMs)).measurementIterations(3)
                .measurementTime(TimeValue.milliseconds(iterMs)).jvmArgsAppend("-Dlockbridge.jmh.port=" + port, "-Xmx512m")
                .shouldFailOnError(true).verbosity(org.openjdk.jmh.runner.options.VerboseMode.SILENT).build();
        RunResult res = new Runner(o).runSingle();
        Statistics st = res.getPrimaryResult().getStatistics();
        return new Run(st.getPercentile(50), st.getPercentile(99), st.getN());
    }

    /** The hand-off of subject in a JVM of its own: the figures of its two shapes (shared, own). */
    static List<Map<String, Double>> handoff(String subject, int port, int ms) throws Exception {
        String jar = Path.of(Report.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx512m", "-cp", jar,
                Handoff.class.getName(), Integer.toString(port), subject, Integer.toString(ms / 2), Integer.toString(ms))
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        List<Map<String, Double>> out = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = r.readLine()) != null;) {
                if (line.startsWith("shape=")) {
                    Map<String, Double> m = new LinkedHashMap<>();
                    for (String kv : line.substring(line.indexOf(' ') + 1).split(" ")) {
                        String[] f = kv.split("=");
                        m.put(f[0], Double.parseDouble(f[1]));
                    }
                    out.add(m);
                }
            }
        }
        if (p.waitFor() != 0 || out.size() != 2) {
            throw new IllegalStateException("hand-off of " + subject + " failed (exit " + p.exitValue() + ")");
        }
        return out;
    }

    /**
     * Each subject's costs per cycle, alone: every subject first runs 3000
     * cycles (the JIT compiles the shared client code once for all), then
     * each, in turn, 5000 measured.
     */
    static Map<String, Cost> costs(List<String> subjects, int port) throws Exception {
        Map<String, Cost> m = new LinkedHashMap<>();
        RedisClient admin = RedisClient.create(RedisURI.create("127.0.0.1", port));
        Map<String, Subject> subs = new LinkedHashMap<>();
        try (StatefulRedisConnection<String, String> c = admin.connect()) {
            for (String name : subjects) {
                subs.put(name, Subject.of(name, port));
                for (int i = 0; i < 3000; i++) {
                    subs.get(name).cycle("jmh:cost:" + name);
                }
            }
            for (String name : subjects) {
                Subject s = subs.get(name);
                String key = "jmh:cost:" + name;
                int n = 5000;
                Map<String, Double> cmd0 = commands(c);
                double srv0 = serverCpu(c);
                long cpu0 = clientCpu();
                long sw0 = switches();
                for (int i = 0; i < n; i++) {
                    s.cycle(key);
                }
                long sw1 = switches();
                long cpu1 = clientCpu();
                double srv1 = serverCpu(c);
                Map<String, Double> cmd1 = commands(c);
                Map<String, Double> per = new TreeMap<>();
                cmd1.forEach((k, v) -> {
                    double d = (v - cmd0.getOrDefault(k, 0.0) - (k.equals("INFO") ? 2 : 0)) / n;
                    if (d >= 0.005) {
                        per.put(k, d);
                    }
                });
                m.put(name, new Cost(per, (srv1 - srv0) * 1e6 / n, (cpu1 - cpu0) / 1e3 / n, (double) (sw1 - sw0) / n));
            }
        } finally {
            subs.values().forEach(Subject::close);
            admin.shutdown();
        }
        return m;
    }

    /** INFO commandstats: calls by command name, upper case ("PUBSUB|NUMSUB" for a subcommand). */
    static Map<String, Double> commands(StatefulRedisConnection<String, String> c) {
        Map<String, Double> m = new TreeMap<>();
        for (String line : c.sync().info("commandstats").split("\r\n")) {
            if (line.startsWith("cmdstat_")) {
                String name = line.substring(8, line.indexOf(':')).toUpperCase(Locale.ROOT).replace('|', ' '); // PUBSUB|NUMSUB: no pipe in a table
                for (String f : line.substring(line.indexOf(':') + 1).split(",")) {
                    if (f.startsWith("calls=")) {
                        m.put(name, Double.parseDouble(f.substring(6)));
                    }
                }
            }
        }
        return m;
    }

    /** The server's CPU time (user + sys), seconds. */
    static double serverCpu(StatefulRedisConnection<String, String> c) {
        double u = 0;
        for (String line : c.sync().info("cpu").split("\r\n")) {
            if (line.startsWith("used_cpu_sys:") || line.startsWith("used_cpu_user:")) {
                u += Double.parseDouble(line.substring(line.indexOf(':') + 1));
            }
        }
        return u;
    }

    /** The CPU time of this JVM's live threads, ns. */
    static long clientCpu() {
        ThreadMXBean tm = ManagementFactory.getThreadMXBean();
        long t = 0;
        for (ThreadInfo ti : tm.getThreadInfo(tm.getAllThreadIds())) {
            if (ti != null) {
                t += Math.max(0, tm.getThreadCpuTime(ti.getThreadId()));
            }
        }
        return t;
    }

    /** The context switches of this JVM's threads (voluntary and not), from /proc; 0 where there is none. */
    static long switches() {
        long n = 0;
        try (var ds = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path t : ds) {
                try {
                    for (String line : Files.readAllLines(t.resolve("status"))) {
                        if (line.startsWith("voluntary_ctxt_switches:") || line.startsWith("nonvoluntary_ctxt_switches:")) {
                            n += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                        }
                    }
                } catch (java.io.IOException e) {
                    // the thread ended meanwhile
                }
            }
        } catch (java.io.IOException e) {
            return 0;
        }
        return n;
    }

    /** The 1, 5 and 15 minute load averages, or "" where /proc/loadavg is not. */
    static String loadavg() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (java.io.IOException e) {
            return "";
        }
    }

    static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        int n = s.length;
        return n == 0 ? Double.NaN : n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    static String redisVersion() {
        try {
            Process p = new ProcessBuilder("redis-server", "--version").redirectErrorStream(true).start();
            String v = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            p.waitFor();
            int i = v.indexOf("v=");
            return i < 0 ? v : "redis-server " + v.substring(i + 2, v.indexOf(' ', i) < 0 ? v.length() : v.indexOf(' ', i));
        } catch (Exception e) {
            return "redis-server";
        }
    }

    /** Replaces the Java section of the report at out, or appends it. */
    static void write(Path out, String section) throws java.io.IOException {
        String doc = Files.exists(out) ? Files.readString(out) : "# Performance\n";
        int i = doc.indexOf(BEGIN);
        int j = doc.indexOf(END);
        if (i >= 0 && j > i) {
            doc = doc.substring(0, i) + section.stripTrailing() + doc.substring(j + END.length());
        } else {
            doc = doc.stripTrailing() + "\n\n" + section;
        }
        Files.writeString(out, doc.endsWith("\n") ? doc : doc + "\n");
    }

    /** The Java section's text. */
    record Section(Setup o, Map<String, Cost> costs, Map<String, List<Run>> cycle, Map<String, List<Run>> floorOf,
            Map<String, List<Map<String, Double>>> shared, Map<String, List<Map<String, Double>>> own) implements java.io.Serializable {

        /** The subject's paired ratios to the floor, per round. */
        double[] ratios(String s) {
            List<Run> x = cycle.get(s);
            List<Run> f = floorOf.get(s);
            double[] r = new double[x.size()];
            for (int i = 0; i < r.length; i++) {
                r[i] = x.get(i).p50() / f.get(i).p50();
            }
            return r;
        }

        String ratio(String s) {
            double[] r = ratios(s);
            double[] sorted = r.clone();
            Arrays.sort(sorted);
            return String.format(Locale.ROOT, "%.2f× <sub>%.2f–%.2f</sub>", median(r), sorted[0], sorted[sorted.length - 1]);
        }

        double p50(String s) {
            return median(cycle.get(s).stream().mapToDouble(Run::p50).toArray());
        }

        boolean loaded() {
            int cores = o.cores();
            for (String l : new String[] {o.loadBefore(), o.loadAfter()}) {
                if (!l.isEmpty() && Double.parseDouble(l.split(" ")[0]) >= cores) {
                    return true;
                }
            }
            return false;
        }

        String text() {
            StringBuilder b = new StringBuilder();
            int cores = o.cores();
            b.append(BEGIN).append("\n\n## Java: lockbridge-java beside Redisson, RedisLockRegistry and raw Lettuce\n\n");
            b.append("<!-- Generated by `make java-bench` (java/jmh, io.lockbridge.jmh.Report); edits are overwritten. -->\n\n");
            b.append(String.format(Locale.ROOT, "Run %s on %s, Java %s, %d cores; one local redis-server (%s), sharing the cores with the "
                    + "client; load average (1, 5, 15 min) %s before the run and %s after. Every subject has its own client and connections "
                    + "(Lettuce 7.5 for lockbridge-java, the floor and RedisLockRegistry; Redisson's own).%n%n", o.date(), o.os(), o.java(),
                    cores, o.redis(), o.loadBefore(), o.loadAfter()));
            if (loaded()) {
                b.append(String.format(Locale.ROOT, "**Taken on a loaded machine**: the load average reached the number of cores (%d) while "
                        + "other work ran beside the benchmark, so times are longer and more scattered than on an idle machine, and the client, "
                        + "the server and that work took turns on the cores. The paired ratios (\"× floor\") are the figures to read; absolute "
                        + "times only within one table.%n%n", cores));
            }
            if (o.rounds() < 5 || o.iterMs() < 1000 || o.handoffRounds() < 3 || o.handoffMs() < 2000) {
                b.append("**Provisional**: a shorter run than `make java-bench`'s default (5 rounds of 1000 ms iterations, 3 hand-off rounds "
                        + "of 2000 ms); its figures are not the ones to hold the goals against.\n\n");
            }
            cycleTable(b);
            handoffTables(b);
            goals(b);
            b.append('\n').append(analysis());
            b.append("\n").append(END).append("\n");
            return b.toString();
        }

        void cycleTable(StringBuilder b) {
            b.append("### Uncontended cycle: acquire + release, one thread\n\n");
            b.append(String.format(Locale.ROOT, "JMH 1.37 sample time, every run in a fork of its own: 1 warm-up and 3 measured iterations of "
                    + "%d ms; %d round%s. The floor is raw Lettuce: `SET key token NX PX` and an `EVALSHA` compare-and-delete on one "
                    + "connection. Each subject's run is paired with a floor run just before it (even rounds) or after it (odd rounds), the "
                    + "subjects' order rotated each round; \"× floor\" is the subject's p50 over the floor's p50 of its pair: median over the "
                    + "rounds, min–max in small print. p50 and p99: medians over the rounds.%n%n", o.iterMs(), o.rounds(), o.rounds() == 1 ? "" : "s"));
            b.append("The other columns come from a separate pass of 5000 cycles per subject, alone (after 3000 of each to warm up): the commands Redis counts per cycle "
                    + "(INFO commandstats; the commands a script runs are counted too), the redis-server's CPU time (INFO cpu), the client "
                    + "JVM's CPU time (all its threads) and its threads' context switches — each switch is a thread put to sleep or woken, "
                    + "the costliest step of a cycle on a VM.\n\n");
            b.append("| subject | p50 µs | p99 µs | × floor | Redis commands / cycle | server CPU µs | client CPU µs | thread switches |\n");
            b.append("|---|---:|---:|---:|---|---:|---:|---:|\n");
            for (String s : o.subjects()) {
                double p99 = median(cycle.get(s).stream().mapToDouble(Run::p99).toArray());
                String ratio = s.equals(FLOOR) ? "1" : ratio(s);
                Cost c = costs.get(s);
                StringBuilder cmds = new StringBuilder();
                c.commands().forEach((k, v) -> cmds.append(cmds.length() == 0 ? "" : " + ").append(k).append(' ')
                        .append(String.format(Locale.ROOT, v == Math.rint(v) ? "%.0f" : "%.2f", v)));
                b.append(String.format(Locale.ROOT, "| %s | %.1f | %.1f | %s | %.0f (%s) | %.1f | %.1f | %.1f |%n", label(s), p50(s), p99, ratio,
                        c.total(), cmds, c.serverCpu(), c.clientCpu(), c.switches()));
            }
            b.append("\n\"floor-via-lockbridge\" sends the floor's two commands through lockbridge-java's own connections (`Redis`: a "
                    + "connection borrowed per call from a per-node pool, reconnect and replay off), without any lock logic: the "
                    + "connections' share of a cycle. Redisson takes an explicit lease (no watchdog); RedisLockRegistry runs its default "
                    + "spin lock.\n\n");
        }

        /** The hand-written part (src/main/resources/analysis.md), or nothing. */
        static String analysis() {
            try (java.io.InputStream in = Report.class.getResourceAsStream("/analysis.md")) {
                return in == null ? "" : new String(in.readAllBytes(), StandardCharsets.UTF_8).stripTrailing() + "\n";
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        static String label(String s) {
            return s.equals("modern") ? "**modern**" : s;
        }

        void handoffTables(StringBuilder b) {
            b.append("### Hand-off: 8 threads, one key\n\n");
            b.append(String.format(Locale.ROOT, "As the Go bench measures it (bench/internal/scenario.Handoff): eight threads take one key in "
                    + "turn; a holder stays inside for %d µs (spinning, yielding to other threads) and releases; a thread that released "
                    + "calls lock again only once another has taken the lock, so every hand-off goes to a thread that was waiting (a releaser "
                    + "retrying at once would often win, and a lock that let one thread barge would look fast). **hand-off**: from one "
                    + "holder's unlock returning to the next holder's lock returning (0 when that came first: the release's notice can "
                    + "overtake its reply); **wait**: a lock call from call to return. A JVM per subject and round (%d round%s, the order "
                    + "rotated), %d ms warm-up then %d ms measured per shape; figures are medians over the rounds (max: the largest); "
                    + "overlaps (two holders inside at once, counted by a guard that is not the lock) summed, and must be 0. Each subject "
                    + "waits its own way: lockbridge-java on its backoff woken by release notices (the legacy lock has none in its "
                    + "protocol: the locker's own releases wake its waiters, others' are found by polling), Redisson on its pub/sub "
                    + "channel, RedisLockRegistry on a local lock per key and then polling Redis every 100 ms (its default), the floors "
                    + "polling every millisecond.%n%n", Handoff.HOLD.toNanos() / 1000, o.handoffRounds(), o.handoffRounds() == 1 ? "" : "s",
                    o.handoffMs() / 2, o.handoffMs()));
            handoffTable(b, "One client shared by the eight threads (one locker, as a service's threads use it; the Go bench's shape)",
                    shared);
            handoffTable(b, "A client per thread (eight instances of a fleet, one thread each)", own);
            b.append("None of these locks is fair: a waiter may lose many hand-offs in a row, which is what the wait's p99 shows. Go's "
                    + "modern.Locker serves the waiters of one Locker on one key first come first served (only the head of the line "
                    + "attempts); lockbridge-java's lockers do not keep such a line, so all of a client's waiters attempt on every release "
                    + "notice.\n\n");
        }

        static void handoffTable(StringBuilder b, String title, Map<String, List<Map<String, Double>>> m) {
            b.append(title).append(":\n\n");
            b.append("| subject | hand-off p50 | p90 | p99 | max | wait p50 | wait p99 | cycles/s | hold µs | overlaps |\n");
            b.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
            m.forEach((s, runs) -> b.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s | %.0f | %.0f | %.0f |%n", label(s),
                    us(med(runs, "handoff_p50")), us(med(runs, "handoff_p90")), us(med(runs, "handoff_p99")),
                    us(runs.stream().mapToDouble(x -> x.get("handoff_max")).max().orElse(0)), us(med(runs, "wait_p50")), us(med(runs, "wait_p99")),
                    med(runs, "cycles_per_s"), med(runs, "hold_mean"), runs.stream().mapToDouble(x -> x.get("overlaps")).sum())));
            b.append('\n');
        }

        static double med(List<Map<String, Double>> runs, String k) {
            return median(runs.stream().mapToDouble(x -> x.get(k)).toArray());
        }

        /** µs as µs below a millisecond, else ms. */
        static String us(double v) {
            return v < 1000 ? String.format(Locale.ROOT, "%.0f µs", v) : String.format(Locale.ROOT, "%.1f ms", v / 1000);
        }

        void goals(StringBuilder b) {
            b.append("### Goals\n\n");
            if (cycle.containsKey("modern")) {
                double[] r = ratios("modern");
                double m = median(r);
                b.append(String.format(Locale.ROOT, "- modern's uncontended cycle within 1.10× the floor: %s — %s%n", ratio("modern"),
                        m <= 1.10 ? "met" : "not met"));
                for (String other : new String[] {"redisson", "redis-lock-registry"}) {
                    if (cycle.containsKey(other)) {
                        double[] ro = ratios(other);
                        int n = Math.min(r.length, ro.length);
                        double[] q = new double[n];
                        for (int i = 0; i < n; i++) {
                            q[i] = r[i] / ro[i];
                        }
                        double mq = median(q);
                        b.append(String.format(Locale.ROOT, "- modern ahead of %s uncontended: modern's floor ratio over %s's, round by round, "
                                + "%.2f (p50 %.1f µs against %.1f µs) — %s%n", other, other, mq, p50("modern"), p50(other),
                                mq < 1 ? "met" : "not met"));
                    }
                }
            }
            for (String s : LOCKBRIDGE) {
                if (shared.containsKey(s)) {
                    double a = med(shared.get(s), "handoff_p99");
                    double c = med(own.get(s), "handoff_p99");
                    b.append(String.format(Locale.ROOT, "- %s hand-off p99 at 8 threads ≤ 10 ms: %s with one client — %s; %s with a client per "
                            + "thread — %s%n", s, us(a), a <= 10_000 ? "met" : "not met", us(c), c <= 10_000 ? "met" : "not met"));
                }
            }
        }
    }
}
