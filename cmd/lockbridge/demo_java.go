package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver/goredis"
	"github.com/lockbridge/lockbridge/migrate"
)

// defaultJavaJar is where the interop project's Maven build puts the Java
// worker, relative to the repository root.
const defaultJavaJar = "interop/java/worker/target/lockbridge-interop-worker.jar"

// javaDemo is the --java-migrates run: Go workers (migrate.Locker) and
// Java workers (lockbridge-java's MigrateLocker, each in a JVM) follow one
// namespace while the controller steps it legacy -> dual-write -> dual-read
// -> modern; every stage redeploys both (new JVMs, new Go lockers). The
// critical sections are counted by a guard on the embedded Redis: not the
// lock.
type javaDemo struct {
	e        *env
	jar      string
	lockAddr string // host:port the JVMs lock on
	uc       redis.UniversalClient
	guard    *redis.Client
	guardAdr string
	ns, name string
	java     int // JVMs per stage
	gos      int
	lease    time.Duration
	span     time.Duration // contention before and after each step
}

// jvm is one running Java worker.
type jvm struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
}

func (d *javaDemo) startJVM(id string) (*jvm, error) {
	interval := max(d.lease/10, 50*time.Millisecond)
	cmd := exec.Command("java", "-XX:TieredStopAtLevel=1", "-Xmx256m", "-jar", d.jar,
		"--redis="+d.lockAddr, "--guard="+d.guardAdr, "--mode=contend", "--locker=lockbridge-migrate",
		"--namespace="+d.ns, "--interval-ms="+fmt.Sprint(interval.Milliseconds()), "--name="+d.name, "--id="+id,
		"--threads=1", "--lease-ms="+fmt.Sprint(d.lease.Milliseconds()), "--wait-ms=1000", "--hold-ms=1",
		"--duration-ms=600000")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("demo: start java: %w", err)
	}
	j := &jvm{cmd: cmd, stdin: stdin, lines: make(chan string, 16)}
	go func() {
		defer close(j.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			j.lines <- sc.Text()
		}
	}()
	if l, err := j.expect("ready", time.Minute); err != nil {
		j.kill()
		return nil, fmt.Errorf("demo: java worker %s: %w (said %q)", id, err, l)
	}
	return j, nil
}

func (j *jvm) expect(prefix string, d time.Duration) (string, error) {
	select {
	case l, ok := <-j.lines:
		if !ok {
			return "", errors.New("exited")
		}
		if !strings.HasPrefix(l, prefix) {
			return l, fmt.Errorf("want %q", prefix)
		}
		return l, nil
	case <-time.After(d):
		return "", fmt.Errorf("no %q within %v", prefix, d)
	}
}

// stop asks the worker to stop (its lockers close, leaving the registry)
// and waits for it.
func (j *jvm) stop() error {
	_, _ = io.WriteString(j.stdin, "stop\n")
	l, err := j.expect("done", time.Minute)
	_ = j.stdin.Close()
	_ = j.cmd.Wait()
	if err != nil {
		return fmt.Errorf("java worker: %w (said %q)", err, l)
	}
	return nil
}

func (j *jvm) kill() {
	_ = j.cmd.Process.Kill()
	_ = j.cmd.Wait()
}

// goWorkers runs the Go side until stop is closed.
func (d *javaDemo) goWorkers(ctx context.Context, stage int, stop <-chan struct{}, errs chan<- error) *sync.WaitGroup {
	var wg sync.WaitGroup
	interval := max(d.lease/10, 50*time.Millisecond)
	for i := 0; i < d.gos; i++ {
		wg.Add(1)
		go func(id string) {
			defer wg.Done()
			lk := migrate.New(goredis.New(d.uc), migrate.WithPhaseFrom(d.ns), migrate.WithPhaseInterval(interval))
			defer func() { _ = lk.Close(context.Background()) }()
			for {
				select {
				case <-stop:
					return
				case <-ctx.Done():
					return
				default:
				}
				actx, cancel := context.WithTimeout(ctx, time.Second)
				l, err := lk.Lock(actx, d.name, d.lease)
				cancel()
				if err != nil {
					// An attempt whose reply did not come within its second
					// (a loaded machine) has an unknown outcome: if it took
					// the lock, the lock ends with its lease, unused.
					if errors.Is(err, lockbridge.ErrNotObtained) || errors.Is(err, migrate.ErrPhaseUnknown) ||
						errors.Is(err, lockbridge.ErrUnknownOutcome) || ctx.Err() != nil {
						continue
					}
					errs <- fmt.Errorf("%s: %w", id, err)
					return
				}
				if err := d.enter(ctx, id); err != nil {
					errs <- err
				}
				time.Sleep(time.Millisecond)
				if err := d.guard.Decr(context.Background(), "cs:in").Err(); err != nil {
					errs <- err
				}
				if err := l.Unlock(context.Background()); err != nil && !errors.Is(err, lockbridge.ErrNotHeld) {
					errs <- fmt.Errorf("%s: unlock: %w", id, err)
					return
				}
			}
		}(fmt.Sprintf("go-s%d-%d", stage, i))
	}
	return &wg
}

