/*
 * migrate.pml: one lock name (legacy key + modern key) used by Go lockers
 * that follow the namespace's phase, a Java (legacy-only) locker, the
 * controller, and an environment that can lose the phase key.
 *
 * Time: one true clock, ticking between any two steps up to TMAX. The
 * server's clock (registry expiry, sightings, phase-since) and the lockers'
 * monotonic clocks (phase lease, lock leases) run at the same rate here;
 * the code's margins (the liveness margin) cover rate differences and are
 * not modelled. Lock keys expire with their holder's lease (the legacy and
 * modern models check that part).
 *
 * Property (safety runs): never two valid holders of the lock, checked at
 * every acquisition and refresh. Liveness run (LIVE): with no Java locker,
 * no loss and no time, the controller reaches modern (weak fairness).
 *
 * Ties to code:
 *   follower reading     migrate/scripts/heartbeat.lua @entry @read; Go: follower.reading, follower.judge, want, follower.move
 *                        (one phase per reading; a missing phase
 *                        refuses), the second heartbeat in follower.sync
 *   phase lease          Go: follower.valid
 *                        (lock only while the lease runs)
 *   acquire per phase    migrate/scripts/acquire.lua @free @write (dual phases);
 *                        legacy/scripts/acquire.lua @setnx @takeover (legacy);
 *                        internal/protocol/modernproto/acquire.lua (modern)
 *   sighting             migrate/scripts/sighting.lua @record
 *   refresh of a lock    Go: Lock.Refresh
 *                        (ends when two steps from the phase)
 *   controller           Go: Controller.judge, Controller.clientBlockers, Controller.Step
 *   repair               Go: Controller.Repair
 *                        (to the phase the evidence shows)
 */

#define LEGACY 1
#define DW     2
#define DR     3
#define MODERN 4

#ifndef NG
#define NG 2 /* Go lockers */
#endif
#ifndef TMAX
#define TMAX 7
#endif
#ifndef PL
#define PL 2 /* phase lease */
#endif
#ifndef LL
#define LL 2 /* lock lease */
#endif
#ifndef Q
#define Q 2 /* quiet period */
#endif
#ifndef JAVA
#define JAVA 1
#endif
#ifndef LOSS
#define LOSS 1 /* the phase key may be lost (eviction, FLUSHDB, failover) */
#endif
#ifndef ROLLBACK
#define ROLLBACK 1
#endif
#ifndef TRIES
#define TRIES 3 /* lock attempts per Go locker */
#endif
#ifndef JTRIES
#define JTRIES 2 /* Java locks */
#endif
#ifndef START
#define START LEGACY
#endif

#define READS_LEGACY(p)  ((p) <= DR)
#define READS_MODERN(p)  ((p) >= DW)
#define WRITES_LEGACY(p) ((p) <= DW)
#define WRITES_MODERN(p) ((p) >= DW)
/* migrate.Compatible: each reads what the other writes */
#define XW(w, r) ((WRITES_LEGACY(w) && READS_LEGACY(r)) || (WRITES_MODERN(w) && READS_MODERN(r)))
#define COMPAT(a, b) (XW(a, b) && XW(b, a))

/* Time is relative: every timer below holds what is left of it (or an age
 * saturated at Q), and the clock's tick counts them all down at once, so
 * time runs unbounded and states that differ only by absolute time merge. */
/* namespace */
byte phase = START;
bool phaseKey = true;
byte mphase = START;  /* the namespace hash's copy of the phase (evidence after a loss) */
byte sinceAge = Q;    /* age of phase-since, saturated at Q (server clock) */
#if JAVA
byte sightAge = 0;    /* age of the last legacy sighting, saturated at Q: the Java fleet was seen at the start */
#else
byte sightAge = Q;
#endif
/* registry: one entry per Go locker; eleft is its life by the server's clock */
byte ephase[NG];
byte ephase2[NG];     /* FIX_MOVE: the phase it is moving to, 0 none */
byte eheld[NG];       /* oldest phase of a held lock, 0 none */
byte eleft[NG];
/* the lock: holder ids (NG = the Java locker), what is left of each key */
bool lk, mk;
byte lwho, mwho;
byte lleft, mleft;
/* holders */
bool held[NG + 1];
byte hleft[NG + 1];
byte hph[NG + 1];
/* the lockers' phase leases (their own monotonic clocks), what is left */
byte trust[NG];
/* one reading per locker and one controller action per tick */
bool hbt[NG], ctlt;
byte jquiet;          /* time since the Java locker's last lock, saturated at Q */
bool overlap;

#define LFREE (!lk || lleft == 0)
#define MFREE (!mk || mleft == 0)
#define VALID(i) (held[i] && hleft[i] > 0)
#define LIVE(i) (eleft[i] > 0)
#define DOWN(x) if :: x > 0 -> x-- :: else -> skip fi
#define AGE(x) if :: x < Q -> x++ :: else -> skip fi

