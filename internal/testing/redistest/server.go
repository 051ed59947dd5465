package redistest

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/internal/protocol/resp"
)

const (
	// envServerPath overrides the redis-server binary that is used.
	envServerPath = "LOCKBRIDGE_REDIS_SERVER"

	missingServerMsg = `redis-server not found in PATH: install it with "sudo apt-get install -y redis-server" (Debian/Ubuntu) or "brew install redis" (macOS), or run "make test", whose scripts/setup.sh installs it`

	startAttempts = 5                // ports tried before giving up
	readyTimeout  = 10 * time.Second // until a started server must answer PING
	stopTimeout   = 5 * time.Second  // from SIGTERM to SIGKILL
	probeTimeout  = time.Second      // for one readiness probe
	pollInterval  = 20 * time.Millisecond
	logTailLines  = 50

	// Ports are chosen in [portMin, portMax) so that the cluster bus port
	// (port+busPortOffset) is valid as well.
	portMin       = 20000
	portMax       = 55000
	busPortOffset = 10000

	logFileName     = "redis.log"
	nodesConfigName = "nodes.conf"
)

// Server is one redis-server process on a free loopback port.
type Server struct {
	tb      testing.TB
	bin     string
	dir     string
	cluster bool
	extra   []string     // more redis-server arguments (a replica's --replicaof)
	conf    string       // a configuration file, passed first (a sentinel's)
	out     lockedBuffer // the process's stdout and stderr

	opMu sync.Mutex // serialises Stop, Kill and Restart

	mu   sync.Mutex // guards port and proc
	port int
	proc *process // nil while not running
}

// process is one run of redis-server.
type process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has exited and been reaped
	err  error         // result of cmd.Wait; read only after done is closed
}

// Start starts one redis-server and returns once it answers PING. The server is
// stopped when the test finishes.
func Start(tb testing.TB) *Server {
	tb.Helper()
	return startServers(tb, 1, false)[0]
}

// StartPersistent starts one redis-server with the append-only file on and
// fsynced before every reply (--appendonly yes --appendfsync always): a
// Restart keeps every write the server acknowledged. It is stopped when the
// test finishes.
func StartPersistent(tb testing.TB) *Server {
	tb.Helper()
	bin := serverBinary(tb)
	s := newServer(tb, bin, false)
	s.extra = []string{"--appendonly", "yes", "--appendfsync", "always"}
	if err := s.launch(); err != nil {
		tb.Fatalf("redistest: starting a persistent redis-server: %v\n%s", err, s.logReport())
	}
	return s
}

// StartN starts n independent redis-servers concurrently and returns once all
// of them answer PING. They are stopped when the test finishes.
func StartN(tb testing.TB, n int) []*Server {
	tb.Helper()
	if n < 0 {
		tb.Fatalf("redistest: StartN(%d): n must not be negative", n)
	}
	return startServers(tb, n, false)
}

// startServers creates n servers, starts them concurrently and fails the test
// if any of them does not come up.
func startServers(tb testing.TB, n int, cluster bool) []*Server {
	tb.Helper()
	bin := serverBinary(tb)
	servers := make([]*Server, n)
	for i := range servers {
		servers[i] = newServer(tb, bin, cluster)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Add(1)
		go func(i int, s *Server) {
			defer wg.Done()
			errs[i] = s.launch()
		}(i, s)
	}
	wg.Wait()
	var failures []string
	for i, err := range errs {
		if err != nil {
			failures = append(failures, fmt.Sprintf("server %d of %d: %v\n%s", i+1, n, err, servers[i].logReport()))
		}
	}
	if len(failures) > 0 {
		tb.Fatalf("redistest: starting redis-server:\n%s", strings.Join(failures, "\n"))
	}
	return servers
}

// serverBinary returns the path of the redis-server binary or fails the test.
func serverBinary(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv(envServerPath); p != "" {
		path, err := exec.LookPath(p)
		if err != nil {
			tb.Fatalf("redistest: %s=%q does not name an executable redis-server: %v", envServerPath, p, err)
		}
		return path
	}
	path, err := exec.LookPath("redis-server")
	if err != nil {
		tb.Fatalf("%s", missingServerMsg)
	}
	return path
}

// newServer prepares a Server (not yet running) and registers its cleanup.
func newServer(tb testing.TB, bin string, cluster bool) *Server {
	tb.Helper()
	// TempDir registers its own cleanup first, so the directory is removed
	// only after s.cleanup has stopped the process and reported its log.
	s := &Server{tb: tb, bin: bin, dir: tb.TempDir(), cluster: cluster}
	tb.Cleanup(s.cleanup)
	return s
}

