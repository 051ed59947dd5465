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
 *   follower reading     migrate/heartbeat.lua @entry @read; Go: follower.syncOnce,
 *                        follower.judge (one phase per reading; a missing phase
 *                        refuses), the second heartbeat in follower.sync
 *   phase lease          Go: follower.valid (lock only while the lease runs)
 *   acquire per phase    migrate/acquire.lua @free @write (dual phases);
 *                        legacy/acquire.lua @setnx @takeover (legacy);
 *                        internal/modernproto/acquire.lua (modern)
 *   sighting             migrate/sighting.lua @record
 *   refresh of a lock    Go: Lock.refresh (ends when two steps from the phase)
 *   controller           Go: Controller.judge, Controller.clientBlockers, Controller.Step
 *   repair               Go: Controller.Repair (to the phase the evidence shows)
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

byte now;
/* namespace */
byte phase = START;
bool phaseKey = true;
byte mphase = START;  /* the namespace hash's copy of the phase (evidence after a loss) */
short since = -10;    /* phase-since, server time */
short sight = -10;    /* last legacy sighting, server time */
/* registry: one entry per Go locker, expiry by the server's clock */
byte ephase[NG];
byte eheld[NG];       /* oldest phase of a held lock, 0 none */
short eexp[NG];
/* the lock: holder ids (NG = the Java locker), expiries */
bool lk, mk;
byte lwho, mwho;
short lexp, mexp;
/* holders */
bool held[NG + 1];
short hend[NG + 1];
byte hph[NG + 1];
bool overlap;

#define LFREE (!lk || !(now < lexp))
#define MFREE (!mk || !(now < mexp))
#define VALID(i) (held[i] && now < hend[i])
#define LIVE(i) (eexp[i] > now)

inline acquired(i) {
	k = 0;
	do
	:: k <= NG -> if :: k != i && VALID(k) -> overlap = true :: else -> skip fi; k++
	:: else -> break
	od;
	k = 0;
	if
	:: overlap -> printf("EV now=%d OVERLAP: c%d acquires in phase %d while another holds\n", now, i, hph[i])
	:: else -> skip
	fi;
	assert(!overlap)
}

active proctype clock() {
end:	do
	:: atomic { now < TMAX -> now++ }
	od
}

proctype locker(byte i) {
	byte cur = 0, k, target, tries = 0;
	short until = -1, hbAt = -1;
	bool hb2;
end:	do
	/* heartbeat + reading: migrate/heartbeat.lua @entry @read, then
	 * follower.judge and the one-phase step (follower.syncOnce) */
	:: atomic { !hb2 && hbAt != now ->
		hbAt = now;
		ephase[i] = (cur == 0 -> LEGACY : cur);
#ifndef MUT_HELD_INVISIBLE
		eheld[i] = (held[i] && now < hend[i] -> hph[i] : 0);
#endif
		eexp[i] = now + PL + LL;
		if
#ifdef MUT_LOST_AS_LEGACY
		:: !phaseKey -> target = LEGACY
#else
		:: !phaseKey -> target = 0; until = -1 /* refuse: ReasonLost / ReasonUninitialized */
#endif
		:: else -> target = phase
		fi;
		if
		:: target != 0 ->
#ifdef MUT_NO_LEASE
			until = 127;
#else
			until = now + PL;
#endif
			if
			:: cur == 0 -> cur = target; hb2 = true
			:: cur != 0 && target > cur -> cur++; hb2 = true
			:: cur != 0 && target < cur -> cur--; hb2 = true
			:: else -> skip
			fi;
			printf("EV now=%d c%d heartbeat: reads phase %d, runs %d, trusts it until %d\n", now, i, target, cur, until)
		:: else -> printf("EV now=%d c%d heartbeat: the phase key is missing: refuses\n", now, i)
		fi;
		target = 0 }
	/* follower.sync: the second heartbeat after a move */
	:: atomic { hb2 ->
		ephase[i] = cur;
#ifndef MUT_HELD_INVISIBLE
		eheld[i] = (held[i] && now < hend[i] -> hph[i] : 0);
#endif
		eexp[i] = now + PL + LL; hb2 = false }
	/* lock, while the phase lease runs (follower.valid) */
	:: atomic { !held[i] && cur != 0 && now < until && tries < TRIES ->
		tries++;
		if
		:: cur == LEGACY && LFREE -> /* legacy/acquire.lua @setnx @takeover */
			lk = true; lwho = i; lexp = now + LL; held[i] = true
		:: (cur == DW || cur == DR) && LFREE && MFREE -> /* migrate/acquire.lua @free @write */
			if :: cur == DW -> lk = true; lwho = i; lexp = now + LL :: else -> skip fi;
			mk = true; mwho = i; mexp = now + LL; held[i] = true
		:: (cur == DW || cur == DR) && !LFREE && MFREE -> sight = now /* migrate/sighting.lua @record */
		:: cur == MODERN && MFREE -> /* internal/modernproto/acquire.lua */
			mk = true; mwho = i; mexp = now + LL; held[i] = true
		:: else -> skip
		fi;
		if
		:: held[i] -> hend[i] = now + LL; hph[i] = cur;
			printf("EV now=%d c%d locks in phase %d until %d\n", now, i, cur, hend[i]);
			acquired(i)
		:: else -> skip
		fi }
	/* refresh: while the phase lease runs, and the lock's phase is within
	 * one step of the one run (a lock two steps away ends) */
	:: atomic { VALID(i) && now < until && COMPAT(hph[i], cur) ->
		if :: lk && lwho == i && WRITES_LEGACY(hph[i]) -> lexp = now + LL :: else -> skip fi;
		if :: mk && mwho == i && WRITES_MODERN(hph[i]) -> mexp = now + LL :: else -> skip fi;
		hend[i] = now + LL;
		printf("EV now=%d c%d refreshes its phase-%d lock until %d\n", now, i, hph[i], hend[i]);
		acquired(i) }
	/* release: by owner (token, owner window) */
	:: atomic { held[i] ->
		if :: lk && lwho == i -> lk = false :: else -> skip fi;
		if :: mk && mwho == i -> mk = false :: else -> skip fi;
		held[i] = false; hend[i] = 0; hph[i] = 0 }
	od
}