inline acquired(i) {
	k = 0;
	do
	:: k <= NG -> if :: k != i && VALID(k) -> overlap = true :: else -> skip fi; k++
	:: else -> break
	od;
	k = 0;
	if
	:: overlap -> printf("EV OVERLAP: c%d holds in phase %d while another holds\n", i, hph[i])
	:: else -> skip
	fi;
	assert(!overlap)
}

#if LIVE_RUN
#define TICKS 0
#else
#define TICKS 1
#endif

active proctype clock() {
	byte k;
end:	do
	:: atomic { TICKS ->
		DOWN(lleft); DOWN(mleft);
		k = 0;
		do
		:: k < NG -> DOWN(eleft[k]); DOWN(trust[k]); hbt[k] = false; k++
		:: else -> break
		od;
		k = 0;
		do
		:: k <= NG -> DOWN(hleft[k]); k++
		:: else -> break
		od;
		k = 0;
		AGE(sinceAge); AGE(sightAge); AGE(jquiet); ctlt = false;
		printf("EV tick\n") }
	od
}

#ifdef FIX_MOVE
#define REPORT2(v) ephase2[i] = v
#else
#define REPORT2(v) skip
#endif

/* FIX_RETURN: a locker whose phase lease lapsed and that holds no lock
 * starts afresh at the phase it reads, as a new locker does, instead of
 * stepping one phase towards it. */
#ifdef FIX_RETURN
#define RETURNING (trust[i] == 0 && !VALID(i))
#else
#define RETURNING false
#endif

proctype locker(byte i) {
	byte cur = 0, k, target;
	bool hb2;
end:	do
	/* heartbeat + reading: migrate/scripts/heartbeat.lua @entry @read, then
	 * follower.judge and the one-phase step (follower.reading) */
	:: atomic { !hb2 && !hbt[i] ->
		hbt[i] = true;
		ephase[i] = (cur == 0 -> LEGACY : cur);
#ifndef MUT_HELD_INVISIBLE
		eheld[i] = (VALID(i) -> hph[i] : 0);
#endif
		eleft[i] = PL + LL;
		if
#ifdef MUT_LOST_AS_LEGACY
		:: !phaseKey -> target = LEGACY
#else
		:: !phaseKey -> target = 0; trust[i] = 0 /* refuse: ReasonLost / ReasonUninitialized */
#endif
		:: else -> target = phase
		fi;
		if
		:: target != 0 ->
			if
			:: cur != target && (cur == 0 || RETURNING) -> cur = target; hb2 = true
			:: cur != 0 && !RETURNING && target > cur -> cur++; hb2 = true
			:: cur != 0 && !RETURNING && target < cur -> cur--; hb2 = true
			:: else -> skip
			fi;
#ifdef MUT_NO_LEASE
			trust[i] = 255;
#else
			trust[i] = PL;
#endif
			if :: hb2 -> REPORT2(cur) :: else -> skip fi;
			printf("EV c%d heartbeat: registry says %d, reads phase %d, now runs %d\n", i, ephase[i], target, cur)
		:: else -> printf("EV c%d heartbeat: the phase key is missing: refuses\n", i)
		fi;
		target = 0 }
	/* follower.sync: the second heartbeat after a move */
	:: atomic { hb2 ->
		ephase[i] = cur; REPORT2(0);
#ifndef MUT_HELD_INVISIBLE
		eheld[i] = (VALID(i) -> hph[i] : 0);
#endif
		eleft[i] = PL + LL; hb2 = false;
		printf("EV c%d second heartbeat: registry says %d\n", i, cur) }
	/* lock, while the phase lease runs (follower.valid) */
	:: atomic { !held[i] && cur != 0 && trust[i] > 0 ->
		if
		:: cur == LEGACY && LFREE -> /* legacy/scripts/acquire.lua @setnx @takeover */
			lk = true; lwho = i; lleft = LL; held[i] = true
		:: (cur == DW || cur == DR) && LFREE && MFREE -> /* migrate/scripts/acquire.lua @free @write */
			if :: cur == DW -> lk = true; lwho = i; lleft = LL :: else -> skip fi;
			mk = true; mwho = i; mleft = LL; held[i] = true
		:: (cur == DW || cur == DR) && !LFREE && MFREE && !(mk && mwho == lwho) -> sightAge = 0 /* migrate/scripts/sighting.lua @record */
		:: cur == MODERN && MFREE -> /* internal/protocol/modernproto/acquire.lua */
			mk = true; mwho = i; mleft = LL; held[i] = true
		:: else -> skip
		fi;
		if
		:: held[i] -> hleft[i] = LL; hph[i] = cur;
			printf("EV c%d locks in phase %d\n", i, cur);
			acquired(i)
		:: else -> skip
		fi }
	/* refresh: while the phase lease runs, and the lock's phase is within
	 * one step of the one run (a lock two steps away ends) */
	:: atomic { VALID(i) && trust[i] > 0 && COMPAT(hph[i], cur) && hleft[i] < LL ->
		if :: lk && lwho == i && WRITES_LEGACY(hph[i]) -> lleft = LL :: else -> skip fi;
		if :: mk && mwho == i && WRITES_MODERN(hph[i]) -> mleft = LL :: else -> skip fi;
		hleft[i] = LL;
		printf("EV c%d refreshes its phase-%d lock\n", i, hph[i]);
		acquired(i) }
	/* release: by owner (token, owner window) */
	:: atomic { held[i] ->
		if :: lk && lwho == i -> lk = false :: else -> skip fi;
		if :: mk && mwho == i -> mk = false :: else -> skip fi;
		held[i] = false; hleft[i] = 0; hph[i] = 0 }
	od
}

