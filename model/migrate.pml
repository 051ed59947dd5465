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
 * every acquisition and refresh. Liveness run (LIVE_RUN): with no Java
 * locker, no loss, no rollback, and lockers that take at most TRIES locks
 * and do not refresh them, the controller reaches modern (weak fairness).
 *
 * Ties to code:
 *   follower reading     internal/protocol/migrateproto/scripts/heartbeat.lua @entry @read; Go: follower.sync, follower.reading, follower.beat, follower.judge, want, follower.move
 *                        (a reading, an announcing reading with next,
 *                        the move, a reporting reading; a missing phase
 *                        refuses; a reading fails when its heartbeat was
 *                        held up or wrote nothing)
 *   heartbeat            Go: follower.beat, follower.entryLocked, Entry.Same
 *                        (sent and landing as two steps when held up in
 *                        the network; a touch when the entry says what
 *                        the last confirmed write stored; the hold is the
 *                        phase lease plus the longest ttl it covers)
 *   acquire in flight    Go: heldSet.reserve, heldSet.land, heldSet.settle
 *   phase lease          Go: follower.valid
 *                        (lock only while the lease runs)
 *   acquire per phase    internal/protocol/migrateproto/scripts/acquire.lua @free @write (dual phases);
 *                        legacy/scripts/acquire.lua @setnx @takeover (legacy);
 *                        internal/protocol/modernproto/acquire.lua (modern)
 *   sighting             internal/protocol/migrateproto/scripts/sighting.lua @record
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
#define TRIES 2 /* lock calls per Go locker, in the liveness run */
#endif
#ifndef START
#define START LEGACY
#endif
#ifndef TOP
#define TOP MODERN /* the controller steps no further (a bound) */
#endif
#ifndef OLDV
#define OLDV 0 /* locker 1 is an old-version locker (an upgrade in progress) */
#endif
#ifndef LATE
/* a heartbeat held up in the network lands later (one per locker at a
 * time): 0 none; 1 c0's first readings of follower.sync (with the hold its
 * lease covers already); 2 every heartbeat of every locker */
#define LATE 0
#endif
#ifndef HOLDS
/* 0 every hold covers a lock (PL + LL); 1 c0 starts with none (PL: it took
 * no lock yet) and covers one from a lock call's reading on; 2 both */
#define HOLDS 0
#endif
#ifndef TWIN
#define TWIN 0 /* an entry under c0's id with a seq above its own may be written (another process under its id) */
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
byte ephase2[NG];     /* next: the phase it is about to run, 0 none */
byte eheld[NG];       /* oldest phase of a held lock, 0 none */
byte eleft[NG];
/* the follower's memory of its last confirmed write (follower.stored,
 * follower.confirmed; cleared while not confirmed): a heartbeat whose entry
 * says the same is a touch */
bool conf[NG];
byte sph[NG], snx[NG], shd[NG];
/* the hold its phase lease was granted under covers a lock of ttl LL
 * (follower.maxTTL; it never shrinks): a lock call needs it, else it reads
 * first with the longer hold */
bool mt[NG];
#if LATE
/* a heartbeat held up in the network (its reading gave up on it: an unknown
 * outcome): a touch or an entry (its fields), its hold, and whether an entry
 * of the same client written since stands (a seq at or above its own) */
bool fl[NG], ftouch[NG], fstale[NG];
byte fph[NG], fnx[NG], fhd[NG], fhold[NG];
#endif
#if TWIN
bool forn; /* c0's entry is one with a seq above any of its own, not its write */
#define FOREIGN (i == 0 && forn)
#else
#define FOREIGN false
#endif
/* the lock: holder ids (NG = the Java locker), what is left of each key */
bool lk, mk;
byte lwho, mwho;
byte lleft, mleft;
/* holders */
bool held[NG + 1];
byte hleft[NG + 1];
byte hph[NG + 1];
/* the lockers' phase leases (their own monotonic clocks), what is left;
 * tb: the lease an announcing reading grants the move */
byte trust[NG];
byte tb[NG];
/* acquires in flight (heldSet.reserve), their phase, and what is left of
 * the lease they will give: a lease counts from before the send
 * (newHeldLock's start), so one that lands late holds for less */
bool res[NG];
byte rph[NG];
byte rleft[NG];
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

#ifndef LIVE_RUN
#define LIVE_RUN 0
#endif
#if LIVE_RUN
/* liveness: the fleet reaches modern once every locker has stopped locking */
ltl live { <> (phase == MODERN) }
#endif

