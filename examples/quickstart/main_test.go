package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"testing"

	"github.com/lockbridge/lockbridge/internal/testing/redistest"
)

// TestRun runs the README's first program against a real redis-server and
// checks what it prints.
func TestRun(t *testing.T) {
	srv := redistest.Start(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	err = run(context.Background(), srv.Addr())
	os.Stdout = stdout
	w.Close()
	var out bytes.Buffer
	if _, cerr := io.Copy(&out, r); cerr != nil {
		t.Fatal(cerr)
	}
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	want := `TryLock: holding orders:42
Lock while held: true
Unlock: released
Lock after the release: holding orders:42
`
	if out.String() != want {
		t.Errorf("printed\n%s\nwant\n%s", out.String(), want)
	}
}