// enter is the guard the Java worker runs too: INCR cs:in (an overlap when
// not 1), INCR acq:<id> and total.
func (d *javaDemo) enter(ctx context.Context, id string) error {
	n, err := d.guard.Incr(ctx, "cs:in").Result()
	if err != nil {
		return err
	}
	if n != 1 {
		if err := d.guard.Incr(ctx, "cs:overlaps").Err(); err != nil {
			return err
		}
	}
	if err := d.guard.Incr(ctx, "acq:"+id).Err(); err != nil {
		return err
	}
	return d.guard.Incr(ctx, "total").Err()
}

// counts sums the guard's counters: Java and Go acquisitions, overlaps.
func (d *javaDemo) counts(ctx context.Context) (javaAcq, goAcq, overlaps int64, err error) {
	keys, err := d.guard.Keys(ctx, "acq:*").Result()
	if err != nil {
		return 0, 0, 0, err
	}
	for _, k := range keys {
		n, err := d.guard.Get(ctx, k).Int64()
		if err != nil {
			return 0, 0, 0, err
		}
		if strings.HasPrefix(k, "acq:java") {
			javaAcq += n
		} else {
			goAcq += n
		}
	}
	overlaps, err = d.guard.Get(ctx, "cs:overlaps").Int64()
	if errors.Is(err, redis.Nil) {
		err = nil
	}
	return javaAcq, goAcq, overlaps, err
}

// run steps the namespace to modern, a stage per step, and returns the
// overlaps counted.
func (d *javaDemo) run(ctx context.Context) (int64, error) {
	// The fleet's phase lease (3 intervals), its lease and the liveness
	// margin: init waits that long for the namespace to show no trace.
	interval := max(d.lease/10, 50*time.Millisecond)
	ctl, err := migrate.NewController(goredis.New(d.uc), d.ns, migrate.WithQuietPeriod(time.Second),
		migrate.WithLivenessMargin(d.lease/4),
		migrate.WithInitSilence(migrate.DefaultPhaseLeaseIntervals*interval+d.lease+d.lease/4))
	if err != nil {
		return 0, err
	}
	if _, err := ctl.Init(ctx, false); err != nil {
		return 0, fmt.Errorf("demo: init %s: %w", d.ns, err)
	}
	fmt.Fprintf(d.e.stdout, "%-24s %10s %10s %9s  %s\n", "stage", "java acq", "go acq", "overlaps",
		"registry before the step")
	for stage, from := 0, migrate.PhaseLegacy; from != migrate.PhaseModern; stage, from = stage+1, from+1 {
		if overlaps, err := d.stage(ctx, ctl, stage, from); err != nil {
			return overlaps, err
		}
	}
	_, _, o, err := d.counts(ctx)
	return o, err
}

// stage is one stage of run: a fresh set of JVMs and Go workers lock for a
// span, the controller steps from the phase from, they lock a span more and
// stop; it prints the stage's line and returns the overlaps counted so far.
func (d *javaDemo) stage(ctx context.Context, ctl *migrate.Controller, stage int, from migrate.Phase) (int64, error) {
	j0, g0, o0, err := d.counts(ctx)
	if err != nil {
		return 0, err
	}
	jvms, err := d.startJVMs(stage)
	if err != nil {
		return 0, err
	}
	stop := make(chan struct{})
	errs := make(chan error, 64)
	wg := d.goWorkers(ctx, stage, stop, errs)
	time.Sleep(d.span)
	reg := liveRegistry(ctx, ctl)
	stepErr := d.step(ctx, ctl)
	if stepErr == nil {
		time.Sleep(d.span)
	}
	close(stop)
	wg.Wait()
	for _, j := range jvms {
		if err := j.stop(); err != nil && stepErr == nil {
			stepErr = err
		}
	}
	close(errs)
	for err := range errs {
		if stepErr == nil {
			stepErr = fmt.Errorf("demo: go worker: %w", err)
		}
	}
	j1, g1, o1, err := d.counts(ctx)
	if err != nil {
		return o1, err
	}
	fmt.Fprintf(d.e.stdout, "%-24s %10d %10d %9d  %s\n", fmt.Sprintf("%v -> %v", from, from+1), j1-j0, g1-g0, o1-o0, reg)
	return o1, stepErr
}

// startJVMs starts the stage's JVMs; when one fails to start, those
// started are killed.
func (d *javaDemo) startJVMs(stage int) ([]*jvm, error) {
	var jvms []*jvm
	for i := 0; i < d.java; i++ {
		j, err := d.startJVM(fmt.Sprintf("java-s%d-%d", stage, i))
		if err != nil {
			for _, j := range jvms {
				j.kill()
			}
			return nil, err
		}
		jvms = append(jvms, j)
	}
	return jvms, nil
}

