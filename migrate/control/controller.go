package control

import (
	"log/slog"

	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/lockbridge/lockbridge"
	"github.com/lockbridge/lockbridge/driver"
	"github.com/lockbridge/lockbridge/internal/protocol/migrateproto"
	"github.com/lockbridge/lockbridge/internal/runtime/check"
	"github.com/lockbridge/lockbridge/internal/runtime/telemetry"
	"github.com/lockbridge/lockbridge/migrate"
)

var (
	// ErrUnsafeStep means Advance refused a step; Status().Blockers says why.
	ErrUnsafeStep = errors.New("migrate: unsafe step")
	// errPhaseChanged means another controller moved the phase meanwhile.
	errPhaseChanged = errors.New("migrate: phase changed meanwhile")
	// ErrAlreadyInitialized means Init found the namespace with a phase.
	ErrAlreadyInitialized = errors.New("migrate: namespace already initialised")
)

// DefaultQuietPeriod is how long no legacy sighting may have been recorded
// (and, for the step to DualRead, how long the fleet must have run
// DualWrite) before the controller allows a step beyond DualWrite.
const DefaultQuietPeriod = 15 * time.Minute

// DefaultLivenessMargin is how long after its expiry a registry entry still
// counts as live. Expiry and now are both the server's clock, so the margin
// only covers what one clock cannot: the client's monotonic clock and the
// server's running at different rates over a hold (ppm: milliseconds), the
// server's clock stepped by NTP, and a failover to a replica whose clock
// differs from the old primary's (NTP keeps these well under a second).
const DefaultLivenessMargin = 5 * time.Second

// stepWindow is how long after its reading (by the server's clock) a step
// may still be set: phase_set.lua sets nothing later, nor on a namespace
// set since the reading (another generation). A step whose caller gave up
// may still be on its way and reach the server long after — after a
// rollback that put the same phase back, or after evidence its reading
// never saw (a legacy sighting, a registry entry) — and must not move the
// fleet on a judgement that old. A reading of the largest registries takes
// a fraction of it; a step refused for lateness is refused, not taken.
const stepWindow = 5 * time.Second

// DefaultInitSilence is how long Init waits, by default, for a namespace
// without a trace to stay so: a fleet on the default phase interval (a
// phase lease of 24 s) with the default liveness margin (5 s) and leases up
// to 1m31s. See WithInitSilence.
const DefaultInitSilence = 2 * time.Minute

// Controller moves a namespace's fleet through the phases one step at a
// time. It refuses a step while any client that may still lock in another
// phase lives (by the server's clock, with a margin), while a registry entry
// does not parse or is of an older format, and a step beyond DualWrite while
// a legacy sighting is younger than the quiet period or the fleet has run
// DualWrite for less than it. Every time it judges is the server's.
type Controller struct {
	s       store
	quiet   time.Duration
	margin  time.Duration
	silence time.Duration
	window  time.Duration // stepWindow (shorter in tests)
	policy  string        // declared maxmemory-policy ("" none)
	err     error
	tset    telemetry.Settings
	tel     *telemetry.T
}

// Option configures a Controller.
type Option func(*Controller)

// WithQuietPeriod sets the quiet period. Default DefaultQuietPeriod (15
// minutes); it must be positive.
func WithQuietPeriod(d time.Duration) Option {
	return func(c *Controller) {
		if d <= 0 {
			c.err = fmt.Errorf("migrate: %w: quiet period %v must be positive", lockbridge.ErrInvalid, d)
			return
		}
		c.quiet = d
	}
}

// WithLivenessMargin sets how long after its expiry (both by the server's
// clock) a registry entry still counts as live. Default
// DefaultLivenessMargin (5 s); it must not be negative.
func WithLivenessMargin(d time.Duration) Option {
	return func(c *Controller) {
		if d < 0 {
			c.err = fmt.Errorf("migrate: %w: liveness margin %v must not be negative", lockbridge.ErrInvalid, d)
			return
		}
		c.margin = d
	}
}

// WithInitSilence sets how long a namespace without a trace — no phase, no
// registry entry, no sighting, no mark — must stay so, by the server's
// clock, before Init starts it at legacy. It covers the lockers that
// cannot be seen: one whose entry was deleted with the namespace still
// locks in its phase for its phase lease after its last heartbeat, and a
// lock it took lasts its ttl beyond that. Set it to at least the fleet's
// phase lease + its longest lease + the liveness margin. Default
// DefaultInitSilence (2 minutes); it must be positive.
func WithInitSilence(d time.Duration) Option {
	return func(c *Controller) {
		if d <= 0 {
			c.err = fmt.Errorf("migrate: %w: init silence %v must be positive", lockbridge.ErrInvalid, d)
			return
		}
		c.silence = d
	}
}

// WithMaxmemoryPolicy declares the server's maxmemory-policy for a server
// that cannot report it (INFO memory refused by its ACL, or unsupported):
// without it the controller refuses every unforced change there, since it
// cannot tell whether the evidence it judges by was evicted. What the
// server reports, when it can, always overrides the declaration. On such a
// server the declaration also stands for the operator's word that no
// failover or restart has lost writes since the namespace's last change,
// which the controller checks by the server's replication id where INFO
// replication can be read. Default: none.
func WithMaxmemoryPolicy(policy string) Option {
	return func(c *Controller) {
		for _, p := range maxmemoryPolicies {
			if p == policy {
				c.policy = policy
				return
			}
		}
		c.err = fmt.Errorf("migrate: %w: maxmemory-policy %q is not one of %v", lockbridge.ErrInvalid, policy,
			maxmemoryPolicies)
	}
}

