package main

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lockbridge/lockbridge/internal/testing/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deadAddr is a loopback address nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	a := l.Addr().String()
	require.NoError(t, l.Close())
	return a
}

// Usage errors: exit 2 and one line that says what to do.
func TestUsageErrorsTeach(t *testing.T) {
	t.Parallel()
	dead := "redis://" + deadAddr(t)
	for _, tc := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"--redis", "127.0.0.1:6379", "fleet"},
			"bad Redis URL --redis 127.0.0.1:6379: no scheme; did you mean redis://127.0.0.1:6379 (rediss://127.0.0.1:6379 " +
				"for TLS)?"},
		{nil, []string{"fleet", "--redis", "localhost:6379"}, "did you mean redis://localhost:6379"},
		{[]string{"REDIS_URL=10.0.0.1:6379"}, []string{"inspect", "k"},
			"bad Redis URL REDIS_URL=10.0.0.1:6379: no scheme; did you mean redis://10.0.0.1:6379"},
		{nil, []string{"fleet", "--redis", "app:s3cret@10.0.0.1:6379"}, "did you mean redis://app:xxxxx@10.0.0.1:6379"},
		{nil, []string{"phase", "set", "dual-write", "--redis", dead},
			"phase set changes a namespace: name it with --namespace NAME"},
		{nil, []string{"phase", "init", "--silence", "10ms", "--redis", dead}, "phase init changes a namespace"},
		{nil, []string{"phase", "repair", "--to", "legacy", "--redis", dead}, "phase repair changes a namespace"},
		{nil, []string{"phase", "repair", "--namespace", "n", "--redis", dead}, "phase repair needs --to PHASE"},
		{nil, []string{"inspect", "k", "--output", "yaml"}, `bad --output "yaml": want text or json`},
		{nil, []string{"-o", "json", "demo"}, "demo has no --output json"},
		{nil, []string{"unlock", "--force", "k", "-o", "json"}, "unlock has no --output json"},
		{nil, []string{"fleet", "forget"}, "fleet takes no arguments, or forget ID"},
		{nil, []string{"fleet", "cleanup", "--redis", dead},
			"fleet cleanup removes the namespace's evidence: name it with --namespace"},
		{nil, []string{"fleet", "cleanup", "--namespace", "n", "--margin", "5s", "--redis", dead},
			"--margin 5s: want at least 1m0s"},
		{nil, []string{"fleet", "cleanup", "--namespace", "n", "--quiet", "1m", "--redis", dead},
			"--quiet 1m0s is below the default 15m0s"},
		{nil, []string{"fleet", "cleanup", "--namespace", "n", "--force", "--redis", dead}, "fleet cleanup has no --force"},
		{nil, []string{"fleet", "cleanup", "--namespace", "n", "--key", "", "--redis", dead}, "--key must not be empty"},
		{nil, []string{"fleet", "cleanup", "extra", "--namespace", "n", "--redis", dead}, "fleet cleanup takes no arguments"},
		{nil, []string{"fleet", "--watch", "--interval", "0s", "--redis", dead}, "--interval 0s: want a positive duration"},
		{nil, []string{"fleat"}, `unknown command "fleat" (did you mean fleet?`},
		{nil, []string{"phase", "sett"}, `unknown subcommand "sett"`},
		{nil, []string{"--nope", "fleet"}, "unknown flag: --nope"},
		{nil, []string{"fleet", "--timeout", "soon"}, `invalid argument "soon" for "--timeout" flag`},
		{nil, []string{"phase", "set", "sideways", "--namespace", "n"}, "sideways"},
	} {
		r := cli(t, "", tc.env, tc.args...)
		oneLineError(t, r, exitUsage, tc.want)
		assert.NotContains(t, r.stderr, "s3cret", "passwords stay out of messages")
		assert.Empty(t, r.stdout, "%v", tc.args)
	}
}

