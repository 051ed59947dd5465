/*
 * modern.pml: the modern lock (SET NX PX, token-checked refresh) with
 * auto-refresh and fencing, two clients, a resource that checks fences, and
 * server restarts without persistence (the lock key and the fence counter
 * are lost).
 *
 * Time: one true clock (the server's TIME and the clients' monotonic clocks
 * run at the same rate), ticking between any two steps, up to TMAX; a
 * restart takes at least one tick. A request's reply may be delayed (time
 * passes between the script and the client reading its reply).
 *
 * Properties:
 *  (1) a client believes it holds (Done not yet closed) only while its lease
 *      runs by its own clock, counted from when it SENT the acquire or the
 *      refresh: no successor gets the key while a client believes, except
 *      through a restart that lost the key (data loss, counted apart: the
 *      ghost `lost`);
 *  (2) fences strictly increase across holders, restarts included: the
 *      resource accepts a write only with a fence >= the highest it has
 *      seen, and never accepts two holders with the same fence; a paused
 *      holder that writes after its lease (it does not look at Done) is
 *      rejected once a successor has written.
 *
 * Ties to code:
 *   acquire     internal/protocol/modernproto/acquire.lua and the fragment
 *               internal/protocol/luafrag/modern_fence.lua (fence = max(counter + 1,
 *               TIME)); no label comments there: the modern scripts' SHA1s
 *               are pinned. Go: Lock.Fence
 *   refresh     internal/protocol/modernproto/refresh.lua; Go: Lock.autoRefresh, Lock.refresh
 *   Done        Go: Lock.Done, Lock.ExpiresAt
 *               (the lease deadline is counted from the send)
 */

#ifndef NC
#define NC 2
#endif
#ifndef TMAX
#define TMAX 6
#endif
#ifndef LL
#define LL 2
#endif
#ifndef TRIES
#define TRIES 2 /* acquires per client */
#endif
#ifndef RESTARTS
#define RESTARTS 1
#endif

byte now;
bool key; byte who; byte kexp;      /* the lock key, its expiry (server clock) */
short counter;                       /* the fence counter key, 0 when absent */
byte clockback;                      /* CLOCK_BACK: the new server's clock lags this much */
byte restarts;
bool lost;                           /* ghost: a restart lost a live key */
bool believes[NC]; byte bend[NC];    /* Done not closed; when it closes (own clock) */
short fence[NC];
short maxf = -1; byte lastw;         /* the resource */

#define FREE (!key || !(now < kexp))
/* the server's TIME in fence units: FS fences fit in one time unit (TIME is
 * in microseconds: a restart takes far longer than the fences issued in it) */
#ifndef FS
#define FS 8
#endif
#define STIME ((now - clockback) * FS)

#ifdef MUT_COUNTER_ONLY
#define NEXTF (counter + 1)
#else
#define NEXTF (counter + 1 > STIME -> counter + 1 : STIME) /* internal/protocol/luafrag/modern_fence.lua */
#endif

active proctype clock() {
end:	do
	:: atomic { now < TMAX -> now++ }
	od
}

#if RESTARTS
active proctype restart() {
end:	do
	:: atomic { restarts < RESTARTS && now < TMAX ->
		restarts++;
		if :: key && now < kexp -> lost = true :: else -> skip fi;
		key = false; counter = 0; now++;
#ifdef CLOCK_BACK
		clockback = CLOCK_BACK;
#endif
		printf("EV now=%d the server restarts without persistence: the lock key and the fence counter are lost\n", now) }
	od
}
#endif

proctype client(byte i) {
	byte sent, k, tries = 0;
	bool ok;
	short f;
end:	do
	/* TryLock: send, the script runs, the reply arrives */
	:: atomic { !believes[i] && tries < TRIES -> tries++; sent = now }
		atomic { /* internal/protocol/modernproto/acquire.lua */
			if
			:: FREE -> key = true; who = i; kexp = now + LL; ok = true;
				f = NEXTF; counter = f; 
				printf("EV now=%d c%d acquires, fence %d (key until %d)\n", now, i, f, kexp)
			:: else -> ok = false
			fi }
		atomic { /* the reply, maybe late */
			if
			:: ok ->
#ifdef MUT_LEASE_FROM_REPLY
				bend[i] = now + LL;
#else
				bend[i] = sent + LL;
#endif
				if
				:: now < bend[i] ->
					believes[i] = true; fence[i] = f;
					k = 0;
					do
					:: k < NC -> assert(k == i || !believes[k] || !(now < bend[k]) || lost); k++
					:: else -> break
					od
				:: else -> skip
				fi
			:: else -> skip
			fi;
			ok = false; f = 0; sent = 0 }
	/* auto-refresh: send; the script extends our key if it is ours */
	:: atomic { believes[i] && now < bend[i] -> sent = now }
		atomic { /* internal/protocol/modernproto/refresh.lua */
			if :: key && who == i && now < kexp -> kexp = now + LL; ok = true :: else -> ok = false fi }
		atomic {
			if
			:: ok && believes[i] -> bend[i] = sent + LL
			:: else -> believes[i] = false /* ErrLost: Done closes */
			fi;
			ok = false; sent = 0 }
	/* Done closes when the lease ends by our own clock */
	:: atomic { believes[i] && !(now < bend[i]) -> believes[i] = false; printf("EV now=%d c%d: Done (lease over by its clock)\n", now, i) }
	/* Unlock */
	:: atomic { believes[i] -> believes[i] = false; if :: key && who == i -> key = false :: else -> skip fi }
	/* a write to the resource with our last fence, at any time: a paused
	 * process writes after its lease without looking at Done */
	:: atomic { fence[i] > 0 ->
		if
		:: fence[i] >= maxf ->
			printf("EV now=%d c%d writes with fence %d (resource saw %d from c%d): accepted\n", now, i, fence[i], maxf, lastw);
			assert(fence[i] > maxf || lastw == i);
			maxf = fence[i]; lastw = i
		:: else -> printf("EV now=%d c%d writes with fence %d: rejected (stale)\n", now, i, fence[i])
		fi }
	od
}

init {
	atomic {
		run client(0);
		run client(1);
	}
}