// WithTelemetry sets where the controller reports: the steps it takes
// (info; warn when forced past blockers) and refuses (warn) to t.Logger,
// and their counts (lockbridge.migrate.controller.steps and .refusals, in
// docs/observability.md) to t.MeterProvider. It makes no spans, so
// t.TracerProvider is not used. Default: the zero Telemetry, which reports
// nothing.
func WithTelemetry(t lockbridge.Telemetry) Option {
	return func(c *Controller) { c.tset = t }
}

// New returns the controller of namespace ns (the namespace the
// fleet's lockers name in WithPhaseFrom).
func New(c driver.Client, ns string, opts ...Option) (*Controller, error) {
	if c == nil {
		return nil, fmt.Errorf("migrate: %w: nil driver.Client", lockbridge.ErrInvalid)
	}
	k, err := migrateproto.NewKeys(ns)
	if err != nil {
		return nil, err
	}
	ctl := &Controller{s: store{c: c, k: k, entries: &entryCache{}}, quiet: DefaultQuietPeriod, margin: DefaultLivenessMargin,
		silence: DefaultInitSilence, window: stepWindow}
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("migrate: %w: nil option", lockbridge.ErrInvalid)
		}
		o(ctl)
	}
	if ctl.err != nil {
		return nil, ctl.err
	}
	ctl.tel = telemetry.New("migrate", ctl.tset)
	return ctl, nil
}

func (c *Controller) usable(ctx context.Context) error {
	if c == nil || c.s.c == nil {
		return fmt.Errorf("migrate: %w: nil or zero *Controller (use NewController)", lockbridge.ErrInvalid)
	}
	return check.Context(pkg, ctx)
}

// BlockerKind says what a Blocker is about.
type BlockerKind string

// The kinds of blocker.
const (
	// blockPhaseUnknown: the namespace's phase is missing or unreadable.
	blockPhaseUnknown BlockerKind = "phase-unknown"
	// BlockClientPhase: a live client runs another phase than the fleet.
	BlockClientPhase BlockerKind = "client-phase"
	// blockHeldLock: a live client holds a lock taken in another phase.
	blockHeldLock BlockerKind = "held-lock"
	// blockIncompatible: (rollback) a live client runs or holds a lock in
	// a phase that does not exclude the target phase.
	blockIncompatible BlockerKind = "incompatible"
	// blockInvalidEntry: a registry entry does not parse (Field names the
	// field); it may be a live client the controller cannot read.
	blockInvalidEntry BlockerKind = "invalid-entry"
	// blockOldProtocol: an entry of an older registry format (protocol 1),
	// whose liveness no clock the controller trusts can judge.
	blockOldProtocol BlockerKind = "old-protocol"
	// blockSighting: a legacy sighting younger than the quiet period.
	blockSighting BlockerKind = "sighting"
	// BlockQuietPeriod: the fleet has run dual-write for less than the
	// quiet period (or since when is unknown).
	BlockQuietPeriod BlockerKind = "quiet-period"
	// blockAtModern: nothing to advance to.
	blockAtModern BlockerKind = "at-modern"
	// blockRestored: the namespace was restored (a repair, or Init from
	// its mark) less than the init silence ago — or, for a step beyond
	// dual-write, the quiet period: the registry entries and sightings
	// lost with it may not have come back yet.
	blockRestored BlockerKind = "restored"
	// blockEviction: the evidence may have been evicted or may expire (an
	// allkeys-* maxmemory-policy, a policy the controller cannot read, a
	// key of the namespace with a TTL).
	blockEviction BlockerKind = "eviction"
	// blockRan: (init) the namespace ran before: its mark, namespace hash,
	// registry entries or a sighting show it.
	blockRan BlockerKind = "ran"
	// blockSilence: (init) the namespace has not been without a trace for
	// the init silence yet.
	blockSilence BlockerKind = "silence"
	// blockNoMark: (init, Redis Cluster) a namespace without a mark: the
	// node that holds the namespace's slot may have lost the mark with
	// its keys (a restart without persistence) while locks on other nodes
	// live on, so no silence proves the namespace new. Only force starts it.
	blockNoMark BlockerKind = "no-mark"
)

// Blocker is one reason the controller refuses a step.
type Blocker struct {
	Kind BlockerKind
	// Member is the registry id, for the client kinds.
	Member string
	// Phase is the client's phase (BlockClientPhase, blockOldProtocol) or
	// the held lock's (blockHeldLock) or the one that does not exclude the
	// target (blockIncompatible).
	Phase migrate.Phase
	// Field is the entry's field that does not parse (blockInvalidEntry).
	Field string
	// Text says it in words.
	Text string
}

func (b Blocker) String() string { return b.Text }