// Flags go before or after the command, its subcommand and its arguments.
func TestFlagsAnywhere(t *testing.T) {
	t.Parallel()
	_, env := server(t)
	url := strings.TrimPrefix(env[0], "REDIS_URL=")
	for _, args := range [][]string{
		{"--redis", url, "--namespace", "anywhere", "phase", "init", "--silence", "10ms"},
		{"phase", "--redis", url, "get", "--namespace", "anywhere"},
		{"phase", "get", "--namespace=anywhere", "--redis=" + url},
		{"--output", "json", "phase", "get", "--namespace", "anywhere", "--redis", url},
	} {
		r := cli(t, "", nil, args...)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
		assert.Contains(t, r.stdout, "legacy", "%v", args)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--version"}, {"-v"}} {
		r := cli(t, "", nil, args...)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Regexp(t, `^lockbridge \S+ \(commit [^,]+, go1\.[0-9.]+\)\n$`, r.stdout)
	}
	bi := &debug.BuildInfo{GoVersion: "go1.21.0", Main: debug.Module{Path: "github.com/lockbridge/lockbridge",
		Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time",
			Value: "2026-11-25T07:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	assert.Equal(t, "v1.2.3 (commit 0123456789ab+modified of 2026-11-25T07:00:00Z, go1.21.0)", versionOf(bi))
	bi = &debug.BuildInfo{GoVersion: "go1.22.1", Main: debug.Module{Version: "(devel)"}}
	assert.Equal(t, "(devel) (commit unknown, go1.22.1)", versionOf(bi))
}

// Every command and subcommand has --help: its usage line on stdout, exit 0.
func TestHelpEverywhere(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"demo"}, {"inspect"}, {"phase"}, {"phase", "get"}, {"phase", "set"}, {"phase", "init"}, {"phase", "repair"},
		{"fleet"}, {"fleet", "forget"}, {"unlock"}, {"doctor"}, {"completion"}, {"completion", "bash"},
	} {
		r := cli(t, "", nil, append(args, "--help")...)
		assert.Equal(t, 0, r.code, "%v", args)
		assert.True(t, strings.HasPrefix(r.stdout, "Usage: lockbridge "+strings.Join(args, " ")), "%v: %s", args, r.stdout)
		assert.Empty(t, r.stderr)
	}
}

func TestCompletion(t *testing.T) {
	t.Parallel()
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		r := cli(t, "", nil, "completion", sh)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stdout, "lockbridge", sh)
	}
	r := cli(t, "", nil, "__complete", "phase", "set", "")
	require.Equal(t, 0, r.code, r.stderr)
	for _, p := range []string{"legacy", "dual-write", "dual-read", "modern"} {
		assert.Contains(t, r.stdout, p+"\n")
	}
	r = cli(t, "", nil, "__complete", "fl")
	assert.Contains(t, r.stdout, "fleet")
	r = cli(t, "", nil, "__complete", "inspect", "k", "--output", "")
	assert.Contains(t, r.stdout, "json\n")
}

// fakeSlowPing is a server that answers PING after delay and every other
// command with an error at once: enough for go-redis to connect (HELLO
// refused, it falls back to RESP2).
func fakeSlowPing(t *testing.T, delay time.Duration) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan struct{})
	t.Cleanup(func() { close(done); _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					words, err := readCommand(r)
					if err != nil {
						return
					}
					reply := "-ERR fake server: no " + words[0] + "\r\n"
					if strings.EqualFold(words[0], "PING") {
						select {
						case <-time.After(delay):
						case <-done:
							return
						}
						reply = "+PONG\r\n"
					}
					if _, err := c.Write([]byte(reply)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

// readCommand reads one RESP array of bulk strings.
func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "*")))
	if err != nil || n < 1 {
		return nil, net.ErrClosed
	}
	words := make([]string, n)
	for i := range words {
		if _, err := r.ReadString('\n'); err != nil {
			return nil, err
		}
		w, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		words[i] = strings.TrimRight(w, "\r\n")
	}
	return words, nil
}

// --timeout is honoured beyond go-redis' default 3 s read timeout: a PING
// answered after 3.5 s is an answer under --timeout 10s, and no answer
// under --timeout 1s.
func TestTimeoutBeyondThreeSeconds(t *testing.T) {
	t.Parallel()
	addr := fakeSlowPing(t, 3500*time.Millisecond)
	r := cli(t, "", nil, "phase", "get", "--redis", "redis://"+addr, "--timeout", "10s")
	assert.Equal(t, 1, r.code)
	assert.NotContains(t, r.stderr, "no answer", "the PING came within --timeout")
	assert.Contains(t, r.stderr, "fake server", "it went past the PING")
	r = cli(t, "", nil, "phase", "get", "--redis", "redis://"+addr, "--timeout", "1s")
	oneLineError(t, r, 1, "cannot reach Redis "+addr+": no answer within 1s")
}

