package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// git runs a git command in dir.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func peImage() []byte {
	b := make([]byte, 0x100)
	copy(b, "MZ")
	binary.LittleEndian.PutUint32(b[0x3c:], 0x80)
	copy(b[0x80:], "PE\x00\x00")
	return b
}

// TestCheck builds a repository holding one file of each kind and checks
// which treecheck reports.
func TestCheck(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git not installed: apt-get install -y git")
	}
	dir := t.TempDir()
	files := []struct {
		path string
		data []byte
		mode os.FileMode
		bad  string // a word of the finding; "" for none
	}{
		{"main.go", []byte("package main\n"), 0o644, ""},
		{"scripts/run.sh", []byte("#!/bin/sh\necho hi\n"), 0o755, ""},
		{"testdata/big.json", bytes.Repeat([]byte("x"), maxSize+1), 0o644, ""},
		{"pkg/testdata/deep/big.bin", bytes.Repeat([]byte{0}, maxSize+1), 0o644, ""},
		{"docs/small.bin", []byte{0, 1, 2, 3}, 0o644, ""},
		{"docs/big.md", bytes.Repeat([]byte("x"), maxSize+1), 0o644, "over 1 MiB"},
		{"examples/otel/otel", append([]byte("\x7fELF\x02\x01\x01"), make([]byte, 64)...), 0o755, "ELF"},
		{"tool-darwin", []byte{0xcf, 0xfa, 0xed, 0xfe, 7, 0, 0, 1}, 0o644, "Mach-O"},
		{"tool.bin", peImage(), 0o644, "PE"},
		{"Lock.txt", []byte{0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 61}, 0o644, "Java class"},
		{"lib/worker.jar", []byte("PK\x03\x04 not really"), 0o644, "Java archive"},
		{"bench/cpu.pprof", []byte{0x1f, 0x8b, 8, 0}, 0o644, "profile"},
		{"mod.wasm", []byte("\x00asm\x01\x00\x00\x00"), 0o644, "WebAssembly"},
		{"libx.a", []byte("!<arch>\nfoo"), 0o644, "ar archive"},
		{"run-me", []byte("echo no shebang\n"), 0o755, "no #! line"},
		{"bench/results/scale.json", []byte("{}"), 0o644, "result dump"},
		{"bench/results/cpu.txt", []byte("flat flat%"), 0o644, "result dump"},
		{"bench/results/fleet.svg", []byte("<svg/>"), 0o644, ""},
		{"pkg/testdata/results/golden.json", []byte("{}"), 0o644, ""},
	}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.data, f.mode); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "init", "-q")
	git(t, dir, "add", "-A")
	// A file git tracks but the work tree lacks is skipped.
	if err := os.Remove(filepath.Join(dir, "docs", "small.bin")); err != nil {
		t.Fatal(err)
	}
	// An untracked build output is not the check's business (.gitignore's).
	if err := os.WriteFile(filepath.Join(dir, "untracked"), []byte("\x7fELF"), 0o755); err != nil {
		t.Fatal(err)
	}

	entries, err := tracked(dir)
	if err != nil {
		t.Fatal(err)
	}
	findings, err := check(dir, entries)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range findings {
		p, why, _ := strings.Cut(f, ": ")
		got[p] = why
	}
	for _, f := range files {
		why, reported := got[f.path]
		switch {
		case f.bad == "" && reported:
			t.Errorf("%s reported (%s), want it accepted", f.path, why)
		case f.bad != "" && !reported:
			t.Errorf("%s accepted, want a finding naming %q", f.path, f.bad)
		case f.bad != "" && !strings.Contains(why, f.bad):
			t.Errorf("%s: finding %q, want it to name %q", f.path, why, f.bad)
		}
		delete(got, f.path)
	}
	var extra []string
	for p := range got {
		extra = append(extra, p)
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("findings for files not in the test: %v", extra)
	}
}

// TestRepository runs the check on this repository: what `make lint` runs.
func TestRepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git not installed: apt-get install -y git")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	entries, err := tracked(root)
	if err != nil {
		t.Fatal(err)
	}
	findings, err := check(root, entries)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		t.Error(f)
	}
}