// Status is a namespace's migration state as the controller sees it. Every
// time in it is the server's clock.
type Status struct {
	Namespace string
	// Now is the server's time when the state was read.
	Now time.Time
	// Phase is the namespace's phase; 0 when it is unknown, and
	// PhaseProblem then says why and what to do.
	Phase        migrate.Phase
	PhaseProblem *migrate.PhaseUnknownError
	// Protocol is the namespace's format: 3 (or 2 when last set by the
	// previous release), 1 for a namespace with a phase but without the
	// namespace hash (set by the first release), 0 when neither exists.
	Protocol int
	// highest is the highest phase the namespace ever reached (0 unknown).
	highest migrate.Phase
	// Evidence is the highest phase anything shows the fleet is at (what
	// Repair may restore): the phase, the namespace hash's phase, and the
	// phases of live registry entries of clients that ran this namespace —
	// when the hash has a phase, only of entries that read a newer
	// generation than the hash's (it went back), and without the hash only
	// of those that read the newest generation, since an entry above it
	// may not have read a rollback yet; of dead entries only when nothing
	// else shows a phase, since they may date from before a rollback.
	Evidence migrate.Phase
	Since    time.Time // when Phase was set; zero if unknown
	Members  []Member  // the registry, live and recently dead, both formats
	Live     map[migrate.Phase]int
	Sighting Sighting
	// mark is the namespace's mark (MarkKey): where the controller last set
	// the phase. Zero when there is none (a namespace never initialised, or
	// last changed by a release before the mark).
	mark mark
	// replid is the server's replication id at the reading ("" when it
	// could not be read); moved reports that it is not the one the
	// namespace recorded (a failover or a restart since its last set).
	replid string
	moved  bool
	// gen and markGen are the namespace hash's and the mark's "gen" as
	// read ("" when it had none): a step or a repair is set only on those
	// generations.
	gen, markGen string
	// Blockers say why Advance would refuse now; empty when the step is safe.
	Blockers []Blocker
}

// Safe reports whether Advance would take the next step — to
// st.Phase.Next() — without force: false at PhaseModern and when the phase
// is unknown.
func (st Status) Safe() bool {
	_, ok := st.Phase.Next()
	return ok && len(st.Blockers) == 0
}

// Step is a phase change made by Advance, Rollback or Repair.
type Step struct {
	From, To migrate.Phase
	// Overridden lists the blockers that force overrode; empty otherwise.
	Overridden []Blocker
}

// Phase returns the namespace's current phase; a *PhaseUnknownError when
// it has none (never initialised, lost) or it is unreadable.
func (c *Controller) Phase(ctx context.Context) (migrate.Phase, error) {
	st, err := c.Status(ctx)
	if err != nil {
		return 0, err
	}
	if st.PhaseProblem != nil {
		return 0, st.PhaseProblem
	}
	return st.Phase, nil
}

// Status reads the phase, the registry and the last sighting with the
// server's clock in one script, and works out whether the next step is
// safe. It changes nothing.
func (c *Controller) Status(ctx context.Context) (Status, error) {
	if err := c.usable(ctx); err != nil {
		return Status{}, err
	}
	sn, err := c.s.read(ctx, c.margin)
	if err != nil {
		return Status{}, err
	}
	return c.judge(sn), nil
}

// judge works out a Status from a reading, step by step: the namespace
// hash, the phase evidence of the registry, the phase itself, then the
// blockers of the next step.
func (c *Controller) judge(sn snapshot) Status {
	st := Status{Namespace: c.s.k.NS, Now: sn.now, Members: sn.clients, Live: map[migrate.Phase]int{},
		Sighting: sn.sighting, mark: parseMark(sn.mark), replid: sn.replid, gen: sn.meta["gen"], markGen: sn.mark["gen"],
		moved: sn.replid != "" && len(sn.meta) > 0 && sn.replid != sn.meta["replid"]}
	metaPhase := st.readNamespace(sn)
	ran, dead := st.fleetEvidence(sn, metaPhase)
	st.readPhase(sn, ran)
	if st.Evidence == 0 {
		st.raise(dead)
	}
	if sn.hasSince {
		if ms, err := strconv.ParseInt(sn.since, 10, 64); err == nil && ms > 0 {
			st.Since = time.UnixMilli(ms)
		}
	}
	for _, cl := range sn.clients {
		if cl.Protocol >= 2 && cl.Invalid == nil && cl.Live {
			st.Live[cl.Phase]++
		}
	}
	st.Blockers = c.blockers(sn, st)
	return st
}

// raise raises the evidence to p.
func (st *Status) raise(p migrate.Phase) { st.Evidence = max(st.Evidence, p) }

// readNamespace takes the protocol, the highest phase and the phase
// evidence from the namespace hash; it reports whether the hash has a
// readable phase.
func (st *Status) readNamespace(sn snapshot) (metaPhase bool) {
	if len(sn.meta) == 0 {
		if sn.hasPhase {
			st.Protocol = 1
		}
		return false
	}
	st.Protocol = migrateproto.Version
	if v, err := strconv.Atoi(sn.meta["protocol"]); err == nil {
		st.Protocol = v
	}
	if p, err := phaseOf(sn.meta["highest"]); err == nil {
		st.highest = p
	}
	if p, err := phaseOf(sn.meta["phase"]); err == nil {
		st.raise(p)
		return true
	}
	return false
}