active proctype clock() {
	byte k;
end:	do
	:: d_step { true ->
		DOWN(lleft); DOWN(mleft);
		k = 0;
		do
		:: k < NG -> DOWN(eleft[k]); DOWN(trust[k]); DOWN(tb[k]); DOWN(rleft[k]); hbt[k] = false;
			/* a dead entry is pruned at once here (the code prunes after a
			 * grace; a touch in between renews what the client last wrote,
			 * which only keeps it counted longer): its fields are never read
			 * again, and a late heartbeat finds no seq to be judged by */
			if :: eleft[k] == 0 -> ephase[k] = 0; ephase2[k] = 0; eheld[k] = 0;
				/* the follower's memory of it is kept, in the code, and its
				 * next heartbeat is a touch that finds none and sends the
				 * entry at once: here, the entry at once */
				conf[k] = false; sph[k] = 0; snx[k] = 0; shd[k] = 0;
#if LATE
				fstale[k] = false;
#endif
#if TWIN
				if :: k == 0 -> forn = false :: else -> skip fi;
#endif
				skip
			:: else -> skip fi;
#if LIVE_RUN
			/* heldSet.settle: an acquire whose ttl has passed since its send
			 * is over, whether or not its reply came (the liveness run needs
			 * it said: weak fairness is per process, not per step) */
			if :: res[k] && rleft[k] == 0 -> res[k] = false; rph[k] = 0 :: else -> skip fi;
#endif
			k++
		:: else -> break
		od;
		/* an expired key is gone, as on the server */
		if :: lleft == 0 -> lk = false; lwho = 0 :: else -> skip fi;
		if :: mleft == 0 -> mk = false; mwho = 0 :: else -> skip fi;
		k = 0;
		do
		:: k <= NG -> DOWN(hleft[k]);
			/* an expired lock's phase is never read again */
			if :: hleft[k] == 0 -> hph[k] = 0 :: else -> skip fi;
			k++
		:: else -> break
		od;
		k = 0;
		AGE(sinceAge); AGE(sightAge); AGE(jquiet); ctlt = false;
		printf("EV tick\n") }
	od
}

/* An acquire in phase p landing on the server, its lease (and the legacy
 * value's life) left counting from its send. */
inline land(i, p, left) {
	if
	:: p == LEGACY && LFREE -> /* legacy/scripts/acquire.lua @setnx @takeover: W fixed before the send */
		lk = true; lwho = i; lleft = left; held[i] = true
	:: (p == DW || p == DR) && LFREE && MFREE -> /* internal/protocol/migrateproto/scripts/acquire.lua @free @write */
		if :: p == DW -> lk = true; lwho = i; lleft = left :: else -> skip fi;
		mk = true; mwho = i; mleft = LL; held[i] = true
	:: (p == DW || p == DR) && !LFREE && MFREE && !(mk && mwho == lwho) -> sightAge = 0 /* internal/protocol/migrateproto/scripts/sighting.lua @record */
	:: p == MODERN && MFREE -> /* internal/protocol/modernproto/acquire.lua */
		mk = true; mwho = i; mleft = LL; held[i] = true
	:: else -> skip
	fi
}

/* follower.want: one phase towards the phase read; straight to it for a
 * locker that runs nothing yet or that returns (its phase lease had lapsed:
 * its old phase may be long gone from the registry) holding nothing live,
 * in flight included. A returning locker that still holds a live lock
 * waits: no move and no new lease until the lock is gone (its refreshes
 * fail without a lease, so it goes by its ttl at the latest). */
#define LAPSED (trust[i] == 0)
#define BUSY (VALID(i) || res[i])
#ifdef MUT_STEP_RETURN
#define WAITS false
#define WANT(c, t) ((c) == 0 -> (t) : ((t) > (c) -> (c) + 1 : ((t) < (c) -> (c) - 1 : (c))))
#else
#define WAITS (LAPSED && BUSY)
#define WANT(c, t) ((c) == 0 || (LAPSED && !BUSY) -> (t) : (WAITS -> (c) : ((t) > (c) -> (c) + 1 : ((t) < (c) -> (c) - 1 : (c)))))
#endif
/* heldSet.report: held locks and acquires in flight (heldSet.reserve) */
#ifdef MUT_HELD_INVISIBLE
#define HELDREP 0
#elif defined(MUT_STALE_HELD)
byte lastheld[NG];
#define HELDREP (VALID(i) -> hph[i] : (res[i] -> rph[i] : lastheld[i]))
#elif defined(MUT_NO_RESERVE)
#define HELDREP (VALID(i) -> hph[i] : 0)
#else
#define HELDREP (VALID(i) -> hph[i] : (res[i] -> rph[i] : 0))
#endif
/* heartbeat.lua @entry: the entry reports the phase run, the phase about
 * to be run (next, 0 none), the held phases; its life by the server's clock
 * is the hold the client asks for — its phase lease plus the longest ttl its
 * lease covers (follower.reading: PL, or PL + LL once a lock call read).
 * Protocol 3: when the entry says what the client's last confirmed write
 * stored (its memory, follower.stored, not the registry), the heartbeat is a
 * touch (follower.beat, Entry.Same): it renews only the stored entry's life. */