func (s *Server) cleanup() {
	s.Stop()
	if s.tb.Failed() {
		s.tb.Logf("redistest: redis-server %s (dir %s):\n%s", s.Addr(), s.dir, s.logReport())
	}
}

// Addr returns the server's address, "127.0.0.1:PORT".
func (s *Server) Addr() string {
	return addrOf(s.portNum())
}

// URL returns the server's address as "redis://127.0.0.1:PORT".
func (s *Server) URL() string {
	return "redis://" + s.Addr()
}

// Stop stops the server: SIGTERM, then SIGKILL if it has not exited after 5 s.
// It returns once the process has exited. Stopping a paused server works.
// Stop is idempotent.
func (s *Server) Stop() {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	if p := s.takeProc(); p != nil {
		p.stop()
	}
}

// Kill kills the server with SIGKILL and returns once the process has exited.
// Kill is idempotent.
func (s *Server) Kill() {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	if p := s.takeProc(); p != nil {
		p.kill()
	}
}

// Restart starts the server again on the same port, stopping it first if it
// is running, and returns once it answers PING. The dataset is empty after a
// restart (persistence is off), except for a server of StartPersistent,
// which reloads its append-only file; a cluster node keeps its nodes.conf and so
// rejoins its cluster with its slots. Restart fails the test if the server
// cannot be started, so call it from the test goroutine.
func (s *Server) Restart() {
	s.tb.Helper()
	s.opMu.Lock()
	defer s.opMu.Unlock()
	if p := s.takeProc(); p != nil {
		p.stop()
	}
	port := s.portNum()
	if port == 0 {
		s.tb.Fatalf("redistest: Restart of a server that was never started")
	}
	p, err := s.startOnce(port)
	if err != nil {
		s.tb.Fatalf("redistest: restarting redis-server on %s: %v\n%s", addrOf(port), err, s.logReport())
	}
	s.mu.Lock()
	s.proc = p
	s.mu.Unlock()
}

// Pause stops the server process with SIGSTOP, which simulates a hung server:
// connections are still accepted by the kernel but nothing is answered. It
// reports a test error if the server is not running.
func (s *Server) Pause() {
	s.tb.Helper()
	p := s.currentProc()
	if p == nil {
		s.tb.Errorf("redistest: Pause of redis-server %s, which is not running", s.Addr())
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGSTOP)
}

// Resume continues a paused server with SIGCONT. It does nothing if the server
// is not running.
func (s *Server) Resume() {
	if p := s.currentProc(); p != nil {
		_ = p.cmd.Process.Signal(syscall.SIGCONT)
	}
}

// Log returns the server's log file so far (covering every start, including
// restarts), followed by anything the process wrote to stdout or stderr.
func (s *Server) Log() string {
	data, err := os.ReadFile(filepath.Join(s.dir, logFileName))
	var b strings.Builder
	switch {
	case err == nil:
		b.Write(data)
	case !errors.Is(err, os.ErrNotExist):
		fmt.Fprintf(&b, "redistest: reading log: %v\n", err)
	}
	if out := s.out.String(); out != "" {
		b.WriteString("--- redis-server stdout/stderr ---\n")
		b.WriteString(out)
	}
	return b.String()
}

// logReport is the tail of Log for failure messages.
func (s *Server) logReport() string {
	log := s.Log()
	if log == "" {
		return "(redis-server log is empty)"
	}
	return fmt.Sprintf("--- last %d lines of redis-server log ---\n%s", logTailLines, tail(log, logTailLines))
}

func (s *Server) portNum() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.port
}

func (s *Server) takeProc() *process {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.proc
	s.proc = nil
	return p
}

func (s *Server) currentProc() *process {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc
}

// launch starts the server on a fresh port, trying up to startAttempts ports.
func (s *Server) launch() error {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	var errs []error
	for attempt := 0; attempt < startAttempts; attempt++ {
		port, err := reservePort()
		if err != nil {
			return err
		}
		// A node that failed to start on another port must not reuse that
		// port's cluster identity.
		_ = os.Remove(filepath.Join(s.dir, nodesConfigName))
		s.mu.Lock()
		s.port = port
		s.mu.Unlock()
		p, err := s.startOnce(port)
		if err == nil {
			s.mu.Lock()
			s.proc = p
			s.mu.Unlock()
			return nil
		}
		errs = append(errs, fmt.Errorf("attempt %d: %w", attempt+1, err))
	}
	return fmt.Errorf("no attempt succeeded: %w", errors.Join(errs...))
}

