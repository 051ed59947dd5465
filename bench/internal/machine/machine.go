package machine

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// Env describes where and with what the numbers were measured.
type Env struct {
	Date       string
	CPU        string
	Cores      int
	GOMAXPROCS int
	Kernel     string
	Go         string
	Redis      string
	Modules    map[string]string // module path → version
	// LoadBefore and LoadAfter are /proc/loadavg at the start and the end:
	// other work on the machine shows here.
	LoadBefore, LoadAfter string
	// OtherCPU is the share of the machine's CPU time that processes other
	// than the benchmark and its redis-server used during the run.
	OtherCPU float64
	// Awake is set when the cores were kept from halting (package awake);
	// AwakeNote says why not otherwise.
	Awake     bool
	AwakeNote string
}

// CPUSample is the machine's and two processes' CPU time so far, in clock
// ticks, from /proc.
type CPUSample struct {
	busy, total int64 // all CPUs
	self, redis int64 // this process, redis-server
}

// SampleCPU reads the machine's, this process's and the redis-server at
// redisPID's CPU time so far.
func SampleCPU(redisPID string) (CPUSample, bool) {
	var s CPUSample
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return s, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return s, false
	}
	for i, v := range f[1:] {
		n, _ := strconv.ParseInt(v, 10, 64)
		s.total += n
		if i != 3 && i != 4 { // idle, iowait
			s.busy += n
		}
	}
	var ok bool
	if s.self, ok = procTicks("self"); !ok {
		return s, false
	}
	s.redis, _ = procTicks(redisPID)
	return s, true
}

// procTicks is utime + stime of /proc/pid/stat.
func procTicks(pid string) (int64, bool) {
	if pid == "" {
		return 0, false
	}
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, false
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return u + st, true
}

// OtherShare is the share of all CPU time between a and b used by processes
// other than this one and redis-server.
func OtherShare(a, b CPUSample) float64 {
	total := b.total - a.total
	if total <= 0 {
		return 0
	}
	other := (b.busy - a.busy) - (b.self - a.self) - (b.redis - a.redis)
	return math.Max(0, float64(other)/float64(total))
}

// Loadavg is /proc/loadavg's three load averages.
func Loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// ReportedModules are the modules whose versions the reports state.
var ReportedModules = []string{
	"github.com/redis/go-redis/v9",
	"github.com/bsm/redislock",
	"github.com/go-redsync/redsync/v4",
	"github.com/gomodule/redigo",
	"github.com/redis/rueidis",
}

// Environment describes this machine, this Go and its modules, and the
// redis-server version given.
func Environment(redisVersion string) Env {
	e := Env{
		Date:       time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		CPU:        cpuModel(),
		Cores:      runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		Go:         runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH,
		Redis:      redisVersion,
		Modules:    map[string]string{},
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		e.Kernel = "Linux " + strings.TrimSpace(string(b))
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Replace != nil {
				d = d.Replace
			}
			e.Modules[d.Path] = d.Version
		}
	}
	return e
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}