#ifdef MUT_TOUCH_IGNORES_NEXT
#define SAME (conf[i] && sph[i] == eph && shd[i] == ehd)
#else
#define SAME (conf[i] && sph[i] == eph && snx[i] == enx && shd[i] == ehd)
#endif
/* A touch is judged by its seq as an entry is, and never lowers the stored
 * expiry. The mutant is the touch before the fix: no seq check, and the
 * expiry set to its own hold. */
#ifdef MUT_TOUCH_LOWERS
#define TSTALE(t, st) ((st) && !(t))
#define TLIFE(h) (h)
#else
#define TSTALE(t, st) (st)
#define TLIFE(h) (eleft[i] > (h) -> eleft[i] : (h))
#endif
/* A reading whose heartbeat wrote nothing (written 0) fails: it renews no
 * phase lease. The mutant: it counts as a good reading. */
#ifdef MUT_ZERO_RENEWS
#define GOOD (wr <= 1)
#else
#define GOOD (wr == 1)
#endif

/* heartbeat.lua @entry for locker i: wr = 1 landed; 0 an entry with a seq
 * at or above its own stands (st: an entry this client wrote after sending
 * it; FOREIGN: one it never wrote): nothing written; 2 (the script's -1) a
 * touch that found no entry: nothing written. */
inline hbland(ph, nx, hd, t, h, st) {
	if
	:: !LIVE(i) && t -> wr = 2
	:: LIVE(i) && (FOREIGN || TSTALE(t, st)) -> wr = 0
	:: else -> wr = 1;
		if
		:: t -> eleft[i] = TLIFE(h)
		:: else -> ephase[i] = ph; ephase2[i] = nx; eheld[i] = hd; eleft[i] = h
		fi
	fi
}

/* The heartbeat's entry and hold, and whether it is a touch. rc: the sync's
 * hold covers a lock (a lock call's reading, or one since). */
inline hbmake(nx) {
	eph = (cur == 0 -> LEGACY : cur); enx = nx; ehd = HELDREP; t = SAME;
	h = (rc -> PL + LL : PL)
}

inline forget() {
	conf[i] = false; sph[i] = 0; snx[i] = 0; shd[i] = 0
}

/* follower.beat, the heartbeat landing at once (its reply comes): a touch
 * that found no entry sends the entry at once; the memory follows the reply
 * (a write that landed is confirmed; anything else is not); ok: the reading
 * may be trusted. An entry that lands while an older heartbeat is held up
 * makes that one stale (its seq is below the stored one). */
inline beat(nx) {
	hbmake(nx);
	hbland(eph, enx, ehd, t, h, false);
	if :: wr == 2 -> t = false; hbland(eph, enx, ehd, false, h, false) :: else -> skip fi;
	if
	:: wr == 1 && !t -> conf[i] = true; sph[i] = eph; snx[i] = enx; shd[i] = ehd;
#if LATE
		if :: fl[i] -> fstale[i] = true :: else -> skip fi;
#endif
		skip
	:: wr == 1 && t -> skip
	:: else -> forget()
	fi;
	ok = GOOD;
	printf("EV c%d heartbeat (touch %d, next %d, hold %d): written %d\n", i, t, enx, h, (wr == 2 -> -1 : wr))
}

#if LATE
/* The heartbeat is held up in the network: the reading gives up on it (its
 * outcome unknown: not confirmed, the reading fails); it lands later, in its
 * own step (the locker's late landing). */
