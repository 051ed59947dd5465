/*
 * legacy.pml: the legacy (Java SETNX/GETSET timestamp) lock on one key.
 *
 * Processes: NC clients (kinds: Go atomic, Go classic, Java seed), the
 * Redis server (each command or script is one atomic step on the globals
 * below), and the true clock. Every client has its own clock offset from
 * true time, chosen at start in [0, SKEW]; the server's offset is chosen in
 * [SLO, SHI]. Time only moves forward one unit at a time, and the clock may
 * tick between any two steps of any client (a pause anywhere), except inside
 * the sections that a run declares pause-free (GOPAUSE, JPAUSE, CPAUSE = 0).
 *
 * A client is a *valid holder* while it believes it holds (acquired, not yet
 * released, last refresh succeeded) and its own clock is below its expiry W.
 * The property is checked where the set of valid holders can grow: at every
 * acquire and every successful refresh (validity only shrinks as time
 * passes). PROP selects what an overlap is allowed to be blamed on:
 *   PROP 0  nothing: at most one valid holder, ever
 *   PROP 1  a Java client's time-dependent write (GETSET takeover, a
 *           losing GETSET that shortens the stored expiry, DEL) that a pause
 *           between its clock read and the write, or a clock offset (the
 *           value's writer's own clock did not yet say it had expired)
 *           decided: ghost jflag. Go clients add no overlap of their own.
 *   PROP 2  the same, also for Go classic mode, which sends the Java
 *           scheme's commands (ghost cflag).
 * gskew records a Go takeover that only a clock offset allowed (a skew
 * margin D below the skew); it is never an excuse.
 *
 * Ties to code (file and `-- @label` comment, or Go function):
 *   Go atomic acquire   legacy/scripts/acquire.lua @setnx @takeover; Go: acquireAtomic
 *   Go atomic release   legacy/scripts/release.lua @owner @delete; Go: Profile.OwnerArgs
 *   the owner window    internal/protocol/luafrag/legacy_owner.lua @window @caller-now @server-guard
 *   Go atomic refresh   legacy/scripts/refresh.lua @owner @rewrite
 *   Go classic          Go: acquireClassic, releaseClassic, refreshClassic
 *                       (in legacy/classic.go)
 *   Java seed           Go replay: internal/testing/javareplay Lock, Unlock
 */

#ifndef NC
#define NC 3
#endif
#define GA 0 /* Go atomic */
#define GC 1 /* Go classic */
#define JV 2 /* Java seed */
#ifndef KIND0
#define KIND0 GA
#endif
#ifndef KIND1
#define KIND1 GA
#endif
#ifndef KIND2
#define KIND2 GA
#endif
#ifndef LEASE0
#define LEASE0 6
#endif
#ifndef LEASE1
#define LEASE1 1
#endif
#ifndef LEASE2
#define LEASE2 1
#endif
#ifndef TMAX
#define TMAX 8
#endif
#ifndef SKEW
#define SKEW 0
#endif
#ifndef SLO
#define SLO 0
#endif
#ifndef SHI
#define SHI 0
#endif
#ifndef M
#define M 0 /* WithServerClockMargin, in time units */
#endif
#ifndef D
#define D 0 /* WithSkewMargin of the Go lockers, in time units */
#endif
#ifndef GOPAUSE
#define GOPAUSE 1
#endif
#ifndef JPAUSE
#define JPAUSE 1
#endif
#ifndef CPAUSE
#define CPAUSE 1
#endif
#ifndef PROP
#define PROP 0
#endif
#ifndef TRIES
#define TRIES 2 /* lock attempts per client */
#endif
#ifndef REFRESH
#define REFRESH 1
#endif

byte now;                 /* true time */
bool present;             /* the key exists */
short val;                /* its value, decoded (foreign values are not modelled) */
byte writer;              /* ghost: who wrote val */
short off[NC];            /* client clock offsets */
short soff;               /* server clock offset */
bool held[NC];            /* believes it holds */
short hw[NC];             /* its expiry W, by its own clock */
byte frozen;              /* clients inside a declared pause-free section */
bool jflag, cflag, gskew; /* ghosts: see PROP */
bool overlap;

