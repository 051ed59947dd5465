package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/lockbridge/lockbridge/bench/internal/delayproxy"
)

// serveProxy is the -delay-proxy mode: a delay proxy to upstream adding rtt,
// its address printed on stdout, serving until stdin closes.
func serveProxy(upstream string, rtt time.Duration) error {
	// Two Ps more than the cores: the deliverers hold theirs while they
	// sleep (package delayproxy).
	runtime.GOMAXPROCS(runtime.NumCPU() + 2)
	p, err := delayproxy.Start(upstream, rtt)
	if err != nil {
		return err
	}
	defer p.Close()
	fmt.Println(p.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

// startProxy runs a delay proxy to upstream adding rtt in a process of its
// own (this program, in its -delay-proxy mode), as a network is no part of
// the client: in this process its threads would wait for the Go scheduler
// behind the benchmark's goroutines. stop ends it.
func startProxy(upstream string, rtt time.Duration) (addr string, stop func(), err error) {
	self, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(self, "-delay-proxy", upstream, "-delay", rtt.String())
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop = func() {
		_ = in.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			logf("the delay proxy did not stop: killing it")
			_ = cmd.Process.Kill()
			<-done
		}
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("delay proxy: %w", err)
	}
	return strings.TrimSpace(line), stop, nil
}