inline holdup(nx) {
	hbmake(nx);
	fl[i] = true; ftouch[i] = t; fhold[i] = h; fstale[i] = false;
	if :: !t -> fph[i] = eph; fnx[i] = enx; fhd[i] = ehd :: else -> skip fi;
	forget();
	ok = false;
	printf("EV c%d heartbeat (touch %d, next %d, hold %d) held up in the network: the reading fails\n", i, t, enx, h)
}
#endif

#define CLEAR eph = 0; enx = 0; ehd = 0; h = 0; wr = 0; t = false; ok = false
/* a reading that agrees: the phase lease runs from it, for locks of the ttl
 * its hold covers */
#ifdef MUT_NO_LEASE
#define RENEW trust[i] = 255; if :: rc -> mt[i] = true :: else -> skip fi
#else
#define RENEW trust[i] = PL; if :: rc -> mt[i] = true :: else -> skip fi
#endif

/* What a first reading does with the phase it read (it failed: nothing). */
inline read0() {
	if
	:: !ok -> skip /* held up, or wrote nothing: no lease, no move */
	:: else ->
		if
#ifdef MUT_LOST_AS_LEGACY
		:: !phaseKey -> target = LEGACY
#else
		:: !phaseKey -> target = 0; trust[i] = 0 /* refuse: ReasonLost / ReasonUninitialized */
#endif
		:: else -> target = phase
		fi;
		if
		:: target != 0 && WANT(cur, target) == cur && WAITS -> skip /* no lease until its locks are gone */
		:: target != 0 && WANT(cur, target) == cur && !WAITS -> RENEW
		:: target != 0 && WANT(cur, target) != cur ->
			pend = WANT(cur, target);
#ifdef MUT_MOVE_FIRST
			/* the old follower: moves at once, reports later */
			cur = pend; pend = 0; trust[i] = PL; stage = 3;
			if :: rc -> mt[i] = true :: else -> skip fi
#else
			stage = 1
#endif
		:: else -> skip
		fi
	fi;
	if :: stage == 0 -> rc = false :: else -> skip fi;
	printf("EV c%d reads phase %d (registry says %d), wants %d\n", i, target, ephase[i], (pend != 0 -> pend : cur));
	target = 0;
	CLEAR
}