// fleetEvidence raises the evidence to the phases of the registry entries
// that speak for the fleet. It reports whether an entry shows the
// namespace ran (Member.trace), and the highest phase of the dead entries.
//
// The namespace hash holds the last phase set (with the phase key, in one
// script): a live entry outruns it only when it read a newer generation
// (the hash went back: a restore). Otherwise an entry above it is a client
// that has not read a rollback yet. Dead entries (pruned only by a later
// step) may be from before a rollback: they are evidence only when nothing
// else shows a phase (judge). Without the hash, the mark (written with
// every set) plays its part: only an entry above the mark's generation
// counts — one at it has read the last set but may not have moved to it
// yet (an acquire in flight, between its announce and its move), one below
// has not read it (a rollback, say). Without either, the live entries that
// read the newest generation speak for the fleet.
func (st *Status) fleetEvidence(sn snapshot, metaPhase bool) (ran bool, dead migrate.Phase) {
	base := int64(-1) // entries above it count; -1: none, use newest
	switch metaGen := migrateproto.Decimal(sn.meta["gen"]); {
	case metaPhase && metaGen >= 0:
		base = metaGen
	case st.mark.gen > 0:
		base = st.mark.gen
	}
	newest := int64(-1)
	if base < 0 {
		newest = newestGen(sn.clients)
	}
	for _, cl := range sn.clients {
		ran = ran || cl.trace()
		if cl.Protocol >= 2 && cl.Invalid == nil && cl.instance != 0 {
			switch {
			case !cl.Live:
				dead = max(dead, cl.Phase)
			case base >= 0 && cl.gen > base, base < 0 && cl.gen == newest:
				// Its phase, not its held locks': a lock taken before a
				// rollback shows where the fleet was, not where it is (the
				// held-lock blockers keep such a lock from being stepped
				// past).
				st.raise(cl.Phase)
			}
		}
		if cl.Protocol == 1 && cl.Invalid == nil && !metaPhase {
			st.raise(cl.Phase)
		}
	}
	st.raise(st.mark.phase)
	return ran, dead
}

// newestGen is the newest generation a live entry of protocol 2 or 3
// read; -1 when none did.
func newestGen(clients []Member) int64 {
	newest := int64(-1)
	for _, cl := range clients {
		if cl.Protocol >= 2 && cl.Invalid == nil && cl.instance != 0 && cl.Live {
			newest = max(newest, cl.gen)
		}
	}
	return newest
}

// readPhase sets the phase from the phase key, or PhaseProblem: ran says a
// registry entry shows the namespace ran.
func (st *Status) readPhase(sn snapshot, ran bool) {
	ns := st.Namespace
	if sn.hasPhase {
		p, err := phaseOf(sn.phase)
		if err != nil {
			st.PhaseProblem = &migrate.PhaseUnknownError{Namespace: ns, Reason: migrate.ReasonUnreadable,
				Remedy: migrateproto.RemedyRepair(ns), Cause: fmt.Errorf("the phase key holds %q", sn.phase)}
			return
		}
		st.Phase = p
		st.raise(p)
		return
	}
	switch {
	case st.mark.phase != 0:
		st.PhaseProblem = &migrate.PhaseUnknownError{Namespace: ns, Reason: migrate.ReasonLost,
			Remedy: remedyRestore(ns, st.mark)}
	case len(sn.meta) == 0 && !ran && !sn.sighted():
		st.PhaseProblem = &migrate.PhaseUnknownError{Namespace: ns, Reason: migrate.ReasonUninitialized,
			Remedy: migrateproto.RemedyInit(ns)}
	default:
		st.PhaseProblem = &migrate.PhaseUnknownError{Namespace: ns, Reason: migrate.ReasonLost,
			Remedy: migrateproto.RemedyRepair(ns)}
	}
}

// blockers are the reasons Advance would refuse on st, in order: the
// phase's, the eviction policy's, a recent restore's, each entry's, and
// the next step's own.
func (c *Controller) blockers(sn snapshot, st Status) []Blocker {
	var bs []Blocker
	if st.PhaseProblem != nil {
		bs = append(bs, Blocker{Kind: blockPhaseUnknown, Text: st.PhaseProblem.Error()})
	} else if len(sn.meta) == 0 && st.mark.phase != 0 {
		bs = append(bs, Blocker{Kind: blockPhaseUnknown, Phase: st.mark.phase,
			Text: fmt.Sprintf("the namespace hash is gone while its mark shows the controller set %v: evidence of this "+
				"namespace was lost (deleted or evicted); `lockbridge phase repair --namespace %s --to %v` restores it",
				st.mark.phase, st.Namespace, st.Evidence)})
	}
	bs = append(bs, evictionBlockers(sn, c.policy)...)
	bs = append(bs, historyBlockers(sn, st, c.policy)...)
	restored := time.Duration(-1) // how long ago the namespace was restored; -1: never
	if ms := migrateproto.Decimal(sn.meta["restored"]); ms > 0 {
		restored = max(sn.now.Sub(time.UnixMilli(ms)), 0)
	}
	if restored >= 0 && restored < c.silence {
		bs = append(bs, Blocker{Kind: blockRestored,
			Text: fmt.Sprintf("the namespace was restored %v ago (a repair, or init from its mark): the registry entries lost "+
				"with it come back only as their lockers heartbeat, and a locker cut off meanwhile may hold a lock for its "+
				"lease; wait the init silence %v", restored.Round(time.Second), c.silence)})
	}
	for _, cl := range sn.clients {
		bs = append(bs, c.clientBlockers(cl, st.Phase, 0)...)
	}
	next, hasNext := st.Phase.Next()
	if st.Phase != 0 && !hasNext {
		bs = append(bs, Blocker{Kind: blockAtModern, Text: "already at modern: nothing to advance to"})
	}
	if hasNext && next > migrate.PhaseDualWrite {
		bs = append(bs, c.legacyBlockers(sn, st, restored)...)
	}
	return bs
}