#define CLK(i)   (now + off[i])
#define VALID(i) (held[i] && CLK(i) < hw[i])
#define ABS(x)   ((x) < 0 -> -(x) : (x))
#define WINDOW(t, w, l) (2 * ABS((t) - (w)) <= (l))

#if PROP == 0
#define ALLOWED false
#elif PROP == 1
#define ALLOWED jflag
#else
#define ALLOWED (jflag || cflag)
#endif

/* becomes: client i now believes it holds until w; no other valid holder
 * may exist (the property). */
inline becomes(i, w) {
	held[i] = true; hw[i] = w;
	j = 0;
	do
	:: j < NC -> if :: j != i && VALID(j) && CLK(i) < w -> overlap = true;
			printf("EV now=%d OVERLAP c%d valid until %d and c%d until %d (own clocks)\n", now, j, hw[j], i, w) :: else -> skip fi; j++
	:: else -> break
	od;
	j = 0;
	assert(!overlap || ALLOWED)
}

/* legacy_owner's codes (internal/protocol/luafrag/legacy_owner.lua) */
#define OURS    1
#define TAKEN   0
#define GONE    2
#define EXPIRED 3
#define LATE    4

#if defined(MUT_SERVER_PERMITS)
/* the bug of old: the server's TIME alone decides that W has not passed */
#define CALLER_EXPIRED(t, w) false
#define SERVER_LATE(w) (!(now + soff < (w)))
#elif defined(MUT_NO_GUARD)
/* the caller's clock only, no second guard */
#define CALLER_EXPIRED(t, w) (!((t) < (w)))
#define SERVER_LATE(w) false
#else
#define CALLER_EXPIRED(t, w) (!((t) < (w)))      /* legacy_owner.lua @caller-now */
#define SERVER_LATE(w) (now + soff > (w) + M)     /* legacy_owner.lua @server-guard */
#endif

/* OWNER: legacy_owner(stored, o), the owner-window test of release.lua and
 * refresh.lua, with t the caller's clock read before sending (OwnerArgs). */
inline OWNER(code, t, w, lease) {
	if
	:: !present -> code = GONE
	:: present && !WINDOW(val, w, lease) -> code = TAKEN  /* legacy_owner.lua @window */
	:: present && WINDOW(val, w, lease) ->
		if
		:: CALLER_EXPIRED(t, w) -> code = EXPIRED
		:: else ->
			if
			:: SERVER_LATE(w) -> code = LATE
			:: else -> code = OURS
			fi
		fi
	fi
}

/* skewcheck: a takeover of val judged expired by a cutoff; ghost gskew (Go)
 * or jflag (Java, classic) when the writer's own clock did not yet say so. */
#if SKEW > 0
#define WRITER(i) writer = i
#else
#define WRITER(i) skip
#endif
#define PREMATURE (!(val < now + off[writer]))

active proctype clock() {
end:	do
	:: atomic { now < TMAX && frozen == 0 -> now++ }
	od
}

/* a section with no pause: the clock does not tick inside it */
#define PAUSES(k) ((k) == GA -> GOPAUSE : ((k) == GC -> CPAUSE : JPAUSE))
#define pausefree(k) frozen = frozen + (PAUSES(k) -> 0 : 1)
#define pauseend(k)  frozen = frozen - (PAUSES(k) -> 0 : 1)
/* the takeover cutoff: the caller's clock minus its skew margin (Go only) */
#define CUTOFF(k, t) ((k) == JV -> (t) : (t) - D)
/* a time-dependent write of the Java scheme's commands (Java or classic) */
#define TAINT(k) if :: (k) == JV -> jflag = true :: else -> cflag = true fi

/* the expiry a pending acquire writes (PlusOne: now + lease + 1) */
#define NW (t + lease + 1)

/* client program counters: each step below is one transition */
#define IDLE    0
#define SCRIPT  1 /* Go atomic: acquire.lua pending */
#define SETNX   2 /* classic, Java: SETNX pending */
#define GET     3
#define GETSET  4
#define HOLD    5
#define REL     6 /* release pending */
#define REF     7 /* refresh pending */
#define REFSET  8 /* classic refresh: GETSET pending */
#define RESEND  9 /* mutant: a resend may follow */