// An unreachable host, refused credentials and a database the server does
// not have are three different messages.
func TestConnectionFailuresDiffer(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	dead := deadAddr(t)
	cases := []struct {
		url, want string
	}{
		{"redis://" + dead, "cannot reach Redis " + dead + ": dial tcp"},
		{"redis://nobody:s3cret@" + srv.Addr(), "Redis " + srv.Addr() + " refused the credentials: WRONGPASS"},
		{"redis://" + srv.Addr() + "/99", "Redis " + srv.Addr() + " has no such database: ERR DB index is out of range"},
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		r := cli(t, "", nil, "fleet", "--redis", tc.url)
		oneLineError(t, r, 1, tc.want)
		assert.NotContains(t, r.stderr, "s3cret")
		kind := regexp.MustCompile(`^lockbridge: (cannot reach|Redis \S+ (refused|has no))`).FindString(r.stderr)
		assert.NotEmpty(t, kind, r.stderr)
		assert.False(t, seen[kind], "a message of its own: %s", r.stderr)
		seen[kind] = true
	}
}

// startCLI starts the binary with its output in buffers it returns.
func startCLI(t *testing.T, env []string, args ...string) (*exec.Cmd, *syncBuffer, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TZ=UTC"}, env...)
	out, errb := &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, errb
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	return cmd, out, errb
}

// waitFor waits until cond holds, failing the test after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// exitOf waits for cmd and returns its exit code.
func exitOf(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Wait()
	if err == nil {
		return 0
	}
	ee, ok := err.(*exec.ExitError)
	require.True(t, ok, "%v", err)
	return ee.ExitCode()
}

// fleet --watch shows changes live and ends with exit 130 on Ctrl-C.
func TestFleetWatch(t *testing.T) {
	t.Parallel()
	_, env := server(t)
	r := cli(t, "", env, "phase", "init", "--silence", "10ms", "--namespace", "w")
	require.Equal(t, 0, r.code, r.stderr)

	cmd, out, errb := startCLI(t, env, "fleet", "--watch", "--interval", "100ms", "--namespace", "w")
	waitFor(t, "a first report", func() bool { return strings.Contains(out.String(), "namespace w: phase legacy") })
	r = cli(t, "", env, "phase", "set", "dual-write", "--namespace", "w")
	require.Equal(t, 0, r.code, r.stderr)
	waitFor(t, "the new phase", func() bool { return strings.Contains(out.String(), "namespace w: phase dual-write") })
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	assert.Equal(t, exitInterrupted, exitOf(t, cmd))
	assert.Equal(t, "lockbridge: interrupted\n", errb.String())
	assert.Contains(t, out.String(), "lockbridge fleet --watch: every 100ms")
	assert.NotContains(t, out.String(), "\x1b", "not a terminal: no escape sequences")

	// JSON: one document a line.
	cmd, out, _ = startCLI(t, env, "fleet", "-w", "--interval", "100ms", "--namespace", "w", "-o", "json")
	waitFor(t, "two readings", func() bool { return strings.Count(out.String(), "\n") >= 2 })
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	assert.Equal(t, exitInterrupted, exitOf(t, cmd))
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		doc := decodeJSON(t, line)
		assert.Equal(t, "lockbridge.fleet/v1", doc["schema"])
		assert.Equal(t, "dual-write", doc["phase"])
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Ctrl-C at unlock's confirmation prompt ends it at once: exit 130, nothing
// deleted.
func TestInterruptAtPrompt(t *testing.T) {
	t.Parallel()
	c, env := server(t)
	ctx := context.Background()
	_, err := c.Do(ctx, "SET", "stuck", "1700000000001")
	require.NoError(t, err)
	cmd := exec.Command(bin, "unlock", "--force", "stuck")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	stdin, err := cmd.StdinPipe() // open, never answered
	require.NoError(t, err)
	defer stdin.Close()
	out, errb := &syncBuffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, errb
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	waitFor(t, "the prompt", func() bool { return strings.Contains(out.String(), "[y/N]") })
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	assert.Equal(t, exitInterrupted, exitOf(t, cmd))
	assert.Equal(t, "lockbridge: interrupted\n", errb.String())
	v, ok, err := c.Get(ctx, "stuck")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "1700000000001", v)
}

// Ctrl-C ends the demo: its workers stop, exit 130.
func TestInterruptDemo(t *testing.T) {
	t.Parallel()
	cmd, out, errb := startCLI(t, nil, "demo", "--duration", "30s")
	waitFor(t, "the demo to start", func() bool { return strings.Contains(out.String(), "START") })
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	assert.Equal(t, exitInterrupted, exitOf(t, cmd))
	assert.Equal(t, "lockbridge: interrupted\n", errb.String())
}
