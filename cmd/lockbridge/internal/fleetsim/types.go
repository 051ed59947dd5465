package fleetsim

import (
	"fmt"
	"time"

	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/migrate"
)

// Kind is a worker's kind.
type Kind string

// The worker kinds.
const (
	// Java is a worker running the Java seed algorithm (internal/testing/javareplay): a
	// legacy locker that never migrates.
	Java Kind = "java"
	// Go is a worker running a migrate.Locker in the phase it was last
	// deployed with.
	Go Kind = "go"
)

// Defaults of Config.
const (
	DefaultJavaWorkers = 3
	DefaultGoWorkers   = 4
	DefaultLocks       = 3
	DefaultLease       = 500 * time.Millisecond
	DefaultDuration    = 20 * time.Second
	DefaultQuiet       = 1500 * time.Millisecond
	DefaultHeartbeat   = 200 * time.Millisecond
)

// Limits of Config.
const (
	MaxWorkers = 64
	MaxLocks   = 64
	MinLease   = 20 * time.Millisecond
	// MinStep is the shortest pause between two redeploys that Duration may
	// leave.
	MinStep = 20 * time.Millisecond
)

// Config configures a simulation. The zero value of every field but
// Client means its default.
type Config struct {
	// Client is the Redis the fleet runs on. Required.
	Client driver.Client
	// Fresh says this process started the server for the run (the embedded
	// demo): nothing else can have run there, so Run initialises the
	// namespace at once rather than wait for the init silence, and the
	// controller is told that the server never evicts (an embedded server
	// cannot report its policy).
	Fresh bool
	// Namespace is the migration namespace (its phase key, fleet registry
	// and sightings). Default "fleetsim". It must start at the legacy phase.
	Namespace string
	// Prefix names the locks: Prefix + "0", Prefix + "1", …
	// Default Namespace + ":lock:".
	Prefix string
	// JavaWorkers and GoWorkers are the workers of each kind; Locks the
	// number of lock names they contend for. Defaults 3, 4 and 3. Set
	// NoJava for a fleet without Java workers.
	JavaWorkers, GoWorkers, Locks int
	NoJava                        bool
	// Lease is every lock's lease. Default 500 ms.
	Lease time.Duration
	// Hold is the longest a holder stays in its critical section (each hold
	// is drawn from [Hold/2, Hold]); it must be below Lease/4. Default
	// Lease/25.
	Hold time.Duration
	// Duration is about how long the whole rollout takes, quiet period
	// included: it sets the pace of the redeploys. Default 20 s.
	Duration time.Duration
	// Quiet is the controller's quiet period (migrate.WithQuietPeriod).
	// Default 1.5 s.
	Quiet time.Duration
	// Heartbeat is the Go workers' heartbeat interval
	// (migrate.WithPhaseInterval). Default 200 ms.
	Heartbeat time.Duration
	// Rollback ends the rollout with a rollback from modern to dual-read,
	// redeploying the Go workers back one at a time.
	Rollback bool
	// KeepJava is the unsafe rollout the controller exists to prevent, for
	// tests and for showing what it prevents: the Java workers are never
	// retired, and the deployer forces the controller past the blockers
	// they cause. Overlaps are then expected.
	KeepJava bool
	// OnEvent, if set, receives every event as it happens. Calls are
	// serialized; it must not block for long.
	OnEvent func(Event)
}

// EventKind says what an Event is about.
type EventKind string

// The event kinds.
const (
	EventStart   EventKind = "start"   // the fleet started
	EventPhase   EventKind = "phase"   // the controller moved the fleet's phase
	EventDeploy  EventKind = "deploy"  // a Go worker was redeployed in a new phase
	EventRefused EventKind = "refused" // the controller refused a step
	EventForced  EventKind = "forced"  // a step forced past blockers (KeepJava)
	EventRetire  EventKind = "retire"  // the Java workers were retired
	EventWait    EventKind = "wait"    // the deployer waits (the quiet period)
	EventOverlap EventKind = "overlap" // two holders in one critical section
	EventError   EventKind = "error"   // a worker's Redis error
	EventDone    EventKind = "done"    // the rollout finished
)

// Event is one thing that happened.
type Event struct {
	At   time.Duration // since the start
	Kind EventKind
	Text string
}

func (e Event) String() string {
	return fmt.Sprintf("%6.2fs %-7s %s", e.At.Seconds(), e.Kind, e.Text)
}

// Counts are what a group of workers did.
type Counts struct {
	// Acquired counts the locks taken.
	Acquired int64
	// Contended counts the acquisitions that found the lock held and had
	// to wait (or gave up after a lease of waiting).
	Contended int64
	// Overlaps counts the overlaps this group took part in (on either side).
	Overlaps int64
}

func (c *Counts) add(o Counts) {
	c.Acquired += o.Acquired
	c.Contended += o.Contended
	c.Overlaps += o.Overlaps
}

// WorkerState is what a worker is doing.
type WorkerState string

// The worker states.
const (
	StateRunning   WorkerState = "running"
	StateDeploying WorkerState = "deploying"
	StateRetired   WorkerState = "retired"
	StateStopped   WorkerState = "stopped"
)

// Worker is one worker in a Snapshot.
type Worker struct {
	Name  string // "java-1", "go-2", …
	Kind  Kind
	Phase migrate.Phase // the phase it runs; legacy for a Java worker
	State WorkerState
	Counts
}

// Snapshot is the fleet at one moment.
type Snapshot struct {
	Elapsed time.Duration
	// Phase is the controller's phase; Reached every phase it was moved
	// to, in order, starting with legacy (empty until Run has checked the
	// namespace and started the fleet).
	Phase   migrate.Phase
	Reached []migrate.Phase
	// Stage says what the deployer is doing.
	Stage   string
	Workers []Worker
	// ByKind sums the workers of each kind; ByPhase the Go workers by the
	// phase they ran when they acquired (or waited, or overlapped).
	ByKind  map[Kind]Counts
	ByPhase map[migrate.Phase]Counts
	// Overlaps counts the entries into a critical section that found
	// another holder inside.
	Overlaps int64
	// Refusals counts the steps the controller refused; Forced the steps
	// forced past blockers.
	Refusals, Forced int
	// Errors counts the workers' Redis errors.
	Errors int64
	// FailedClosed counts the lock calls the library refused because it
	// could not be sure (a phase lease that lapsed, a reply that never came)
	// and the releases that found their lease already over: on a loaded
	// machine a worker stalls; these are the library failing closed, not
	// errors.
	FailedClosed int64
	// Step is the pause between two redeploys that Duration works out to.
	Step time.Duration
}

// ReachedAll reports whether the controller moved the fleet through every
// phase.
func (s Snapshot) ReachedAll() bool {
	seen := map[migrate.Phase]bool{}
	for _, p := range s.Reached {
		seen[p] = true
	}
	return seen[migrate.PhaseLegacy] && seen[migrate.PhaseDualWrite] && seen[migrate.PhaseDualRead] &&
		seen[migrate.PhaseModern]
}

// Summary is the end of a run: the last snapshot and what the controller
// said.
type Summary struct {
	Snapshot
	// RefusedSteps are the controller's refusals, one line each;
	// ForcedSteps the steps forced past blockers.
	RefusedSteps, ForcedSteps []string
	// RolledBack reports whether the rollback (Config.Rollback) happened.
	RolledBack bool
	// OverlapsSeen describes the first overlaps.
	OverlapsSeen []string
	// FirstErrors are the first worker errors.
	FirstErrors []string
}
