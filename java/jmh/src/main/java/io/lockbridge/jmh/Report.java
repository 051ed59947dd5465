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
    static final String[] LOCKBRIDGE = {"legacy", "migrate-legacy", "migrate-dual-write", "migrate-dual-read",
            "migrate-modern", "modern"};

    private Report() {}

    /** One JMH run of the uncontended cycle: p50 and p99 in µs. */
    record Run(double p50, double p99, long samples) implements java.io.Serializable {}

    /**
     * A cycle's costs besides time: commands Redis counted (by name), server
     * CPU µs, client CPU µs, context switches.
     */
    record Cost(Map<String, Double> commands, double serverCpu, double clientCpu, double switches)
            implements java.io.Serializable {
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
    record Setup(int rounds, int iterMs, int handoffRounds, int handoffMs, List<String> subjects, String date,
            String os, String java, int cores, String redis, String loadBefore, String loadAfter)
            implements java.io.Serializable {}

    public static void main(String[] args) throws Exception {
        Options2 opts = new Options2();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
            case "--rounds" -> opts.rounds = Integer.parseInt(args[++i]);
            case "--iteration-ms" -> opts.iterMs = Integer.parseInt(args[++i]);
            case "--handoff-rounds" -> opts.handoffRounds = Integer.parseInt(args[++i]);
            case "--handoff-ms" -> opts.handoffMs = Integer.parseInt(args[++i]);
            case "--out" -> opts.out = Path.of(args[++i]);
            case "--save" -> opts.save = Path.of(args[++i]);
            case "--render" -> opts.render = Path.of(args[++i]);
            case "--only" -> {
                List<String> subjects = new ArrayList<>(List.of(FLOOR));
                for (String name : args[++i].split(",")) {
                    if (!name.equals(FLOOR)) {
                        subjects.add(name);
                    }
                }
                opts.subjects = subjects;
            }
            default -> throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        if (opts.render != null) {
            Section sec;
            try (java.io.ObjectInputStream in = new java.io.ObjectInputStream(Files.newInputStream(opts.render))) {
                sec = (Section) in.readObject();
            }
            write(opts.out, sec.text());
            System.out.println(sec.text());
            return;
        }
        String loadBefore = loadavg();
        Map<String, Cost> costs;
        Map<String, List<Run>> cycle = new LinkedHashMap<>();
        Map<String, List<Run>> floorOf = new LinkedHashMap<>(); // the floor run paired with each of the subject's runs
        Map<String, List<Map<String, Double>>> shared = new LinkedHashMap<>();
        Map<String, List<Map<String, Double>>> own = new LinkedHashMap<>();
        List<String> others = opts.subjects.stream().filter(s -> !s.equals(FLOOR)).toList();
        try (Fixtures.Standalone srv = new Fixtures.Standalone()) {
            costs = costs(opts.subjects, srv.port());
            for (int round = 0; round < opts.rounds; round++) {
                for (int turn = 0; turn < others.size(); turn++) {
                    String subject = others.get((turn + round) % others.size());
                    Run floorRun;
                    Run subjectRun;
                    if (round % 2 == 0) {
                        floorRun = run(FLOOR, srv.port(), opts.iterMs);
                        subjectRun = run(subject, srv.port(), opts.iterMs);
                    } else {
                        subjectRun = run(subject, srv.port(), opts.iterMs);
                        floorRun = run(FLOOR, srv.port(), opts.iterMs);
                    }
                    cycle.computeIfAbsent(subject, z -> new ArrayList<>()).add(subjectRun);
                    floorOf.computeIfAbsent(subject, z -> new ArrayList<>()).add(floorRun);
                    cycle.computeIfAbsent(FLOOR, z -> new ArrayList<>()).add(floorRun);
                    System.err.printf("cycle round %d/%d: %s done%n", round + 1, opts.rounds, subject);
                }
            }
            for (int round = 0; round < opts.handoffRounds; round++) {
                for (int turn = 0; turn < opts.subjects.size(); turn++) {
                    String subject = opts.subjects.get((turn + round) % opts.subjects.size());
                    List<Map<String, Double>> shapes = handoff(subject, srv.port(), opts.handoffMs);
                    shared.computeIfAbsent(subject, z -> new ArrayList<>()).add(shapes.get(0));
                    own.computeIfAbsent(subject, z -> new ArrayList<>()).add(shapes.get(1));
                    System.err.printf("hand-off round %d/%d: %s done%n", round + 1, opts.handoffRounds, subject);
                }
            }
        }
        Setup setup = new Setup(opts.rounds, opts.iterMs, opts.handoffRounds, opts.handoffMs,
                List.copyOf(opts.subjects), LocalDate.now().toString(),
                System.getProperty("os.name"), System.getProperty("java.version"),
                Runtime.getRuntime().availableProcessors(), redisVersion(), loadBefore, loadavg());
        Section sec = new Section(setup, costs, cycle, floorOf, shared, own);
        if (opts.save.getParent() != null) {
            Files.createDirectories(opts.save.getParent());
        }
        try (java.io.ObjectOutputStream out = new java.io.ObjectOutputStream(Files.newOutputStream(opts.save))) {
            out.writeObject(sec);
        }
        String section = sec.text();
        write(opts.out, section);
        System.out.println(section);
    }

    static Run run(String subject, int port, int iterMs) throws Exception {
        Options options = new OptionsBuilder().include(Locks.class.getName() + ".uncontended$")
                .param("subject", subject).forks(1)
                .warmupIterations(1).warmupTime(TimeValue.milliseconds(iterMs)).measurementIterations(3)
                .measurementTime(TimeValue.milliseconds(iterMs))
                .jvmArgsAppend("-Dlockbridge.jmh.port=" + port, "-Xmx512m")
                .shouldFailOnError(true).verbosity(org.openjdk.jmh.runner.options.VerboseMode.SILENT).build();
        RunResult res = new Runner(options).runSingle();
        Statistics stats = res.getPrimaryResult().getStatistics();
        return new Run(stats.getPercentile(50), stats.getPercentile(99), stats.getN());
    }

    /** The hand-off of subject in a JVM of its own: the figures of its two shapes (shared, own). */
    static List<Map<String, Double>> handoff(String subject, int port, int millis) throws Exception {
        String jar = Path.of(Report.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        Process process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx512m", "-cp", jar, Handoff.class.getName(), Integer.toString(port), subject,
                Integer.toString(millis / 2), Integer.toString(millis))
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        List<Map<String, Double>> out = new ArrayList<>();
        try (BufferedReader reader = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = reader.readLine()) != null;) {
                if (line.startsWith("shape=")) {
                    Map<String, Double> figures = new LinkedHashMap<>();
                    for (String pair : line.substring(line.indexOf(' ') + 1).split(" ")) {
                        String[] parts = pair.split("=");
                        figures.put(parts[0], Double.parseDouble(parts[1]));
                    }
                    out.add(figures);
                }
            }
        }
        if (process.waitFor() != 0 || out.size() != 2) {
            throw new IllegalStateException("hand-off of " + subject + " failed (exit " + process.exitValue() + ")");
        }
        return out;
    }

    /**
     * Each subject's costs per cycle, alone: every subject first runs 3000
     * cycles (the JIT compiles the shared client code once for all), then
     * each, in turn, 5000 measured.
     */
    static Map<String, Cost> costs(List<String> subjects, int port) throws Exception {
        Map<String, Cost> byName = new LinkedHashMap<>();
        RedisClient admin = RedisClient.create(RedisURI.create("127.0.0.1", port));
        Map<String, Subject> subs = new LinkedHashMap<>();
        try (StatefulRedisConnection<String, String> conn = admin.connect()) {
            for (String name : subjects) {
                subs.put(name, Subject.of(name, port));
                for (int i = 0; i < 3000; i++) {
                    subs.get(name).cycle("jmh:cost:" + name);
                }
            }
            for (String name : subjects) {
                Subject subject = subs.get(name);
                String key = "jmh:cost:" + name;
                int cycles = 5000;
                Map<String, Double> cmd0 = commands(conn);
                double srv0 = serverCpu(conn);
                long cpu0 = clientCpu();
                long sw0 = switches();
                for (int i = 0; i < cycles; i++) {
                    subject.cycle(key);
                }
                long sw1 = switches();
                long cpu1 = clientCpu();
                double srv1 = serverCpu(conn);
                Map<String, Double> cmd1 = commands(conn);
                Map<String, Double> per = new TreeMap<>();
                cmd1.forEach((command, calls) -> {
                    double perCycle = (calls - cmd0.getOrDefault(command, 0.0) - (command.equals("INFO") ? 2 : 0))
                            / cycles;
                    if (perCycle >= 0.005) {
                        per.put(command, perCycle);
                    }
                });
                byName.put(name, new Cost(per, (srv1 - srv0) * 1e6 / cycles, (cpu1 - cpu0) / 1e3 / cycles,
                        (double) (sw1 - sw0) / cycles));
            }
        } finally {
            subs.values().forEach(Subject::close);
            admin.shutdown();
        }
        return byName;
    }

    /** INFO commandstats: calls by command name, upper case ("PUBSUB|NUMSUB" for a subcommand). */
    static Map<String, Double> commands(StatefulRedisConnection<String, String> conn) {
        Map<String, Double> calls = new TreeMap<>();
        for (String line : conn.sync().info("commandstats").split("\r\n")) {
            if (line.startsWith("cmdstat_")) {
                // PUBSUB|NUMSUB: no pipe in a table
                String name = line.substring(8, line.indexOf(':')).toUpperCase(Locale.ROOT).replace('|', ' ');
                for (String field : line.substring(line.indexOf(':') + 1).split(",")) {
                    if (field.startsWith("calls=")) {
                        calls.put(name, Double.parseDouble(field.substring(6)));
                    }
                }
            }
        }
        return calls;
    }

    /** The server's CPU time (user + sys), seconds. */
    static double serverCpu(StatefulRedisConnection<String, String> conn) {
        double seconds = 0;
        for (String line : conn.sync().info("cpu").split("\r\n")) {
            if (line.startsWith("used_cpu_sys:") || line.startsWith("used_cpu_user:")) {
                seconds += Double.parseDouble(line.substring(line.indexOf(':') + 1));
            }
        }
        return seconds;
    }

    /** The CPU time of this JVM's live threads, ns. */
    static long clientCpu() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long total = 0;
        for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (info != null) {
                total += Math.max(0, threads.getThreadCpuTime(info.getThreadId()));
            }
        }
        return total;
    }

    /** The context switches of this JVM's threads (voluntary and not), from /proc; 0 where there is none. */
    static long switches() {
        long total = 0;
        try (var tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path task : tasks) {
                try {
                    for (String line : Files.readAllLines(task.resolve("status"))) {
                        if (line.startsWith("voluntary_ctxt_switches:")
                                || line.startsWith("nonvoluntary_ctxt_switches:")) {
                            total += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                        }
                    }
                } catch (java.io.IOException e) {
                    // the thread ended meanwhile
                }
            }
        } catch (java.io.IOException e) {
            return 0;
        }
        return total;
    }

    /** The 1, 5 and 15 minute load averages, or "" where /proc/loadavg is not. */
    static String loadavg() {
        try {
            String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
            return fields[0] + " " + fields[1] + " " + fields[2];
        } catch (java.io.IOException e) {
            return "";
        }
    }

    static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int count = sorted.length;
        return count == 0 ? Double.NaN : count % 2 == 1 ? sorted[count / 2]
                : (sorted[count / 2 - 1] + sorted[count / 2]) / 2;
    }

    static String redisVersion() {
        try {
            Process process = new ProcessBuilder("redis-server", "--version").redirectErrorStream(true).start();
            String version = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            process.waitFor();
            int start = version.indexOf("v=");
            return start < 0 ? version
                    : "redis-server " + version.substring(start + 2,
                            version.indexOf(' ', start) < 0 ? version.length() : version.indexOf(' ', start));
        } catch (Exception e) {
            return "redis-server";
        }
    }

    /** Replaces the Java section of the report at out, or appends it. */
    static void write(Path out, String section) throws java.io.IOException {
        String doc = Files.exists(out) ? Files.readString(out) : "# Performance\n";
        int begin = doc.indexOf(BEGIN);
        int end = doc.indexOf(END);
        if (begin >= 0 && end > begin) {
            doc = doc.substring(0, begin) + section.stripTrailing() + doc.substring(end + END.length());
        } else {
            doc = doc.stripTrailing() + "\n\n" + section;
        }
        Files.writeString(out, doc.endsWith("\n") ? doc : doc + "\n");
    }

    /** The Java section's text. */
    record Section(Setup o, Map<String, Cost> costs, Map<String, List<Run>> cycle, Map<String, List<Run>> floorOf,
            Map<String, List<Map<String, Double>>> shared, Map<String, List<Map<String, Double>>> own)
            implements java.io.Serializable {

        /** The subject's paired ratios to the floor, per round. */
        double[] ratios(String subject) {
            List<Run> runs = cycle.get(subject);
            List<Run> floors = floorOf.get(subject);
            double[] paired = new double[runs.size()];
            for (int i = 0; i < paired.length; i++) {
                paired[i] = runs.get(i).p50() / floors.get(i).p50();
            }
            return paired;
        }

        String ratio(String subject) {
            double[] paired = ratios(subject);
            double[] sorted = paired.clone();
            Arrays.sort(sorted);
            return String.format(Locale.ROOT, "%.2f× <sub>%.2f–%.2f</sub>", median(paired), sorted[0],
                    sorted[sorted.length - 1]);
        }

        double p50(String subject) {
            return median(cycle.get(subject).stream().mapToDouble(Run::p50).toArray());
        }

        boolean loaded() {
            int cores = o.cores();
            for (String load : new String[] {o.loadBefore(), o.loadAfter()}) {
                if (!load.isEmpty() && Double.parseDouble(load.split(" ")[0]) >= cores) {
                    return true;
                }
            }
            return false;
        }

        String text() {
            StringBuilder out = new StringBuilder();
            int cores = o.cores();
            out.append(BEGIN)
                    .append("\n\n## Java: lockbridge-java beside Redisson, RedisLockRegistry and raw Lettuce\n\n");
            out.append("<!-- Generated by `make java-bench` (java/jmh, io.lockbridge.jmh.Report); edits are "
                    + "overwritten. -->\n\n");
            out.append(String.format(Locale.ROOT, "Run %s on %s, Java %s, %d cores; one local redis-server (%s), "
                    + "sharing the cores with the client; load average (1, 5, 15 min) %s before the run and %s after. "
                    + "Every subject has its own client and connections (Lettuce 7.5 for lockbridge-java, the floor "
                    + "and RedisLockRegistry; Redisson's own).%n%n", o.date(), o.os(), o.java(),
                    cores, o.redis(), o.loadBefore(), o.loadAfter()));
            if (loaded()) {
                out.append(String.format(Locale.ROOT, "**Taken on a loaded machine**: the load average reached the "
                        + "number of cores (%d) while other work ran beside the benchmark, so times are longer and "
                        + "more scattered than on an idle machine, and the client, the server and that work took turns "
                        + "on the cores. The paired ratios (\"× floor\") are the figures to read; absolute times only "
                        + "within one table.%n%n", cores));
            }
            if (o.rounds() < 5 || o.iterMs() < 1000 || o.handoffRounds() < 3 || o.handoffMs() < 2000) {
                out.append("**Provisional**: a shorter run than `make java-bench`'s default (5 rounds of 1000 ms "
                        + "iterations, 3 hand-off rounds of 2000 ms); its figures are not the ones to hold the goals "
                        + "against.\n\n");
            }
            cycleTable(out);
            handoffTables(out);
            goals(out);
            out.append('\n').append(analysis());
            out.append("\n").append(END).append("\n");
            return out.toString();
        }

        void cycleTable(StringBuilder out) {
            out.append("### Uncontended cycle: acquire + release, one thread\n\n");
            out.append(String.format(Locale.ROOT, "JMH 1.37 sample time, every run in a fork of its own: 1 warm-up and "
                    + "3 measured iterations of %d ms; %d round%s. The floor is raw Lettuce: `SET key token NX PX` and "
                    + "an `EVALSHA` compare-and-delete on one connection. Each subject's run is paired with a floor "
                    + "run just before it (even rounds) or after it (odd rounds), the subjects' order rotated each "
                    + "round; \"× floor\" is the subject's p50 over the floor's p50 of its pair: median over the "
                    + "rounds, min–max in small print. p50 and p99: medians over the rounds.%n%n", o.iterMs(),
                    o.rounds(), o.rounds() == 1 ? "" : "s"));
            out.append("The other columns come from a separate pass of 5000 cycles per subject, alone (after 3000 of "
                    + "each to warm up): the commands Redis counts per cycle (INFO commandstats; the commands a script "
                    + "runs are counted too), the redis-server's CPU time (INFO cpu), the client JVM's CPU time (all "
                    + "its threads) and its threads' context switches — each switch is a thread put to sleep or woken, "
                    + "the costliest step of a cycle on a VM.\n\n");
            out.append("| subject | p50 µs | p99 µs | × floor | Redis commands / cycle | server CPU µs | client CPU µs "
                    + "| thread switches |\n");
            out.append("|---|---:|---:|---:|---|---:|---:|---:|\n");
            for (String subject : o.subjects()) {
                double p99 = median(cycle.get(subject).stream().mapToDouble(Run::p99).toArray());
                String ratio = subject.equals(FLOOR) ? "1" : ratio(subject);
                Cost cost = costs.get(subject);
                StringBuilder cmds = new StringBuilder();
                cost.commands().forEach((command, calls) -> cmds.append(cmds.length() == 0 ? "" : " + ")
                        .append(command).append(' ')
                        .append(String.format(Locale.ROOT, calls == Math.rint(calls) ? "%.0f" : "%.2f", calls)));
                out.append(String.format(Locale.ROOT, "| %s | %.1f | %.1f | %s | %.0f (%s) | %.1f | %.1f | %.1f |%n",
                        label(subject), p50(subject), p99, ratio,
                        cost.total(), cmds, cost.serverCpu(), cost.clientCpu(), cost.switches()));
            }
            out.append("\n\"floor-via-lockbridge\" sends the floor's two commands through lockbridge-java's own "
                    + "connections (`Redis`: a connection borrowed per call from a per-node pool, reconnect and replay "
                    + "off), without any lock logic: the connections' share of a cycle. Redisson takes an explicit "
                    + "lease (no watchdog); RedisLockRegistry runs its default spin lock.\n\n");
        }

        /** The hand-written part (src/main/resources/analysis.md), or nothing. */
        static String analysis() {
            try (java.io.InputStream in = Report.class.getResourceAsStream("/analysis.md")) {
                return in == null ? "" : new String(in.readAllBytes(), StandardCharsets.UTF_8).stripTrailing() + "\n";
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        static String label(String subject) {
            return subject.equals("modern") ? "**modern**" : subject;
        }

        void handoffTables(StringBuilder out) {
            out.append("### Hand-off: 8 threads, one key\n\n");
            out.append(String.format(Locale.ROOT, "As the Go bench measures it (bench/internal/scenario.Handoff): "
                    + "eight threads take one key in turn; a holder stays inside for %d µs (spinning, yielding to "
                    + "other threads) and releases; a thread that released calls lock again only once another has "
                    + "taken the lock, so every hand-off goes to a thread that was waiting (a releaser retrying at "
                    + "once would often win, and a lock that let one thread barge would look fast). **hand-off**: from "
                    + "one holder's unlock returning to the next holder's lock returning (0 when that came first: the "
                    + "release's notice can overtake its reply); **wait**: a lock call from call to return. A JVM per "
                    + "subject and round (%d round%s, the order rotated), %d ms warm-up then %d ms measured per shape; "
                    + "figures are medians over the rounds (max: the largest); overlaps (two holders inside at once, "
                    + "counted by a guard that is not the lock) summed, and must be 0. Each subject waits its own way: "
                    + "lockbridge-java on its backoff woken by release notices (the legacy lock has none in its "
                    + "protocol: the locker's own releases wake its waiters, others' are found by polling), Redisson "
                    + "on its pub/sub channel, RedisLockRegistry on a local lock per key and then polling Redis every "
                    + "100 ms (its default), the floors polling every millisecond.%n%n", Handoff.HOLD.toNanos() / 1000,
                    o.handoffRounds(), o.handoffRounds() == 1 ? "" : "s", o.handoffMs() / 2, o.handoffMs()));
            handoffTable(out, "One client shared by the eight threads (one locker, as a service's threads use it; the "
                    + "Go bench's shape)", shared);
            handoffTable(out, "A client per thread (eight instances of a fleet, one thread each)", own);
            out.append("None of these locks is fair: a waiter may lose many hand-offs in a row, which is what the "
                    + "wait's p99 shows. Go's modern.Locker serves the waiters of one Locker on one key first come "
                    + "first served (only the head of the line attempts); lockbridge-java's lockers do not keep such a "
                    + "line, so all of a client's waiters attempt on every release notice.\n\n");
        }

        static void handoffTable(StringBuilder out, String title, Map<String, List<Map<String, Double>>> bySubject) {
            out.append(title).append(":\n\n");
            out.append("| subject | hand-off p50 | p90 | p99 | max | wait p50 | wait p99 | cycles/s | hold µs | "
                    + "overlaps |\n");
            out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
            bySubject.forEach((subject, runs) -> out.append(String.format(Locale.ROOT,
                    "| %s | %s | %s | %s | %s | %s | %s | %.0f | %.0f | %.0f |%n", label(subject),
                    us(med(runs, "handoff_p50")), us(med(runs, "handoff_p90")), us(med(runs, "handoff_p99")),
                    us(runs.stream().mapToDouble(x -> x.get("handoff_max")).max().orElse(0)),
                    us(med(runs, "wait_p50")), us(med(runs, "wait_p99")), med(runs, "cycles_per_s"),
                    med(runs, "hold_mean"), runs.stream().mapToDouble(x -> x.get("overlaps")).sum())));
            out.append('\n');
        }

        static double med(List<Map<String, Double>> runs, String figure) {
            return median(runs.stream().mapToDouble(x -> x.get(figure)).toArray());
        }

        /** µs as µs below a millisecond, else ms. */
        static String us(double micros) {
            return micros < 1000 ? String.format(Locale.ROOT, "%.0f µs", micros)
                    : String.format(Locale.ROOT, "%.1f ms", micros / 1000);
        }

        void goals(StringBuilder out) {
            out.append("### Goals\n\n");
            if (cycle.containsKey("modern")) {
                double[] modernRatios = ratios("modern");
                double modernMedian = median(modernRatios);
                out.append(String.format(Locale.ROOT, "- modern's uncontended cycle within 1.10× the floor: %s — %s%n",
                        ratio("modern"), modernMedian <= 1.10 ? "met" : "not met"));
                for (String other : new String[] {"redisson", "redis-lock-registry"}) {
                    if (cycle.containsKey(other)) {
                        double[] otherRatios = ratios(other);
                        int count = Math.min(modernRatios.length, otherRatios.length);
                        double[] relative = new double[count];
                        for (int i = 0; i < count; i++) {
                            relative[i] = modernRatios[i] / otherRatios[i];
                        }
                        double relativeMedian = median(relative);
                        out.append(String.format(Locale.ROOT, "- modern ahead of %s uncontended: modern's floor ratio "
                                + "over %s's, round by round, %.2f (p50 %.1f µs against %.1f µs) — %s%n", other, other,
                                relativeMedian, p50("modern"), p50(other), relativeMedian < 1 ? "met" : "not met"));
                    }
                }
            }
            for (String subject : LOCKBRIDGE) {
                if (shared.containsKey(subject)) {
                    double sharedP99 = med(shared.get(subject), "handoff_p99");
                    double ownP99 = med(own.get(subject), "handoff_p99");
                    out.append(String.format(Locale.ROOT, "- %s hand-off p99 at 8 threads ≤ 10 ms: %s with one client "
                            + "— %s; %s with a client per thread — %s%n", subject, us(sharedP99),
                            sharedP99 <= 10_000 ? "met" : "not met", us(ownP99), ownP99 <= 10_000 ? "met" : "not met"));
                }
            }
        }
    }
}