// legacyBlockers are the blockers of a step past dual-write: evidence of a
// legacy-only locker, or too little of its absence (restored is how long
// ago the namespace was restored, -1 never).
func (c *Controller) legacyBlockers(sn snapshot, st Status, restored time.Duration) []Blocker {
	var bs []Blocker
	for _, e := range sn.sightingErrs {
		bs = append(bs, Blocker{Kind: blockSighting, Text: "the legacy-sighting hash is unreadable: " + e})
	}
	if restored >= 0 && restored < c.quiet {
		bs = append(bs, Blocker{Kind: blockSighting,
			Text: fmt.Sprintf("the namespace was restored %v ago: a legacy sighting lost with it is recorded again only when "+
				"a locker meets the legacy holder; wait the quiet period %v", restored.Round(time.Second), c.quiet)})
	}
	if at := st.Sighting.At; !at.IsZero() {
		if age := sn.now.Sub(at); age < c.quiet {
			bs = append(bs, Blocker{Kind: blockSighting,
				Text: fmt.Sprintf("a legacy-only locker was seen %v ago on key %q (quiet period %v): retire every legacy locker "+
					"first", max(age, 0).Round(time.Second), st.Sighting.Key, c.quiet)})
		}
	}
	if next, _ := st.Phase.Next(); next != migrate.PhaseDualRead {
		return bs
	}
	switch running := sn.now.Sub(st.Since); {
	case st.Since.IsZero():
		bs = append(bs, Blocker{Kind: BlockQuietPeriod,
			Text: fmt.Sprintf("when the fleet started dual-write is unknown (no phase-since): it must run dual-write for the "+
				"quiet period %v; `lockbridge phase repair --to dual-write` restarts the count", c.quiet)})
	case running < c.quiet:
		bs = append(bs, Blocker{Kind: BlockQuietPeriod,
			Text: fmt.Sprintf("the fleet has run dual-write for %v, less than the quiet period %v", max(running,
				0).Round(time.Second), c.quiet)})
	}
	return bs
}

// clientBlockers are the blockers one registry entry raises for a step to
// rollback (0 for an advance, judged against the fleet's phase cur).
func (c *Controller) clientBlockers(cl Member, cur, rollback migrate.Phase) []Blocker {
	if b, judged := formatBlocker(cl); judged {
		if b == nil {
			return nil
		}
		return []Blocker{*b}
	}
	if !cl.Live {
		return nil
	}
	if rollback != 0 {
		return rollbackBlockers(cl, rollback)
	}
	if cur == 0 {
		return nil
	}
	return advanceBlockers(cl, cur)
}

// formatBlocker judges an entry the controller cannot read as a member of
// its own protocol: one that does not parse, or of another protocol. judged
// is false for a readable entry of this protocol; b is nil for such an
// entry that blocks nothing (dead).
func formatBlocker(cl Member) (b *Blocker, judged bool) {
	switch {
	case cl.Invalid != nil:
		if !cl.Live {
			return nil, true
		}
		var ee *migrateproto.EntryError
		field := ""
		if errors.As(cl.Invalid, &ee) {
			field = ee.Field
		}
		return &Blocker{Kind: blockInvalidEntry, Member: cl.ID, Field: field,
			Text: fmt.Sprintf("%s: registry entry does not parse (%v): it may be a live client the controller cannot read; "+
				"fix its writer, or if it is gone: `lockbridge fleet forget %s`", cl.who(), cl.Invalid, cl.ID)}, true
	case cl.Protocol == 1:
		return &Blocker{Kind: blockOldProtocol, Member: cl.ID, Phase: cl.Phase,
				Text: fmt.Sprintf("%s runs %v with the registry format of protocol %d, whose liveness the controller cannot judge "+
					"by one clock: upgrade it, or if it is gone: `lockbridge fleet forget %s`", cl.who(), cl.Phase, cl.Protocol, cl.ID)},
			true
	case cl.Protocol != migrateproto.Version:
		if !cl.Live {
			return nil, true
		}
		return &Blocker{Kind: blockOldProtocol, Member: cl.ID, Phase: cl.Phase,
			Text: fmt.Sprintf("%s runs %v with the registry format of protocol %d (an older lockbridge), which this "+
				"controller does not step beside: upgrade it; once stopped, its entry blocks until it has expired", cl.who(), cl.Phase,
				cl.Protocol)}, true
	}
	return nil, false
}