// startOnce runs redis-server on port and waits until it is ready. On error
// the process has been killed and reaped.
func (s *Server) startOnce(port int) (*process, error) {
	args := []string{
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--protected-mode", "no",
		"--dir", s.dir,
		"--logfile", filepath.Join(s.dir, logFileName),
		"--daemonize", "no",
	}
	if s.cluster {
		args = append(args,
			"--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(s.dir, nodesConfigName),
			"--cluster-node-timeout", "5000",
		)
	}
	args = append(args, s.extra...)
	if s.conf != "" {
		args = append([]string{s.conf}, args...)
	}
	cmd := exec.Command(s.bin, args...)
	cmd.Dir = s.dir
	cmd.Stdout = &s.out
	cmd.Stderr = &s.out
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	setParentDeathSignal(cmd.SysProcAttr)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	if err := waitReady(addrOf(port), p); err != nil {
		p.kill()
		return nil, err
	}
	return p, nil
}

// waitReady polls the server until it answers PING and turns out to be our
// process (and not another server that got the port first).
func waitReady(addr string, p *process) error {
	deadline := time.Now().Add(readyTimeout)
	for {
		select {
		case <-p.done:
			return fmt.Errorf("redis-server exited during startup on %s: %v", addr, p.err)
		default:
		}
		err := probe(addr, p.cmd.Process.Pid)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server on %s did not answer PING within %v: %v", addr, readyTimeout, err)
		}
		select {
		case <-p.done:
		case <-time.After(pollInterval):
		}
	}
}

// probe checks that the server at addr answers PING and has process id pid.
func probe(addr string, pid int) error {
	if err := ping(addr, probeTimeout); err != nil {
		return err
	}
	c, err := resp.Dial(addr, probeTimeout)
	if err != nil {
		return err
	}
	defer c.Close()
	info, err := c.Do("INFO", "server")
	if err != nil {
		return err
	}
	text, _ := info.(string)
	got := resp.ParseInfo(text)["process_id"]
	if got != strconv.Itoa(pid) {
		return fmt.Errorf("%s is served by process %q, not by the redis-server just started (pid %d)", addr, got, pid)
	}
	return nil
}

func (p *process) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	// A paused process handles the SIGTERM only once it is continued.
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	timer := time.NewTimer(stopTimeout)
	defer timer.Stop()
	select {
	case <-p.done:
	case <-timer.C:
		p.kill()
	}
}

func (p *process) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// setParentDeathSignal asks the kernel to SIGKILL redis-server if the test
// binary dies without running its cleanups (for example on a test timeout).
// The field exists on Linux and FreeBSD only, hence reflection.
func setParentDeathSignal(attr *syscall.SysProcAttr) {
	f := reflect.ValueOf(attr).Elem().FieldByName("Pdeathsig")
	sig := reflect.ValueOf(syscall.SIGKILL)
	if f.IsValid() && f.CanSet() && f.Type() == sig.Type() {
		f.Set(sig)
	}
}

// Ports handed out by this process; never reused, so that a restarted server
// finds its port free and two servers never share one.
var (
	portsMu   sync.Mutex
	portsUsed = map[int]bool{}
)

// reservePort picks a random port p in [portMin, portMax) such that p and the
// cluster bus port p+busPortOffset are both free, and marks both as used.
func reservePort() (int, error) {
	portsMu.Lock()
	defer portsMu.Unlock()
	for i := 0; i < 1000; i++ {
		p := portMin + rand.Intn(portMax-portMin)
		bus := p + busPortOffset
		if portsUsed[p] || portsUsed[bus] || !portFree(p) || !portFree(bus) {
			continue
		}
		portsUsed[p] = true
		portsUsed[bus] = true
		return p, nil
	}
	return 0, errors.New("redistest: no free loopback port pair found")
}

func portFree(port int) bool {
	l, err := net.Listen("tcp", addrOf(port))
	if err != nil {
		return false
	}
	_ = l.Close()
	return true
}

func addrOf(port int) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// ping checks that the server at addr answers PING within timeout.
func ping(addr string, timeout time.Duration) error {
	c, err := resp.Dial(addr, timeout)
	if err != nil {
		return err
	}
	defer c.Close()
	reply, err := c.Do("PING")
	if err != nil {
		return err
	}
	if reply != "PONG" {
		return fmt.Errorf("unexpected reply to PING: %q", reply)
	}
	return nil
}