proctype locker(byte i) {
	byte cur = 0, k, target, pend, stage;
	/* one reading's scratch (cleared after each step): the entry, its hold,
	 * written; rc: the sync's hold covers a lock of ttl LL */
	byte eph, enx, ehd, h, wr;
	bool t, ok, rc;
#if LIVE_RUN
	byte calls = TRIES;
#define CALL_LEFT (calls > 0)
#define CALL calls--
#else
#define CALL_LEFT true
#define CALL skip
#endif
	/* stage: 0 idle; 1 a reading wants pend; 2 the announcing reading
	 * agreed: move; 3 moved: report */
end:	do
	/* follower.reading (the first of follower.sync): report the phase run,
	 * read the stored one; the lease is renewed only if it agrees. The
	 * loop's reading covers the ttl the lease covers already; a lock call
	 * whose ttl it does not cover reads with the longer hold. */
	:: d_step { stage == 0 && !hbt[i] -> hbt[i] = true; rc = mt[i]; beat(0); read0() }
	:: d_step { stage == 0 && !hbt[i] && !mt[i] -> hbt[i] = true; rc = true; beat(0); read0() }
	/* follower.reading with next: announce the move, read again */
	:: d_step { stage == 1 -> beat(pend);
		if
		:: !ok -> pend = 0; stage = 0
		:: ok && !phaseKey -> trust[i] = 0; pend = 0; stage = 0
		:: ok && phaseKey && WANT(cur, phase) == pend -> tb[i] = PL; stage = 2
		:: ok && phaseKey && WANT(cur, phase) == cur && WANT(cur, phase) != pend -> if :: !WAITS -> RENEW :: else -> skip fi; pend = 0; stage = 0
		:: ok && phaseKey && WANT(cur, phase) != cur && WANT(cur, phase) != pend -> pend = 0; stage = 0
		fi;
		if :: stage == 0 -> rc = false :: else -> skip fi;
		printf("EV c%d announces %d (registry: %d next %d)\n", i, pend, ephase[i], ephase2[i]);
		CLEAR }
	/* follower.move: run the announced phase; the lease runs from the
	 * announcing reading; held locks two phases away end */
	:: d_step { stage == 2 ->
		cur = pend; pend = 0; trust[i] = tb[i]; tb[i] = 0; stage = 3;
		if :: rc -> mt[i] = true :: else -> skip fi;
		if :: VALID(i) && !COMPAT(hph[i], cur) -> held[i] = false; hleft[i] = 0; hph[i] = 0 :: else -> skip fi;
		printf("EV c%d now runs %d\n", i, cur) }
	/* follower.reading after the move: report the new phase */
	:: d_step { stage == 3 -> beat(0);
		if
		:: !ok -> skip
		:: ok && !phaseKey -> trust[i] = 0
		:: ok && phaseKey && WANT(cur, phase) == cur && !WAITS -> RENEW
		:: else -> skip
		fi;
		stage = 0; rc = false;
		printf("EV c%d reports %d\n", i, cur);
		CLEAR }
#if LATE
	/* a reading whose heartbeat is held up in the network fails */
	:: d_step { stage == 0 && !hbt[i] && !fl[i] && (LATE >= 2 || i == 0) -> hbt[i] = true; rc = mt[i]; holdup(0); rc = false; CLEAR }
	:: d_step { stage == 1 && !fl[i] && LATE >= 2 -> holdup(pend); pend = 0; stage = 0; rc = false; CLEAR }
	:: d_step { stage == 3 && !fl[i] && LATE >= 2 -> holdup(0); stage = 0; rc = false; CLEAR }
	/* the held-up heartbeat lands (heartbeat.lua @entry, judged by its seq);
	 * nobody reads its reply */
	:: d_step { fl[i] ->
		hbland(fph[i], fnx[i], fhd[i], ftouch[i], fhold[i], fstale[i]);
		printf("EV c%d's held-up heartbeat (touch %d, hold %d) lands: written %d, entry life %d\n", i, ftouch[i], fhold[i], (wr == 2 -> -1 : wr), eleft[i]);
		fl[i] = false; ftouch[i] = false; fstale[i] = false; fph[i] = 0; fnx[i] = 0; fhd[i] = 0; fhold[i] = 0;
		CLEAR }
#endif
	/* lock call: follower.valid (the lease runs and covers the ttl) +
	 * heldSet.reserve, in one step */
	:: d_step { !held[i] && !res[i] && cur != 0 && trust[i] > 0 && mt[i] && CALL_LEFT ->
		CALL; res[i] = true; rph[i] = cur; rleft[i] = LL }
	/* the acquire lands, in the phase reserved (Locker.acquire) */
	:: d_step { res[i] ->
		res[i] = false;
		land(i, rph[i], rleft[i]);
		if
		:: held[i] && !COMPAT(rph[i], cur) -> /* Locker.attempt: the follower moved on: released, not obtained */
			if :: lk && lwho == i -> lk = false :: else -> skip fi;
			if :: mk && mwho == i -> mk = false :: else -> skip fi;
			held[i] = false
		:: held[i] && COMPAT(rph[i], cur) -> hleft[i] = rleft[i]; hph[i] = rph[i];
#ifdef MUT_STALE_HELD
			lastheld[i] = rph[i];
#endif
			printf("EV c%d locks in phase %d (lease left %d)\n", i, rph[i], hleft[i]);
			if :: hleft[i] > 0 -> acquired(i) :: else -> skip fi
		:: else -> skip
		fi;
		rph[i] = 0; rleft[i] = 0 }
	/* refresh: while the phase lease runs, and the lock's phase is within
	 * one step of the one run (a lock two steps away ends) */
	:: d_step { !LIVE_RUN && VALID(i) && trust[i] > 0 && COMPAT(hph[i], cur) && hleft[i] < LL ->
		if :: lk && lwho == i && WRITES_LEGACY(hph[i]) -> lleft = LL :: else -> skip fi;
		if :: mk && mwho == i && WRITES_MODERN(hph[i]) -> mleft = LL :: else -> skip fi;
		hleft[i] = LL;
		printf("EV c%d refreshes its phase-%d lock\n", i, hph[i]);
		acquired(i) }
	/* release: by owner (token, owner window) */
	:: d_step { held[i] ->
		if :: lk && lwho == i -> lk = false :: else -> skip fi;
		if :: mk && mwho == i -> mk = false :: else -> skip fi;
		held[i] = false; hleft[i] = 0; hph[i] = 0 }
	od
}

#if OLDV
/* An old-version (protocol 1) locker during an upgrade, as the first release
 * ran: it moves at the reading (one phase towards the phase read) and
 * reports later, has no phase lease, reads a missing phase key as legacy,
 * reports no held locks, refreshes whatever it holds. Its registry entry
 * is of the old format: the controller takes no step and no rollback while
 * it is there (BlockOldProtocol), and the operator removes it (fleet
 * forget) once that locker has stopped. It took the place of Go locker 1. */