// rollbackBlockers are the blockers a live entry raises for a rollback to
// rollback: each phase it runs, moves to or holds a lock of that does not
// exclude rollback.
func rollbackBlockers(cl Member, rollback migrate.Phase) []Blocker {
	var out []Blocker
	for _, p := range cl.Phases() {
		if !migrate.Compatible(p, rollback) {
			what := "runs"
			if p == cl.Next && p != cl.Phase {
				what = "is moving to"
			} else if p != cl.Phase {
				what = "holds a lock taken in"
			}
			out = append(out, Blocker{Kind: blockIncompatible, Member: cl.ID, Phase: p,
				Text: fmt.Sprintf("%s %s %v, which does not exclude %v", cl.who(), what, p, rollback)})
		}
	}
	return out
}

// advanceBlockers are the blockers a live entry raises for an advance
// from cur: a phase it runs, moves to or holds a lock of other than cur.
func advanceBlockers(cl Member, cur migrate.Phase) []Blocker {
	var out []Blocker
	if cl.Phase != cur {
		out = append(out, Blocker{Kind: BlockClientPhase, Member: cl.ID, Phase: cl.Phase,
			Text: fmt.Sprintf("%s runs %v, the fleet is at %v", cl.who(), cl.Phase, cur)})
	}
	if cl.Next != 0 && cl.Next != cur {
		out = append(out, Blocker{Kind: BlockClientPhase, Member: cl.ID, Phase: cl.Next,
			Text: fmt.Sprintf("%s is moving to %v, the fleet is at %v", cl.who(), cl.Next, cur)})
	}
	for _, p := range []migrate.Phase{cl.HeldOldest, cl.HeldNewest} {
		if p == 0 || p == cur || (p == cl.HeldNewest && p == cl.HeldOldest && len(out) > 0 &&
			out[len(out)-1].Kind == blockHeldLock) {
			continue
		}
		out = append(out, Blocker{Kind: blockHeldLock, Member: cl.ID, Phase: p,
			Text: fmt.Sprintf("%s holds a lock taken in %v (for %v more at its last heartbeat), the fleet is at %v", cl.who(), p,
				cl.heldLeft.Round(time.Millisecond), cur)})
	}
	return out
}

// who names c in a blocker's text: its id, and its host and pid when
// known. Made only for a blocker: most members block nothing.
func (c Member) who() string { return fmt.Sprintf("client %q%s", c.ID, hostOf(c)) }

func hostOf(c Member) string {
	if c.Host == "" {
		return ""
	}
	return fmt.Sprintf(" (%q pid %d)", c.Host, c.PID)
}

// Advance moves the fleet one phase forward from the phase it is at now.
// Without force it refuses with an error wrapping ErrUnsafeStep while Status
// has blockers; with force it moves anyway and reports the overridden
// blockers in the Step. A phase that is unknown is never stepped from: see
// Repair.
func (c *Controller) Advance(ctx context.Context, force bool) (Step, error) {
	cur, err := c.Phase(ctx)
	if err != nil {
		return Step{}, err
	}
	next, ok := cur.Next()
	if !ok {
		return Step{}, fmt.Errorf("%w: already at %v", ErrUnsafeStep, cur)
	}
	return c.Step(ctx, cur, next, force)
}

// Rollback moves the fleet one phase back from the phase it is at now. It
// refuses (unless force) while a live client runs, or holds a lock taken
// in, a phase that does not exclude the previous phase — from a settled
// fleet that never happens: neighbouring phases exclude each other.
func (c *Controller) Rollback(ctx context.Context, force bool) (Step, error) {
	cur, err := c.Phase(ctx)
	if err != nil {
		return Step{}, err
	}
	prev, ok := cur.Prev()
	if !ok {
		return Step{}, fmt.Errorf("%w: already at %v, nothing to roll back to", ErrUnsafeStep, cur)
	}
	return c.Step(ctx, cur, prev, force)
}

// Step moves the fleet from phase from to the neighbouring phase to, under
// the rules of Advance (to = from's next) or Rollback (to = from's
// previous). It fails with an error wrapping errPhaseChanged when the fleet
// is not at from — say, another operator took the step meanwhile — so a
// command never takes a step other than the one asked for.
func (c *Controller) Step(ctx context.Context, from, to migrate.Phase, force bool) (Step, error) {
	next, _ := from.Next()
	prev, _ := from.Prev()
	if !from.Valid() || !to.Valid() || (to != next && to != prev) || to == from {
		return Step{}, fmt.Errorf("migrate: %w: a step goes to a neighbouring phase, not %v → %v", ErrUnsafeStep, from, to)
	}
	st, err := c.Status(ctx)
	if err != nil {
		return Step{}, err
	}
	if st.PhaseProblem != nil {
		return Step{}, st.PhaseProblem
	}
	if st.Phase != from {
		return Step{}, fmt.Errorf("migrate: %w: the fleet is at %v, not %v", errPhaseChanged, st.Phase, from)
	}
	if st.moved && !force {
		// A failover or a restart since the namespace's last set: record
		// it as a restore, and judge again (its blockers now stand).
		if err := c.s.recordHistory(ctx, from, st.replid); err != nil {
			return Step{}, err
		}
		if st, err = c.Status(ctx); err != nil {
			return Step{}, err
		}
	}
	step := Step{From: from, To: to}
	if err := c.s.prune(ctx, c.margin+c.quiet); err != nil {
		return step, err
	}
	var blockers []Blocker
	if to == next {
		blockers = st.Blockers
	} else {
		for _, cl := range st.Members {
			blockers = append(blockers, c.clientBlockers(cl, from, to)...)
		}
		for _, b := range st.Blockers {
			if b.Kind == blockEviction || b.Kind == blockRestored {
				blockers = append(blockers, b)
			}
		}
	}
	// The step is set only on the reading it was judged on (its
	// generation, within the step window: a step whose caller gave up may
	// land later) and, unless forced, on the server history it was judged
	// by.
	by := judged{reading: c.reading(st), replid: st.replid}
	if force {
		by.replid = ""
	}
	return c.apply(ctx, step, blockers, force, from.String(), migrateproto.PhaseSetStep, 0, 0, by)
}

