package modern_test

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain starts the redis-server the runnable examples talk to, runs the
// tests and fails them if any goroutine outlives them (refreshers, the
// notification hub's reader, calls watching a context). The behaviour tests
// start their own servers through internal/locktest.
func TestMain(m *testing.M) {
	stop, err := startExampleServer()
	if err != nil {
		fmt.Fprintln(os.Stderr, "modern tests:", err)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		stop()
		os.Exit(code)
	}))
}

// exampleSocket is the unix socket of the examples' redis-server.
var exampleSocket string

// startExampleServer runs redis-server on a unix socket in a temporary
// directory (no TCP port to pick). It starts no goroutine, so the leak check
// runs while it is up; stop kills it and removes the directory.
func startExampleServer() (stop func(), err error) {
	bin := os.Getenv("LOCKBRIDGE_REDIS_SERVER")
	if bin == "" {
		bin = "redis-server"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf(`redis-server not found: install it with "sudo apt-get install -y redis-server" or run "make test" (%v)`, err)
	}
	dir, err := os.MkdirTemp("", "modern-example-")
	if err != nil {
		return nil, err
	}
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command(path, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no",
		"--dir", dir, "--logfile", filepath.Join(dir, "redis.log"), "--daemonize", "no")
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	// Linux: the server dies with the test binary (say, on a test timeout).
	if f := reflect.ValueOf(cmd.SysProcAttr).Elem().FieldByName("Pdeathsig"); f.IsValid() && f.Type() == reflect.TypeOf(syscall.SIGKILL) {
		f.Set(reflect.ValueOf(syscall.SIGKILL))
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	stop = func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		os.RemoveAll(dir)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if pingUnix(sock) == nil {
			exampleSocket = sock
			return stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("redis-server on %s did not answer PING within 10s", sock)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func pingUnix(sock string) error {
	c, err := net.DialTimeout("unix", sock, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING: %q", line)
	}
	return nil
}