/* The Java fleet: legacy only, not in the registry. The quiet-period
 * assumption: a live Java locker locks at least once per quiet period, and
 * a dual-phase locker sees it (a sighting) whenever it does; a Java locker
 * quiet for Q has retired for good. */
proctype java() {
	byte k;
end:	do
	:: atomic { jquiet < Q && !held[NG] && LFREE ->
		lk = true; lwho = NG; lleft = LL; held[NG] = true; hleft[NG] = LL; hph[NG] = LEGACY;
		jquiet = 0; sightAge = 0;
		printf("EV java locks the legacy key\n");
		acquired(NG) }
	:: atomic { held[NG] ->
		if :: lk && lwho == NG -> lk = false :: else -> skip fi;
		held[NG] = false; hleft[NG] = 0 }
	od
}

/* Controller.Step after Controller.judge: one step, only when every live
 * registry entry runs the current phase and holds no lock of another phase;
 * beyond dual-write only when no sighting is younger than the quiet period
 * and dual-write ran for the quiet period. A rollback: one step, when every
 * live entry's phases are compatible with the target. */
#define E2OK(j, p) (ephase2[j] == 0 || ephase2[j] == (p))
#define E2COMPAT(j, p) (ephase2[j] == 0 || COMPAT(ephase2[j], p))
#define ENTRY_AT(j, p) (!LIVE(j) || (ephase[j] == (p) && E2OK(j, p) && (eheld[j] == 0 || eheld[j] == (p))))
#define ENTRY_COMPAT(j, p) (!LIVE(j) || (COMPAT(ephase[j], p) && E2COMPAT(j, p) && (eheld[j] == 0 || COMPAT(eheld[j], p))))
#if NG == 2
#define ALL_AT(p) (ENTRY_AT(0, p) && ENTRY_AT(1, p))
#define ALL_COMPAT(p) (ENTRY_COMPAT(0, p) && ENTRY_COMPAT(1, p))
#else
#define ALL_AT(p) (ENTRY_AT(0, p))
#define ALL_COMPAT(p) (ENTRY_COMPAT(0, p))
#endif
#ifdef MUT_NO_QUIET
#define QUIET(next) true
#else
#define QUIET(next) ((next) <= DW || (sightAge >= Q && ((next) != DR || sinceAge >= Q)))
#endif
#ifdef MUT_SKIP_STEP
#define STEP 2
#else
#define STEP 1
#endif

active proctype controller() {
end:	do
	:: atomic { !ctlt && phaseKey && phase + STEP <= MODERN && ALL_AT(phase) && QUIET(phase + STEP) ->
		ctlt = true; phase = phase + STEP; sinceAge = 0; mphase = phase;
		printf("EV controller steps to phase %d\n", phase) }
#if ROLLBACK
	:: atomic { !ctlt && phaseKey && phase > LEGACY && ALL_COMPAT(phase - 1) ->
		ctlt = true; phase--; sinceAge = 0; mphase = phase;
		printf("EV controller rolls back to phase %d\n", phase) }
#endif
#if LOSS
	/* phase repair --to the phase the evidence shows, restarting the
	 * quiet period */
	:: atomic { !ctlt && !phaseKey -> ctlt = true; phaseKey = true; phase = mphase; sinceAge = 0;
		printf("EV controller repairs the phase key to %d\n", phase) }
#endif
	od
}

#if LOSS
active proctype loss() {
	atomic { phaseKey -> phaseKey = false; printf("EV the phase key is lost\n") }
}
#endif

init {
	atomic {
		run locker(0);
#if NG == 2
		run locker(1);
#endif
#if JAVA
		run java();
#endif
	}
}