// reading is what a step or a repair judged on st is set only on: its
// generations, within the step window (a set whose caller gave up may land
// later, after a rollback or a second flush that put back the bytes it
// saw).
func (c *Controller) reading(st Status) *migrateproto.PhaseSetJudged {
	return &migrateproto.PhaseSetJudged{Gen: st.gen, Until: st.Now.Add(c.window), MarkGen: st.markGen}
}

// judged is what a phase set is checked against (phase_set.lua): the
// reading a step or a repair was judged on (nil: none), and the server's
// replication id it was judged by ("": none).
type judged struct {
	reading *migrateproto.PhaseSetJudged
	replid  string
}

// apply takes step — setPhase(seen, step.To, how, minGen, keep) — unless
// blockers stand and force is not set: then it refuses with an
// *UnsafeStepError. It logs and counts what it did.
func (c *Controller) apply(ctx context.Context, step Step, blockers []Blocker, force bool, seen, how string, minGen,
	keep int64, by judged) (Step, error) {
	ns, from, to := c.s.k.NS, phaseOrNone(step.From), step.To.String()
	log := c.tel.Log()
	if len(blockers) > 0 {
		if !force {
			c.tel.Refused(ctx, ns, to, string(blockers[0].Kind))
			log.WarnContext(ctx, "lockbridge: migrate: controller refused a phase change", "lockbridge.migrate.namespace", ns,
				"lockbridge.migrate.phase.from", from, "lockbridge.migrate.phase", to, "blockers", len(blockers), "first",
				blockers[0].Text)
			return step, &UnsafeStepError{Step: step, Blockers: blockers}
		}
		step.Overridden = blockers
	}
	if err := c.s.setPhase(ctx, seen, step.To, how, minGen, keep, by); err != nil {
		if errors.Is(err, errHistoryChanged) {
			return step, &UnsafeStepError{Step: step, Blockers: []Blocker{{Kind: blockRestored, Text: "the server's " +
				"replication id changed between the reading and the step (a failover or a restart): nothing was set; " +
				"the change is recorded as a restore, and the controller waits as after one"}}}
		}
		return step, err
	}
	if err := c.s.notify(ctx, step.To); err != nil {
		log.WarnContext(ctx, "lockbridge: migrate: a phase notice failed (followers read the phase at their next heartbeat)",
			"lockbridge.migrate.namespace", ns, "error", err)
	}
	c.tel.Stepped(ctx, ns, from, to)
	lvl := slog.LevelInfo
	if len(step.Overridden) > 0 {
		lvl = slog.LevelWarn
	}
	log.Log(ctx, lvl, "lockbridge: migrate: controller changed the phase", "lockbridge.migrate.namespace", ns, "how", how,
		"lockbridge.migrate.phase.from", from, "lockbridge.migrate.phase", to, "overridden", len(step.Overridden))
	return step, nil
}

// Repair sets a namespace's phase when it is lost, unreadable or went back
// (a restore, a failover that lost writes): to phase to, restarting the
// quiet period, with a generation above every one a client read, keeping
// the namespace's instance (from its hash, or from the registry when the
// hash is gone too), so the lockers that refuse trust it again. Without
// force, to must be Status().Evidence — the highest phase anything shows —
// and the registry's clients must agree on the instance; otherwise the
// error wraps ErrUnsafeStep. It may also be run on a readable phase (after
// a restore from an old backup, say).
func (c *Controller) Repair(ctx context.Context, to migrate.Phase, force bool) (Step, error) {
	if !to.Valid() {
		return Step{}, fmt.Errorf("migrate: %w: repair to %v", lockbridge.ErrInvalid, to)
	}
	if err := c.usable(ctx); err != nil {
		return Step{}, err
	}
	sn, err := c.s.read(ctx, c.margin)
	if err != nil {
		return Step{}, err
	}
	st := c.judge(sn)
	blockers, minGen, keep := c.repairPlan(sn, st, to)
	seen := ""
	if sn.hasPhase {
		seen = sn.phase
	}
	return c.apply(ctx, Step{From: st.Phase, To: to}, blockers, force, seen, migrateproto.PhaseSetRepair, minGen, keep,
		judged{reading: c.reading(st)})
}