/* The Java fleet: legacy only, not in the registry. The quiet-period
 * assumption: a live Java locker locks at least once per quiet period, and
 * a dual-phase locker sees it (a sighting) whenever it does; a Java locker
 * quiet for Q has retired for good. */
proctype java() {
	byte k, tries = 0;
	short last = 0;
end:	do
	:: atomic { now < last + Q && !held[NG] && LFREE && tries < JTRIES ->
		tries++;
		lk = true; lwho = NG; lexp = now + LL; held[NG] = true; hend[NG] = now + LL; hph[NG] = LEGACY;
		last = now; sight = now;
		printf("EV now=%d java locks the legacy key until %d\n", now, hend[NG]);
		acquired(NG) }
	:: atomic { held[NG] ->
		if :: lk && lwho == NG -> lk = false :: else -> skip fi;
		held[NG] = false; hend[NG] = 0 }
	od
}

/* Controller.Step after Controller.judge: one step, only when every live
 * registry entry runs the current phase and holds no lock of another phase;
 * beyond dual-write only when no sighting is younger than the quiet period
 * and dual-write ran for the quiet period. A rollback: one step, when every
 * live entry's phases are compatible with the target. */
#define ENTRY_AT(j, p) (!LIVE(j) || (ephase[j] == (p) && (eheld[j] == 0 || eheld[j] == (p))))
#define ENTRY_COMPAT(j, p) (!LIVE(j) || (COMPAT(ephase[j], p) && (eheld[j] == 0 || COMPAT(eheld[j], p))))
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
#define QUIET(next) ((next) <= DW || (now - sight >= Q && ((next) != DR || now - since >= Q)))
#endif
#ifdef MUT_SKIP_STEP
#define STEP 2
#else
#define STEP 1
#endif

active proctype controller() {
	short at = -1;
end:	do
	:: atomic { at != now && phaseKey && phase + STEP <= MODERN && ALL_AT(phase) && QUIET(phase + STEP) ->
		at = now; phase = phase + STEP; since = now;
		mphase = phase;
		printf("EV now=%d controller steps to phase %d\n", now, phase) }
#if ROLLBACK
	:: atomic { at != now && phaseKey && phase > LEGACY && ALL_COMPAT(phase - 1) ->
		at = now; phase--; since = now; mphase = phase;
		printf("EV now=%d controller rolls back to phase %d\n", now, phase) }
#endif
#if LOSS
	/* phase repair --to the highest phase the evidence shows, restarting
	 * the quiet period */
	:: atomic { !phaseKey -> phaseKey = true; phase = mphase; since = now;
		printf("EV now=%d controller repairs the phase key to %d\n", now, phase) }
#endif
	od
}

#if LOSS
active proctype loss() {
	atomic { phaseKey -> phaseKey = false; printf("EV now=%d the phase key is lost\n", now) }
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