// liveRegistry is the phase of each live member, "go=…" for this process and
// "java=…" for the JVMs; empty when the status cannot be read.
func liveRegistry(ctx context.Context, ctl *migrate.Controller) string {
	st, err := ctl.Status(ctx)
	if err != nil {
		return ""
	}
	var parts []string
	for _, m := range st.Members {
		if m.Live {
			who := "go"
			if m.PID != os.Getpid() {
				who = "java"
			}
			parts = append(parts, fmt.Sprintf("%s=%v", who, m.Phase))
		}
	}
	return strings.Join(parts, " ")
}

// step advances the controller one step, retrying while it is unsafe.
func (d *javaDemo) step(ctx context.Context, ctl *migrate.Controller) error {
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := ctl.Advance(ctx, false)
		if err == nil || !errors.Is(err, migrate.ErrUnsafeStep) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// runJavaDemo is `lockbridge demo --java-migrates`.
func runJavaDemo(ctx context.Context, e *env, cf connFlags, jar string, java, gos int, lease time.Duration) error {
	lockAddr, ns, err := checkJavaDemo(cf, jar, java)
	if err != nil {
		return err
	}
	uc, where, err := cf.client(e, true)
	if err != nil {
		return err
	}
	defer uc.Close()
	em, err := startEmbedded() // the guard: counts critical sections, not the lock
	if err != nil {
		return err
	}
	defer em.close()
	d := &javaDemo{e: e, jar: jar, lockAddr: lockAddr, uc: uc, guardAdr: em.addr(), ns: ns, name: ns + ":orders",
		java: java, gos: gos, lease: lease, span: 3 * time.Second}
	d.guard = redis.NewClient(&redis.Options{Addr: em.addr(), MaxRetries: -1})
	defer d.guard.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := cf.ping(ctx, uc, where); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "lockbridge demo --java-migrates on %s, namespace %s: %d JVM(s) of lockbridge-java "+
		"and %d Go worker(s) on lock %s, lease %v; every stage redeploys both\n", where, ns, java, gos, d.name, lease)
	overlaps, runErr := d.run(ctx)
	d.cleanup(cf.timeout)
	switch {
	case overlaps > 0:
		return &exitErr{exitOverlap, fmt.Errorf("demo: %d overlaps: two holders held one lock at once", overlaps)}
	case runErr != nil:
		return fmt.Errorf("demo: %s", message(runErr))
	}
	fmt.Fprintln(e.stdout, "the Java workers reached modern with the Go fleet: 0 overlaps")
	return nil
}

// checkJavaDemo checks what --java-migrates needs before anything starts:
// a plain redis:// URL the JVMs can reach (its host:port is returned), Java
// workers, java on PATH and the worker jar, a timeout, and a namespace of
// the demo's own (returned, made up when --namespace is not given).
func checkJavaDemo(cf connFlags, jar string, java int) (lockAddr, ns string, err error) {
	if cf.url == "" || cf.cluster != "" {
		return "", "", usageErrorf("demo: --java-migrates needs --redis redis://host:port: the Java workers run " +
			"in their own JVMs and must reach the same redis-server (the embedded Redis lives in this process)")
	}
	u, err := url.Parse(cf.url)
	if err != nil || u.Scheme != "redis" || u.User != nil || (u.Path != "" && u.Path != "/" && u.Path != "/0") {
		return "", "", usageErrorf("demo: --java-migrates takes a plain redis://host:port URL " +
			"(no password, TLS or database): the Java workers are given host:port")
	}
	if java < 1 {
		return "", "", usageErrorf("demo: --java-migrates needs Java workers (--java >= 1)")
	}
	if _, err := exec.LookPath("java"); err != nil {
		return "", "", fmt.Errorf("demo: --java-migrates: java not found on PATH; install a JDK 17+ " +
			"(sudo apt-get install -y openjdk-17-jdk-headless, or ./scripts/setup.sh)")
	}
	if _, err := os.Stat(jar); err != nil {
		return "", "", fmt.Errorf("demo: --java-migrates: no Java worker at %s; build it from the repository root "+
			"with `cd interop/java && mvn -q -B package -DskipTests`, or name it with --java-jar", jar)
	}
	if cf.timeout <= 0 {
		return "", "", usageErrorf("demo: --timeout must be positive")
	}
	ns = cf.namespace
	if ns == "" {
		ns = fmt.Sprintf("%sjava-%d", demoPrefix, time.Now().UnixNano())
	} else if !strings.HasPrefix(ns, demoPrefix) {
		return "", "", usageErrorf("demo: --namespace must start with %q: the demo runs only in a namespace of its own",
			demoPrefix)
	}
	return u.Host, ns, nil
}

// cleanup deletes the demo's keys: its namespace's, the retired mark (the
// demo's namespace is retired for good) and the lock's.
func (d *javaDemo) cleanup(timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	keys, _ := migrate.NamespaceKeys(d.ns)
	mark, _ := migrate.MarkKey(d.ns)
	keys = append(keys, mark, d.name, "{"+d.name+"}:modern")
	if err := d.uc.Del(ctx, keys...).Err(); err != nil {
		fmt.Fprintf(d.e.stderr, "lockbridge: demo: cleaning up the demo keys: %v\n", err)
	}
}