// repairPlan is what setting the phase to on reading sn (judged st) would
// override — the blockers — and the generation and instance to write.
func (c *Controller) repairPlan(sn snapshot, st Status, to migrate.Phase) (blockers []Blocker, minGen, keep int64) {
	if st.Evidence == 0 {
		blockers = append(blockers, Blocker{Kind: blockPhaseUnknown,
			Text: "nothing shows which phase the fleet reached (no namespace hash, no mark, no registry entry of a client " +
				"that ran it): if the namespace is new, use `lockbridge phase init`"})
	} else if to != st.Evidence {
		blockers = append(blockers, Blocker{Kind: blockPhaseUnknown, Phase: st.Evidence,
			Text: fmt.Sprintf("the evidence shows the fleet reached %v, not %v", st.Evidence, to)})
	}
	for _, b := range st.Blockers {
		if b.Kind == blockEviction {
			blockers = append(blockers, b)
		}
	}
	instances := map[int64]bool{}
	for _, cl := range sn.clients {
		if cl.Protocol >= 2 && cl.Invalid == nil && cl.instance != 0 {
			instances[cl.instance] = true
			minGen = max(minGen, cl.gen+1)
		}
	}
	if len(sn.meta) > 0 {
		return blockers, minGen, 0
	}
	ids := make([]int64, 0, len(instances))
	for id := range instances {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	switch {
	case st.mark.instance > 0: // phase_set.lua keeps the mark's
		keep = st.mark.instance
		for _, id := range ids {
			if id != keep {
				blockers = append(blockers, Blocker{Kind: blockPhaseUnknown,
					Text: fmt.Sprintf("registry clients read namespace instance %d, the mark's is %d: they go on refusing until "+
						"restarted", id, keep)})
			}
		}
	case len(ids) > 1:
		blockers = append(blockers, Blocker{Kind: blockPhaseUnknown,
			Text: fmt.Sprintf("the registry's clients read different namespace instances %v: the newest is kept, clients of "+
				"the others go on refusing", ids)})
		fallthrough
	case len(ids) == 1:
		keep = ids[len(ids)-1]
	}
	return blockers, minGen, keep
}

// Forget removes a client from the registry, for an entry known dead (a
// crashed client, or one of the first release's format). Without force it
// refuses, with an error wrapping ErrUnsafeStep, while the entry is live by
// the server's clock, with the liveness margin, as Status counts it — and
// while an entry of protocol 2 or 3 has no expiry at all (lost, or written
// by hand): Status counts that one live too. It reports whether an entry
// was removed.
func (c *Controller) Forget(ctx context.Context, id string, force bool) (bool, error) {
	if err := c.usable(ctx); err != nil {
		return false, err
	}
	if id == "" {
		return false, fmt.Errorf("migrate: %w: empty client id", lockbridge.ErrInvalid)
	}
	n, err := migrateproto.Forget(ctx, c.s.c, migrateproto.ForgetArgs{NS: c.s.k, ID: id, Force: force, Margin: c.margin})
	if err != nil {
		return false, err
	}
	if n == migrateproto.ForgetNoExpiry {
		return false, fmt.Errorf(
			"migrate: %w: client %q has a registry entry without an expiry (lost, or written by hand): nothing shows it "+
				"dead, and Status counts it live; if you know it is dead, force it", ErrUnsafeStep, id)
	}
	if n < 0 {
		return false, fmt.Errorf(
			"migrate: %w: client %q is live by the server's clock (its hold plus the liveness margin %v has not passed since "+
				"its last heartbeat): if you know it is dead, force it", ErrUnsafeStep, id, c.margin)
	}
	return n > 0, nil
}

// UnsafeStepError is a refused step: the step and its blockers. It wraps
// ErrUnsafeStep.
type UnsafeStepError struct {
	Step     Step
	Blockers []Blocker
}

func (e *UnsafeStepError) Error() string {
	msg := fmt.Sprintf("migrate: refusing %s → %v:", phaseOrNone(e.Step.From), e.Step.To)
	for _, b := range e.Blockers {
		msg += "\n  - " + b.Text
	}
	return msg
}

func (e *UnsafeStepError) Unwrap() error { return ErrUnsafeStep }

// historyBlockers: the server's replication id cannot be read, or is not
// the one the namespace recorded at its last set. A failover to a replica
// that lacked recent writes, or a restart from an older snapshot, changes
// it, and may have lost registry entries and legacy sightings: their
// absence is then no evidence. The next step or rollback records the new
// id as a restore (Step), after which the restore's blockers stand. A
// server that cannot report INFO is judged by the operator's declaration
// (declared, WithMaxmemoryPolicy), which covers this too.
func historyBlockers(sn snapshot, st Status, declared string) []Blocker {
	switch {
	case sn.replidErr != "" && declared != "" && sn.policyErr != "":
		return nil // a server that cannot run INFO at all: the operator's word
	case sn.replidErr != "":
		return []Blocker{{Kind: blockRestored, Text: fmt.Sprintf("the server's replication id cannot be read (%s): a "+
			"failover or a restart that lost registry entries or legacy sightings would go unnoticed", sn.replidErr)}}
	case !st.moved:
		return nil
	case sn.meta["replid"] == "":
		return []Blocker{{Kind: blockRestored, Text: "the namespace has no replication id recorded (it was last set " +
			"before the controller recorded one): whether a failover or a restart lost evidence since is not known; " +
			"the next step, rollback or cleanup records it and then waits as after a restore"}}
	}
	return []Blocker{{Kind: blockRestored, Text: fmt.Sprintf("the server's replication id is %s, not the %s recorded at "+
		"the namespace's last set: a failover or a restart since may have lost registry entries and legacy sightings; "+
		"the next step, rollback or cleanup records it and then waits as after a restore", sn.replid, sn.meta["replid"])}}
}
