/*
 * lease.pml: the local lease of one held lock (internal/runtime/lease,
 * every lock package) against a hung Refresh by hand, a shortening Refresh
 * whose reply is lost (the call hangs, or returns with an unknown outcome
 * and the command runs on the server later still, after a grant confirmed
 * meanwhile), and the auto-refresh beside them; a second client takes the
 * lock as soon as the server lets it.
 *
 * Time: one true clock (the server's and the holder's run at the same
 * rate), ticking between any two steps up to TMAX. The give-up timer is
 * due at lend - M (M: the margin, one unit here for ttl/12): it is a timer
 * nothing in flight can delay, so the clock does not pass its due point
 * while it has not fired. A command reaches the server at any time after
 * its send; its reply may come, or be lost with the connection left
 * hanging (the call never returns), or be lost with the call returning an
 * unknown outcome (a timeout: the turn is free again) while the command
 * may still reach the server at any later time.
 *
 * Property: when the other client acquires, the holder's Done is closed
 * (`held` false): the local lease, counted from the send of the last
 * confirmed grant and shortened at the send of a shorter refresh, never
 * outlasts the server's.
 *
 * Ties to code:
 *   give-up timer  Go: Lease.expire, Lease.Init (armed at Init, re-armed
 *                  when the lease moves)
 *   refresh sent   Go: Lease.Sending (a shorter ttl shortens the lease at
 *                  the send: min(end, send + ttl))
 *   refresh reply  Go: Lease.Extend (a lease past its give-up point is
 *                  over: no reply revives it; no grant counts for more than
 *                  the ceiling an unsure write left, past its own send)
 *   unknown outcome Go: Lease.Unsure (the ceiling: the unsure write's ttl)
 *   turns          Go: Rounds.Enter (the auto-refresh never waits behind
 *                  a Refresh by hand: it skips its turn)
 *   refresh        internal/protocol/modernproto/refresh.lua
 */

#ifndef TMAX
#define TMAX 9
#endif
#ifndef LL
#define LL 6 /* the lease of the acquire and of the auto-refresh */
#endif
#ifndef MTTL
#define MTTL 2 /* the ttl of the Refresh by hand (shorter than LL: shortening) */
#endif
#define M 1

byte now;
/* the lock key: A acquired it at 0 for LL; held by A (bkey false) or B */
bool key = true; bool bkey; byte kexp = LL;
bool held = true; byte lend = LL;   /* A's Done open; its local lease end */
/* the Refresh by hand: sent, reached the server, answered (or given up) */
bool msent, mran, mdone; byte mat;
bool mhung;                         /* its reply lost, the call hangs (never returns) */
bool unsure;                        /* Lease.Unsure(MTTL): its outcome is unknown */
bool ainflight;                     /* an auto-refresh round is in flight (its turn) */
bool autowait;                      /* MUT_GIVEUP_WAITS: the auto-refresh waits for the turn */

#define DUE (held && now + M >= lend)
/* Lease.Extend: a grant counts for at most the unsure write's ttl past its send */
#ifdef MUT_IGNORES_UNSURE
#define CAP(t) (t)
#else
#define CAP(t) (unsure && MTTL < (t) -> MTTL : (t))
#endif
#ifdef MUT_GIVEUP_WAITS
#define BLOCKED autowait            /* the give-up check runs between callbacks only */
#else
#define BLOCKED false
#endif

active proctype clock() {
end:	do
	:: atomic { now < TMAX && !(DUE && !BLOCKED) -> now++ }
	od
}

/* the give-up timer (Lease.expire) */
active proctype timer() {
end:	do
	:: atomic { DUE && !BLOCKED -> held = false; printf("EV now=%d A: Done (give-up point, lease end %d)\n", now, lend) }
	od
}

/* the Refresh by hand, once: sent; run by the server at any time after
 * (after the call gave up, too); its reply comes, or is lost: the call
 * hangs, or returns an unknown outcome (Lease.Unsure) */
active proctype manual() {
	atomic { held && !ainflight -> msent = true; mat = now; /* Rounds.Enter(false): waits for the auto round */
#ifndef MUT_UNKNOWN_KEEPS_END
		if :: mat + MTTL < lend -> lend = mat + MTTL :: else -> skip fi; /* Lease.Sending */
#endif
		printf("EV now=%d A sends Refresh(%d); lease end %d\n", now, MTTL, lend) }
end:	do
	:: atomic { !mran -> /* refresh.lua */
		if :: key && !bkey && now < kexp -> kexp = now + MTTL :: else -> skip fi;
		mran = true; printf("EV now=%d the server runs Refresh(%d): key until %d\n", now, MTTL, kexp) }
	:: atomic { mran && !mdone && !mhung -> /* the reply comes: Lease.Extend, unless the lease is over */
		if :: held && now + M < lend -> lend = mat + MTTL :: else -> skip fi;
		mdone = true; autowait = false }
	:: atomic { !mdone && !mhung -> /* the reply is lost, the call returns: ErrUnknownOutcome */
		unsure = true; mdone = true; autowait = false;
		printf("EV now=%d the reply is lost: Refresh returns an unknown outcome (Lease.Unsure)\n", now) }
	:: atomic { !mdone && !mhung -> mhung = true; printf("EV now=%d the reply is lost: the call hangs\n", now) }
	od
}

/* the auto-refresh: one round at a time, in turn with the Refresh by hand */
active proctype auto() {
	byte sent; bool ok;
end:	do
	:: atomic { held && !(msent && !mdone) -> sent = now; ainflight = true } /* Rounds.Enter(true): the turn is free */
		atomic { if :: key && !bkey && now < kexp -> kexp = now + LL; ok = true :: else -> ok = false fi }
		atomic {
			if
			:: ok && held && now + M < lend -> lend = sent + CAP(LL); /* Lease.Extend */
				printf("EV now=%d the auto-refresh sent at %d is confirmed: lease end %d\n", now, sent, lend)
			:: else -> skip
			fi;
			ok = false; ainflight = false }
#ifdef MUT_GIVEUP_WAITS
	:: atomic { held && msent && !mdone && !autowait -> autowait = true;
		printf("EV now=%d the auto-refresh waits for the turn\n", now) }
#endif
	od
}

/* the other client: SET NX PX once the key is free */
active proctype other() {
	atomic { !(key && now < kexp) ->
		key = true; bkey = true; kexp = now + LL;
		printf("EV now=%d B acquires; A's Done open: %d\n", now, held);
		assert(!held) }
}
