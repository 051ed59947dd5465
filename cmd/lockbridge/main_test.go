package main

// The CLI tests build the binary once and run it as a user would, checking
// its output and exit code; real-server cases use internal/testing/redistest.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// bin is the built CLI.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "lockbridge-cli-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "lockbridge")
	args := []string{"build", "-o", bin}
	if raceBuild {
		args = append(args, "-race")
	}
	if out, err := exec.Command("go", append(args, ".")...).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	if code == 0 {
		// The in-process tests (embedded Redis, renderer) leave no goroutine.
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// result of one CLI run.
type result struct {
	stdout, stderr string
	code           int
}

// cli runs the binary with args; env entries are added to (or, with a
// "KEY=" prefix already present, replace) a minimal environment without
// REDIS_URL.
func cli(t *testing.T, stdin string, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TZ=UTC"}, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		require.True(t, ok, "run %v: %v", args, err)
		code = ee.ExitCode()
	}
	return result{out.String(), errb.String(), code}
}

// oneLineError checks a failed run: the wanted exit code and exactly one
// line on stderr, "lockbridge: …", containing want.
func oneLineError(t *testing.T, r result, code int, want string) {
	t.Helper()
	assert.Equal(t, code, r.code, "exit code; stderr: %s", r.stderr)
	assert.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line on stderr: %q", r.stderr)
	assert.True(t, strings.HasPrefix(r.stderr, "lockbridge: "), "stderr: %q", r.stderr)
	assert.Contains(t, r.stderr, want)
	assert.NotContains(t, r.stderr+r.stdout, "panic")
	assert.NotContains(t, r.stderr+r.stdout, "goroutine ")
}