proctype client(byte i; byte kind; short lease) {
	byte pc = IDLE, tries = 0, j, code;
	short t;
	bool got;

end:	do
	/* acquire: read the clock (acquireAtomic, acquireClassic, seed Lock) */
	:: atomic { pc == IDLE && tries < TRIES ->
		tries++; pausefree(kind); t = CLK(i);
		pc = (kind == GA -> SCRIPT : SETNX) }
	/* legacy/scripts/acquire.lua @setnx @takeover: SETNX, else take over iff the
	 * stored expiry is below the cutoff (the caller's clock - d) */
	:: atomic { pc == SCRIPT ->
		if
		:: !present -> got = true
		:: present && val < CUTOFF(kind, t) ->
			if :: PREMATURE -> gskew = true :: else -> skip fi; got = true
		:: else -> skip
		fi;
		pauseend(kind);
		if
		:: got -> printf("EV now=%d c%d acquire.lua (read clock %d): stored %d -> acquired W=%d\n", now, i, t, (present -> val : -1), NW);
			present = true; val = NW; WRITER(i); becomes(i, NW); pc = HOLD
		:: else -> pc = IDLE; t = 0
		fi;
		got = false }
	/* acquireClassic, seed Lock: SETNX */
	:: atomic { pc == SETNX ->
		if
		:: !present -> printf("EV now=%d c%d(kind %d) SETNX W=%d -> acquired\n", now, i, kind, NW);
			present = true; val = NW; WRITER(i); pauseend(kind); becomes(i, NW); pc = HOLD
		:: else -> pc = GET
		fi }
	/* acquireClassic, seed Lock: GET; go on iff stored < cutoff */
	:: atomic { pc == GET ->
		if
		:: present && val < CUTOFF(kind, t) -> pc = GETSET
		:: else -> pauseend(kind); pc = IDLE; t = 0
		fi }
	/* acquireClassic, seed Lock: GETSET; acquired iff old < cutoff (the
	 * seed: and old != nil; classic: a nil old also counts) */
	:: atomic { pc == GETSET ->
		if :: CLK(i) != t -> TAINT(kind) :: else -> skip fi;
		if
		:: !present -> got = (kind == GC)
		:: present && val < CUTOFF(kind, t) ->
			if :: PREMATURE -> TAINT(kind) :: else -> skip fi; got = true
		:: else -> /* a losing contender overwrites a live value */
			if :: NW < val -> TAINT(kind) :: else -> skip fi
		fi;
		printf("EV now=%d c%d(kind %d) GETSET %d (read clock %d) -> old %d, acquired=%d\n", now, i, kind, NW, t, (present -> val : -1), got);
		present = true; val = NW; WRITER(i); pauseend(kind);
		if
		:: got -> becomes(i, NW); pc = HOLD
		:: else -> pc = IDLE; t = 0
		fi;
		got = false }
	/* Unlock (releaseAtomic: OwnerArgs reads the clock; releaseClassic and
	 * seed Unlock: DEL only while the clock says t < W) */
	:: atomic { pc == HOLD ->
		held[i] = false; pausefree(kind); t = CLK(i);
		printf("EV now=%d c%d(kind %d) unlock: reads its clock %d (W=%d)\n", now, i, kind, t, hw[i]);
		if
		:: kind != GA && !(t < hw[i]) -> pauseend(kind); pc = IDLE; t = 0; hw[i] = 0
		:: else -> pc = REL
		fi }
	:: atomic { pc == REL ->
		if
		:: kind == GA -> /* legacy/scripts/release.lua @owner @delete */
			OWNER(code, t, hw[i], lease);
			printf("EV now=%d c%d release.lua (caller now %d, W=%d, server %d): stored %d -> code %d\n", now, i, t, hw[i], now + soff, (present -> val : -1), code);
			if :: code == OURS -> present = false :: else -> skip fi
		:: else -> /* DEL */
			printf("EV now=%d c%d DEL (decided at own clock %d < W=%d): stored %d deleted\n", now, i, t, hw[i], (present -> val : -1));
			if :: CLK(i) != t -> TAINT(kind) :: else -> skip fi;
			present = false
		fi;
		pauseend(kind);
#ifdef MUT_RESEND
		if
		:: kind == GA -> pc = RESEND
		:: else -> pc = IDLE; t = 0; hw[i] = 0
		fi;
#else
		pc = IDLE; t = 0; hw[i] = 0;
#endif
		code = 0 }
#ifdef MUT_RESEND
	/* the reply was lost and a lower layer sends the same command again */
	:: atomic { pc == RESEND ->
		OWNER(code, t, hw[i], lease);
		printf("EV now=%d c%d release.lua RESENT (caller now %d, W=%d): stored %d -> code %d\n", now, i, t, hw[i], (present -> val : -1), code);
		if :: code == OURS -> present = false :: else -> skip fi;
		pc = IDLE; t = 0; hw[i] = 0; code = 0 }
	:: atomic { pc == RESEND -> pc = IDLE; t = 0; hw[i] = 0 }
#endif
#if REFRESH
	/* Refresh (not in the seed): read the clock, the new expiry */
	:: atomic { pc == HOLD && kind != JV ->
		pausefree(kind); t = CLK(i); 
		if
		:: kind == GC && !(t < hw[i]) -> pauseend(kind); held[i] = false; pc = IDLE; t = 0; hw[i] = 0
		:: else -> pc = REF
		fi }
	:: atomic { pc == REF ->
		if
		:: kind == GA -> /* legacy/scripts/refresh.lua @owner @rewrite */
			OWNER(code, t, hw[i], lease);
			printf("EV now=%d c%d refresh.lua (caller now %d, W=%d, server %d): stored %d -> code %d\n", now, i, t, hw[i], now + soff, (present -> val : -1), code);
			pauseend(kind);
			if
			:: code == OURS -> val = NW; WRITER(i); becomes(i, NW); pc = HOLD
			:: else -> held[i] = false; pc = IDLE; hw[i] = 0
			fi;
			code = 0; t = 0
		:: else -> /* refreshClassic: GET, in our window? */
			if
			:: present && WINDOW(val, hw[i], lease) -> pc = REFSET
			:: else -> pauseend(kind); held[i] = false; pc = IDLE; t = 0; hw[i] = 0
			fi
		fi }
	:: atomic { pc == REFSET -> /* refreshClassic: GETSET, ours iff old in window */
		if :: CLK(i) != t -> TAINT(kind) :: else -> skip fi;
		got = present && WINDOW(val, hw[i], lease);
		printf("EV now=%d c%d classic refresh GETSET %d (read clock %d, W=%d): old %d, ours=%d\n", now, i, NW, t, hw[i], (present -> val : -1), got);
		printf("EV now=%d c%d(kind %d) GETSET %d (read clock %d) -> old %d, acquired=%d\n", now, i, kind, NW, t, (present -> val : -1), got);
		present = true; val = NW; WRITER(i); pauseend(kind);
		if
		:: got -> becomes(i, NW); pc = HOLD
		:: else -> held[i] = false; pc = IDLE; hw[i] = 0
		fi;
		got = false; t = 0 }
#endif
	/* the holder keeps working until its lease ends by its own clock and
	 * never releases: its value expires */
	:: atomic { pc == HOLD && !(CLK(i) < hw[i]) -> held[i] = false; pc = IDLE; hw[i] = 0 }
	od
}

init {
	byte k = 0;
	atomic {
		/* clock offsets */
		do
		:: k < NC ->
			off[k] = 0;
			do
			:: off[k] < SKEW -> off[k]++
			:: break
			od;
			k++
		:: else -> break
		od;
		soff = SLO;
		do
		:: soff < SHI -> soff++
		:: break
		od;
		printf("EV offsets: clients %d %d %d, server %d; kinds %d %d %d (0 Go atomic, 1 Go classic, 2 Java seed); leases %d %d %d\n", off[0], off[1], off[NC-1], soff, KIND0, KIND1, KIND2, LEASE0, LEASE1, LEASE2);
		run client(0, KIND0, LEASE0);
		run client(1, KIND1, LEASE1);
#if NC > 2
		run client(2, KIND2, LEASE2);
#endif
	}
}
