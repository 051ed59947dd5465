package interop

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	goredislib "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/testing/locktest"
	"github.com/lockbridge/lockbridge/internal/testing/redistest"
)

// installHint is what to run when the JDK or Maven is missing.
const installHint = "install a JDK and Maven: sudo apt-get install -y openjdk-17-jdk-headless maven (or run " +
	"./scripts/setup.sh)"

// workerJar is the Java worker, built by TestMain.
var workerJar string

// TestMain builds (and installs) the Java worker and lockbridge-java once
// per run with Maven (which also runs the Java tests of the golden
// vectors), and fails the run when Java or Maven is missing.
func TestMain(m *testing.M) {
	if os.Getenv(goHolderEnv) != "" {
		os.Exit(goHolderMain()) // a Go lock holder the test can SIGKILL (redisson_helpers_test.go)
	}
	if err := build(); err != nil {
		fmt.Fprintf(os.Stderr, "interop: %v\n", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func build() error {
	for _, tool := range []string{"java", "mvn"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s not found on PATH; %s", tool, installHint)
		}
	}
	dir, err := filepath.Abs("java")
	if err != nil {
		return err
	}
	// -B: no colours or progress; the Java tests of the golden vectors run
	// here too (JUnit, surefire). install: lockbridge-java and its test-jar
	// go to the local Maven repository, where the build of the Spring
	// applications (spring_test.go) finds them.
	args := []string{"-q", "-B", "install"}
	if os.Getenv("LOCKBRIDGE_INTEROP_SKIP_JAVA_TESTS") != "" {
		args = append(args, "-DskipTests")
	}
	cmd := exec.Command("mvn", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("mvn %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	workerJar = filepath.Join(dir, "worker", "target", "lockbridge-interop-worker.jar")
	jars := []string{workerJar}
	for _, w := range redissonWorkers {
		w.jar = filepath.Join(dir, w.module, "target", w.file)
		jars = append(jars, w.jar)
	}
	for _, jar := range jars {
		if _, err := os.Stat(jar); err != nil {
			return fmt.Errorf("mvn built no worker jar: %v", err)
		}
	}
	return readRedissonVersions(filepath.Join(dir, "pom.xml"))
}

// env is one test's redis-servers: the lock's and the guard's, and clients
// on both. The guard counts who is inside the critical section: it is not
// the lock.
type env struct {
	srv, guardSrv *redistest.Server
	lock          driver.Client      // lockbridge's client on the lock server
	raw           *goredislib.Client // plain client on the lock server, for byte checks
	guard         *goredislib.Client
}

func newEnv(t *testing.T) *env {
	t.Helper()
	srvs := redistest.StartN(t, 2)
	e := &env{srv: srvs[0], guardSrv: srvs[1]}
	if path := os.Getenv("LOCKBRIDGE_INTEROP_MONITOR"); path != "" {
		// Diagnosis: the guard's counters on the lock's server, and that
		// server's MONITOR written to path-<test>, so one log orders every
		// lock and guard command.
		e.guardSrv = e.srv
		monitor(t, e.srv.Addr(), fmt.Sprintf("%s-%s.log", path, strings.ReplaceAll(t.Name(), "/", "_")))
	}
	e.lock = locktest.GoRedis(t, e.srv)
	e.raw = goredislib.NewClient(&goredislib.Options{Addr: e.srv.Addr(), MaxRetries: -1})
	e.guard = goredislib.NewClient(&goredislib.Options{Addr: e.guardSrv.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = e.raw.Close(); _ = e.guard.Close() })
	return e
}

// enter is the Go side's guard, the same counters the Java worker uses:
// INCR cs:in (an overlap when not 1), INCR acq:<id> and total.
func (e *env) enter(ctx context.Context, id string) error {
	n, err := e.guard.Incr(ctx, "cs:in").Result()
	if err != nil {
		return err
	}
	if n != 1 {
		if err := e.guard.Incr(ctx, "cs:overlaps").Err(); err != nil {
			return err
		}
	}
	if err := e.guard.Incr(ctx, "acq:"+id).Err(); err != nil {
		return err
	}
	return e.guard.Incr(ctx, "total").Err()
}

func (e *env) exit(ctx context.Context) error { return e.guard.Decr(ctx, "cs:in").Err() }

// counter reads a guard counter (0 when absent).
func (e *env) counter(t *testing.T, key string) int64 {
	t.Helper()
	n, err := e.guard.Get(context.Background(), key).Int64()
	if err == goredislib.Nil {
		return 0
	}
	require.NoError(t, err)
	return n
}

// java is one running Java worker.
type java struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *bytes.Buffer
	done   chan struct{}
	mu     sync.Mutex
}

// javaFlags are the worker's flags as a map (see Worker.java).
type javaFlags map[string]string

// startJava starts a worker with the flags, plus --redis for e's lock server
// and --guard for its guard server, and waits for its "ready" line.
func startJava(t *testing.T, e *env, flags javaFlags) *java {
	t.Helper()
	return startJavaAt(t, e, e.srv.Addr(), flags)
}

// startJavaAt is startJava with the worker's lock traffic sent to addr (a
// faultproxy in front of the lock server, say).
func startJavaAt(t *testing.T, e *env, addr string, flags javaFlags) *java {
	t.Helper()
	j := startJVM(t, workerJar, flags, "--redis="+addr, "--guard="+e.guardSrv.Addr())
	j.expect("ready", 60*time.Second)
	return j
}

// startJVM starts jar with the flags and the extra arguments, and returns
// once it runs (its first line is the caller's to read).
func startJVM(t *testing.T, jar string, flags javaFlags, extra ...string) *java {
	t.Helper()
	args := append([]string{"-XX:TieredStopAtLevel=1", "-Xmx256m", "-jar", jar}, extra...)
	for k, v := range flags {
		args = append(args, "--"+k+"="+v)
	}
	cmd := exec.Command("java", args...)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	j := &java{t: t, cmd: cmd, stdin: stdin, lines: make(chan string, 64), stderr: &bytes.Buffer{},
		done: make(chan struct{})}
	cmd.Stderr = &lockedWriter{mu: &j.mu, w: j.stderr}
	require.NoError(t, cmd.Start())
	go func() {
		defer close(j.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			j.lines <- sc.Text()
		}
	}()
	go func() { _ = cmd.Wait(); close(j.done) }()
	t.Cleanup(func() {
		_ = j.stdin.Close()
		_ = j.cmd.Process.Kill()
		<-j.done
		if t.Failed() {
			t.Logf("java worker %v stderr:\n%s", flags, j.Stderr())
		}
	})
	return j
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Stderr returns what the worker wrote to stderr so far.
func (j *java) Stderr() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.stderr.String()
}

// next returns the worker's next stdout line; it fails the test when none
// comes within d (a worker that hangs; not a timing assertion).
func (j *java) next(d time.Duration) string {
	j.t.Helper()
	select {
	case l, ok := <-j.lines:
		if !ok {
			j.t.Fatalf("java worker exited: %s", j.Stderr())
		}
		return l
	case <-time.After(d):
		j.t.Fatalf("java worker said nothing for %v; stderr:\n%s", d, j.Stderr())
	}
	return ""
}

// expect reads the next line and checks that it starts with prefix; it
// returns the rest.
func (j *java) expect(prefix string, d time.Duration) string {
	j.t.Helper()
	l := j.next(d)
	if !strings.HasPrefix(l, prefix) {
		j.t.Fatalf("java worker said %q, want %q…; stderr:\n%s", l, prefix, j.Stderr())
	}
	return strings.TrimSpace(strings.TrimPrefix(l, prefix))
}

// send writes a command line to the worker's stdin.
func (j *java) send(line string) {
	j.t.Helper()
	_, err := io.WriteString(j.stdin, line+"\n")
	require.NoError(j.t, err)
}

// kill SIGKILLs the worker: a crashed holder.
func (j *java) kill() {
	j.t.Helper()
	require.NoError(j.t, j.cmd.Process.Signal(syscall.SIGKILL))
	<-j.done
}

// monitor writes the MONITOR stream of addr to file until the test ends.
func monitor(t *testing.T, addr, file string) {
	f, err := os.Create(file)
	require.NoError(t, err)
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	_, err = io.WriteString(c, "MONITOR\r\n")
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(f, c)
	}()
	t.Cleanup(func() { _ = c.Close(); <-done; _ = f.Close() })
}