bool v1run = true, v1entry = true;
proctype v1locker(byte i) {
	byte cur = START, k, target;
end:	do
	:: d_step { v1run && !hbt[i] -> hbt[i] = true;
		target = (phaseKey -> phase : LEGACY);
		cur = (target > cur -> cur + 1 : (target < cur -> cur - 1 : cur));
		target = 0;
		printf("EV v1 reads and now runs %d\n", cur) }
	:: d_step { v1run && !held[i] -> land(i, cur, LL);
		if :: held[i] -> hleft[i] = LL; hph[i] = cur; printf("EV v1 locks in phase %d\n", cur); acquired(i) :: else -> skip fi }
	:: d_step { v1run && VALID(i) && hleft[i] < LL ->
		if :: lk && lwho == i && WRITES_LEGACY(hph[i]) -> lleft = LL :: else -> skip fi;
		if :: mk && mwho == i && WRITES_MODERN(hph[i]) -> mleft = LL :: else -> skip fi;
		hleft[i] = LL; acquired(i) }
	:: d_step { held[i] ->
		if :: lk && lwho == i -> lk = false :: else -> skip fi;
		if :: mk && mwho == i -> mk = false :: else -> skip fi;
		held[i] = false; hleft[i] = 0; hph[i] = 0 }
	:: d_step { v1run && !held[i] -> v1run = false; printf("EV v1 stops\n") }
	od
}
#ifdef MUT_V1_IGNORED
#define V1FREE true
#else
#define V1FREE (!v1entry)
#endif
#else
#define V1FREE true
#endif

/* The Java fleet: legacy only, not in the registry. The quiet-period
 * assumption: a live Java locker locks at least once per quiet period, and
 * a dual-phase locker sees it (a sighting) whenever it does; a Java locker
 * quiet for Q has retired for good. */
proctype java() {
	byte k;
end:	do
	:: d_step { jquiet < Q && !held[NG] && LFREE ->
		lk = true; lwho = NG; lleft = LL; held[NG] = true; hleft[NG] = LL; hph[NG] = LEGACY;
		jquiet = 0; sightAge = 0;
		printf("EV java locks the legacy key\n");
		acquired(NG) }
	:: d_step { held[NG] ->
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
	:: d_step { !ctlt && phaseKey && V1FREE && phase + STEP <= TOP && ALL_AT(phase) && QUIET(phase + STEP) ->
		ctlt = true; phase = phase + STEP; sinceAge = 0; mphase = phase;
		printf("EV controller steps to phase %d\n", phase) }
#if ROLLBACK
	:: d_step { !ctlt && phaseKey && V1FREE && phase > LEGACY && ALL_COMPAT(phase - 1) ->
		ctlt = true; phase--; sinceAge = 0; mphase = phase;
		printf("EV controller rolls back to phase %d\n", phase) }
#endif
#if OLDV
	/* fleet forget, once the old locker has stopped */
	:: d_step { v1entry && !v1run -> v1entry = false; printf("EV controller forgets the v1 entry\n") }
#endif
#if LOSS
	/* phase repair --to the phase the evidence shows, restarting the
	 * quiet period */
	:: d_step { !ctlt && !phaseKey -> ctlt = true; phaseKey = true; phase = mphase; sinceAge = 0;
		printf("EV controller repairs the phase key to %d\n", phase) }
#endif
	od
}

#if LOSS
active proctype loss() {
	d_step { phaseKey -> phaseKey = false; printf("EV the phase key is lost\n") }
}
#endif

#if TWIN
/* Once, while c0's entry lives: an entry under c0's id with a seq above any
 * of its own (another process run under its id; as in
 * TestFaultHeartbeatThatDidNotLandRenewsNoLease, its expiry is left as it
 * was, and here what it says too). Every heartbeat of c0 then writes
 * nothing until the entry is gone (pruned once dead). */
active proctype twin() {
	d_step { eleft[0] > 0 -> forn = true; printf("EV an entry under c0's id with a higher seq is written\n") }
}
#endif

init {
	atomic {
		mt[0] = (HOLDS == 0);
#if NG == 2
		mt[1] = (HOLDS <= 1);
#endif
		run locker(0);
#if NG == 2 && OLDV
		run v1locker(1);
#elif NG == 2
		run locker(1);
#endif
#if JAVA
		run java();
#endif
	}
}
