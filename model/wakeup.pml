/*
 * wakeup.pml: release notices of the modern lock, published only when the
 * server counts a subscriber, and waiters that sleep until one comes. One
 * lock key; NH processes of two waiters each (W2 = 1: one in the last);
 * a holder that holds the key at the start, releases it, and may take it
 * again (HT holds in all). Every waiter that gets the lock holds it and
 * releases it too (TRIES times), so releases race the waiters' joins and
 * leaves. Waiters never poll: a notice lost is a waiter asleep for ever.
 *
 * Property: no waiter is stuck. When nothing in the system can move
 * (spin's `timeout`: every process blocked or ended), every waiter has
 * taken and released the lock TRIES times. A waiter asleep with no notice
 * on its way to it, while the key is free or its holder has ended, is such
 * a state: the monitor asserts there.
 *
 * Steps and assumptions. No time: a step is one action of the server (a
 * command, or a whole script) or of a client, in any interleaving. SET NX
 * is one step; the release script is one step (GET, DEL, PUBSUB NUMSUB,
 * PUBLISH: scripts run one at a time). Each connection is FIFO both ways:
 * the server runs a connection's commands in order, and its replies and
 * messages reach the client in the order it wrote them; the SUBSCRIBE
 * confirmation is written after the server registered the subscriber.
 * Connections are independent of each other. A closed connection counts as
 * a subscriber until the server has read its close (notices to it are
 * lost); a hub has two connection slots and opens a third connection only
 * once the server has read the first one's close. Every message reaches the
 * hub (each connection's queue has room for every notice of the run). A
 * command is put on the connection when the client decides to send it: only
 * the server reads it, whenever it likes, so this adds runs and loses none.
 * Not modelled: lost connections, failed or timed-out subscriptions, a
 * reader so far behind that the driver drops messages (in all three the
 * code wakes every waiter, or the waiters poll), lock expiry (a release is
 * the only way the key becomes free), the waiters' backoff timer (the model
 * gives them none).
 *
 * A Go process's hub shares one subscription among its waiters: the first
 * waiter of the channel subscribes and waits for the confirmation (opening
 * the connection when none is open; the waiters that joined meanwhile are
 * poked), later waiters of a confirmed channel do not subscribe; a release
 * notice wakes one waiter with no wake pending; a waiter that got the lock
 * leaves, passing on a wake it did not act on; the last waiter of the
 * channel deletes it (a later waiter starts unconfirmed) and sends
 * UNSUBSCRIBE without waiting, or closes the connection when the channel
 * was the hub's only one. Whether the hub has another channel with waiters
 * (keeping the connection open) is chosen at the start (OTHER = 2: either,
 * per hub). With LINGER = 1 (the default, as the code's default linger),
 * the last waiter of a confirmed channel leaves it subscribed instead (it
 * lingers), and the linger ends at any later moment when the channel still
 * has no waiter (a sweeper: the deletion, then UNSUBSCRIBE or the close, as
 * above); a waiter joining a lingering channel finds it confirmed. Before
 * each attempt that may be followed by joining the hub, a waiter takes a
 * mark (Hub.Since): whether the channel is confirmed, its entry and its
 * count of notices heard. Joining after the miss (Hub.WaitFrom), a mark
 * taken on the same entry, confirmed then and now, covers the gap: the
 * waiter is woken if a notice was heard since, and does not attempt again
 * at once; otherwise it subscribes and attempts again, as without a mark. With JAVA = 1, the last process is a Java one: every waiter
 * adds its listener, sends its own SUBSCRIBE and waits for its reply (the
 * replies come in command order); a notice wakes every listener; the last
 * listener to go sends UNSUBSCRIBE; the connection stays open.
 *
 * Ties to code:
 *   attempt        internal/protocol/modernproto/acquire.lua (SET NX when free); Go: Locker.try
 *   waiting loop   Go: Locker.lock, Loop
 *                  (attempt; on a miss join the hub, then at once attempt
 *                  again; sleep until a wake; leave once the lock is taken)
 *   Java loop      Java: Wait.loop, Redis.subscribe, Redis.unsubscribe
 *   hub            Go: Hub.Since, Hub.WaitFrom, Hub.subscribe, Hub.open, Hub.leave, Hub.drop,
 *                  Hub.sweep, Hub.read, channel.wakeOne, poke
 *   mark           Go: waiting.attempt (the mark before the attempt)
 *   confirmation   Go: subscription.Subscribe, subscription.loop
 *                  (Subscribe returns once the server's confirmation came)
 *   release        internal/protocol/modernproto/release.lua with
 *                  internal/protocol/luafrag/modern_release.lua (DEL, then
 *                  PUBLISH unless PUBSUB NUMSUB counts no subscriber); no
 *                  label comments there: the modern scripts' SHA1s are pinned
 */

#ifndef NH
#define NH 1 /* processes, two waiters each */
#endif
#ifndef TRIES
#define TRIES 1 /* locks per waiter */
#endif
#ifndef HT
#define HT 2 /* holds of the holder (the first at the start) */
#endif
#ifndef JAVA
#define JAVA 0 /* 1: the last process is a Java one */
#endif
#ifndef W2
#define W2 2 /* waiters in the last process: 2, or 1 */
#endif
#ifndef OTHER
#define OTHER 2 /* 0, 1: whether the Go hubs have another channel; 2: either */
#endif
#ifndef LINGER
#define LINGER 1 /* 1: a channel lingers after its last waiter (Go) */
#endif

#define NW (2 * NH)          /* waiters */
#define HOLDER NW            /* the holder's id */
#define NC (2 * NH)          /* connections: two slots per hub */
#define NONE 255

mtype = { SUB, UNSUB, CLOSE, CONF, UNCONF, MSG };

bool key = true;             /* the lock key (SET NX), held by the holder at the start */
byte owner = HOLDER;

/* the server, per connection: subscribed to the channel or not; the
 * commands in flight to it, the replies and messages in flight from it */
bool reg[NC];
bool dead[NC];               /* closed by the client, the close not yet read by the server */
chan cmdq[NC] = [4] of { mtype };
chan pushq[NC] = [HT + NW * TRIES + 2] of { mtype }; /* room for every notice */

/* a process's hub (in Java: Redis and its listeners) */
bool other[NH];              /* the hub has another channel with waiters */
byte sub[NH];                /* Hub.sub: the open subscription's slot, NONE if none */
byte last[NH];               /* the slot opened last: the driver's receive loop reads it */
byte subMu[NH];              /* Hub.subMu: 0 free, else holder + 1 */
bool exists[NH];             /* Hub.chans[ch] != nil */
bool conf[NH];               /* its channel.confirmed */
bool pend[NH];               /* a Subscribe waiting for its confirmation */
bool lingers[NH];            /* the channel has no waiter and lingers (Hub.idle) */
/* a Go waiter's mark (Hub.Since): mk, taken on a confirmed channel whose
 * entry still stands (deleting the entry clears it); hrd, a notice heard on
 * the entry since (channel.seen moved) */
bool mk[NW], hrd[NW];
byte jsent[NH], jack[NH];    /* Java process: SUBSCRIBEs sent, and answered */
byte msgs[NH];               /* messages in the driver's buffer, not yet read */
#ifdef MUT_UNSUB_CONFIRMED
bool unsubbing[NH];          /* an UNSUBSCRIBE's reply awaited */
#endif

/* the waiters */
bool inch[NW];               /* registered: in its hub's channel, or a Java listener */
bool wake[NW];               /* the wake channel (buffer 1); in Java a permit */
byte done[NW];               /* locks taken and released */
bool fin[NW];

#define HUB(w) ((w) / 2)
#define MATE(w) ((w) ^ 1)
#define ISJAVA(h) (JAVA && (h) == NH - 1)
#define NEXTSLOT(h) (4 * (h) + 1 - last[h])

/* acquire.lua when the key is free: SET NX */
inline attempt(me, got) {
	if
	:: !key -> key = true; owner = me; got = true;
		printf("EV %d takes the lock\n", me)
	:: else -> got = false;
		printf("EV %d misses\n", me)
	fi
}

inline countSubs(n) {
	n = 0; k = 0;
	do
	:: k < NC -> if :: reg[k] -> n++ :: else -> skip fi; k++
	:: else -> break
	od;
	k = 0
}

inline publishAll() {
	k = 0;
	do
	:: k < NC ->
		if
		:: reg[k] && !dead[k] -> assert(nfull(pushq[k])); pushq[k]!MSG
		:: else -> skip
		fi;
		k++
	:: else -> break
	od;
	k = 0
}

/* release.lua (modern_release, modern_notify): DEL, then PUBLISH unless
 * PUBSUB NUMSUB counts no subscriber */
inline release(me) {
#ifdef MUT_COUNT_OUTSIDE
	/* the count a separate round trip before the script */
	d_step { countSubs(n); printf("EV %d counts %d subscribers (PUBSUB NUMSUB, its own round trip)\n", me, n) }
	d_step {
		assert(key && owner == me);
		key = false;
#else
	d_step {
		assert(key && owner == me);
		key = false;
		countSubs(n);
#endif
		if
		:: n > 0 -> publishAll();
			printf("EV %d releases: %d subscribed, notice published\n", me, n)
		:: else -> printf("EV %d releases: no subscriber counted, nothing published\n", me)
		fi;
		n = 0 }
}

/* channel.wakeOne: one waiter of the channel (not but) with no wake pending */
inline wakeOne(h, but) {
	if
	:: inch[2 * h] && 2 * h != but && !wake[2 * h] -> wake[2 * h] = true
	:: inch[2 * h + 1] && 2 * h + 1 != but && !wake[2 * h + 1] -> wake[2 * h + 1] = true
	:: else -> skip
	fi
}

/* the server's side of connection c: its commands in order */
proctype server(byte c) {
end:	do
	:: d_step { cmdq[c]?SUB -> reg[c] = true;
		if :: !dead[c] -> assert(nfull(pushq[c])); pushq[c]!CONF :: else -> skip fi }
	:: d_step { cmdq[c]?UNSUB -> reg[c] = false;
#ifdef MUT_UNSUB_CONFIRMED
		if :: !dead[c] -> assert(nfull(pushq[c])); pushq[c]!UNCONF :: else -> skip fi
#else
		skip /* its reply is ignored by every client */
#endif
		}
	:: d_step { cmdq[c]?CLOSE -> reg[c] = false; dead[c] = false }
	od
}

/* a hub's receive side: the driver's receive loop (subscription.loop: a
 * confirmation completes the Subscribe waiting, a message goes to the
 * buffer) and the hub's reader (Hub.read: a message wakes one waiter; in
 * Java every listener) */
proctype reader(byte h) {
	byte nobody = NONE;
	mtype m;
end:	do
	:: d_step { nempty(pushq[last[h]]) -> pushq[last[h]]?m;
		if
		:: m == CONF ->
			if
			:: ISJAVA(h) -> jack[h]++ /* the oldest SUBSCRIBE's reply */
			:: else -> pend[h] = false
			fi
		:: m == MSG -> msgs[h]++
		:: m == UNCONF ->
#ifdef MUT_UNSUB_CONFIRMED
			/* the channel unconfirmed only now */
			if
			:: unsubbing[h] -> unsubbing[h] = false; conf[h] = false;
				if :: !inch[2 * h] && !inch[2 * h + 1] -> exists[h] = false; mk[2 * h] = false; mk[2 * h + 1] = false :: else -> skip fi
			:: else -> skip
			fi
#else
			skip
#endif
		fi;
		m = 0 }
	:: d_step { msgs[h] > 0 -> msgs[h]--;
		if
		:: ISJAVA(h) ->
			if :: inch[2 * h] -> wake[2 * h] = true :: else -> skip fi;
			if :: inch[2 * h + 1] -> wake[2 * h + 1] = true :: else -> skip fi
		:: else -> if :: exists[h] -> hrd[2 * h] = true; hrd[2 * h + 1] = true; wakeOne(h, nobody) :: else -> skip fi
		fi }
	od
}

/* Hub.subscribe, with Hub.open when no subscription is open; subMu
 * taken, the check and the SUBSCRIBE sent in one step */
inline hubSubscribe(w, h) {
	d_step { subMu[h] == 0 && (sub[h] != NONE || !dead[NEXTSLOT(h)]) ->
		if
		:: conf[h] && sub[h] != NONE -> s = NONE /* another waiter subscribed it meanwhile */
		:: else ->
			subMu[h] = w + 1;
			if
			:: sub[h] == NONE -> /* Hub.open: a new connection (its slot's last close read) */
				s = NEXTSLOT(h); last[h] = s;
				printf("EV %d opens a subscription (connection %d): SUBSCRIBE\n", w, s)
			:: else -> s = sub[h];
				printf("EV %d sends SUBSCRIBE (connection %d)\n", w, s)
			fi;
			pend[h] = true; assert(nfull(cmdq[s])); cmdq[s]!SUB
		fi }
	if
	:: s == NONE -> skip
	:: else ->
#ifndef MUT_NO_CONFIRM
		!pend[h]; /* the server's confirmation */
#endif
		d_step {
			if
			:: sub[h] == NONE -> /* Hub.open */
				sub[h] = s; conf[h] = true;
				/* a waiter registered while none was open: try again */
				if :: inch[MATE(w)] -> wake[MATE(w)] = true :: else -> skip fi
			:: else -> if :: exists[h] && sub[h] == s -> conf[h] = true :: else -> skip fi
			fi;
			printf("EV %d: subscription confirmed\n", w);
			subMu[h] = 0 }
	fi;
	s = 0
}

/* Hub.drop, by id (a waiter, or a hub's sweeper) for channel of hub h,
 * whose entry is deleted: UNSUBSCRIBE, or Close when it was the hub's
 * last channel; n = 1 on entry */
inline hubDrop(id, h) {
	d_step { subMu[h] == 0 ->
		s = sub[h]; n = 0;
		if
#ifdef MUT_UNSUB_CONFIRMED
		:: s == NONE || inch[2 * h] || inch[2 * h + 1] -> skip /* nothing open, or a new waiter came */
#else
		:: s == NONE || exists[h] -> skip /* nothing open, or a new waiter came */
#endif
		:: else ->
			if
			:: other[h] -> assert(nfull(cmdq[s])); cmdq[s]!UNSUB;
#ifdef MUT_UNSUB_CONFIRMED
				unsubbing[h] = true;
#endif
				printf("EV %d: the last of the channel: UNSUBSCRIBE (connection %d), not waiting\n", id, s)
			:: else -> /* the hub's last channel: Close */
				sub[h] = NONE; dead[s] = true; n = 1; subMu[h] = id + 1;
				assert(nfull(cmdq[s])); cmdq[s]!CLOSE;
				do :: pushq[s]?m :: empty(pushq[s]) -> break od; m = 0;
				printf("EV %d: the last of the channel: closes the subscription (connection %d)\n", id, s)
			fi
		fi;
		s = 0 }
	if
	:: n == 0 -> skip
	:: else -> /* Close waits for the reader, which dispatches what it had */
		d_step { msgs[h] == 0 -> subMu[h] = 0; n = 0 }
	fi
}

/* Hub.leave for waiter w */
inline hubLeave(w, h) {
	d_step {
		inch[w] = false;
		if
		:: inch[MATE(w)] -> /* not the last: pass on a wake not acted on */
			if :: wake[w] -> wakeOne(h, w) :: else -> skip fi;
			n = 0
		:: LINGER && conf[h] && sub[h] != NONE -> /* the channel lingers */
			lingers[h] = true; n = 0;
			printf("EV %d leaves last: the channel lingers\n", w)
		:: else ->
#ifndef MUT_UNSUB_CONFIRMED
			exists[h] = false; conf[h] = false; /* the channel deleted */
			mk[2 * h] = false; mk[2 * h + 1] = false;
#endif
			n = 1
		fi }
	if
	:: n == 0 -> skip
	:: else -> hubDrop(w, h)
	fi
}

/* Hub.sweep: a lingering channel's linger ends, at any moment */
proctype sweeper(byte h) {
	byte s, n;
	mtype m;
end:	do
	:: d_step { lingers[h] && !inch[2 * h] && !inch[2 * h + 1] ->
		lingers[h] = false; exists[h] = false; conf[h] = false; n = 1;
		mk[2 * h] = false; mk[2 * h + 1] = false;
		printf("EV hub %d: the linger ends\n", h) }
		hubDrop(HOLDER + 1 + h, h)
	od
}

/* Hub.WaitFrom for waiter w with its mark (mk, hrd): covered when the
 * mark was taken on the same entry, confirmed then and now; a notice heard
 * since wakes w */
inline hubJoin(w, h) {
	d_step {
		inch[w] = true;
		if
		:: !exists[h] -> exists[h] = true; conf[h] = false
		:: else -> lingers[h] = false
		fi;
		ready = conf[h] && sub[h] != NONE;
		covered = ready && mk[w];
		if :: covered && hrd[w] -> wake[w] = true :: else -> skip fi;
		mk[w] = false; hrd[w] = false;
		printf("EV %d joins the hub (confirmed already: %d, covered by its mark: %d)\n", w, ready, covered) }
}

/* Locker.lock (retry.Loop) with the hub */
proctype gowaiter(byte w) {
	byte h = HUB(w), s, k, n;
	bool got, ready, covered, early;
	mtype m;
	do
	:: done[w] < TRIES ->
		d_step { wake[w] = false; /* a Lock call: a new wake channel */
#ifndef MUT_MARK_AFTER
			/* Hub.Since: the mark, before the attempt */
			mk[w] = exists[h] && conf[h] && sub[h] != NONE; hrd[w] = false
#endif
		}
		/* A Locker that orders its attempts with other Lockers' waiters
		 * joins before its first attempt when the channel is confirmed
		 * (its mark covers); in the model any waiter may. */
		if
		:: LINGER && mk[w] -> early = true; hubJoin(w, h);
			if
			:: !ready -> hubSubscribe(w, h) /* the linger ended meanwhile */
			:: else -> skip
			fi
		:: else -> skip
		fi;
		d_step { attempt(w, got) }
		if
		:: got && early -> early = false; hubLeave(w, h); goto locked
		:: got && !early -> goto locked
		:: !got && early -> early = false; ready = false; covered = false; goto asleep
		:: else -> skip
		fi;
#ifdef MUT_MARK_AFTER
		/* the mark taken only after the attempt */
		d_step { mk[w] = exists[h] && conf[h] && sub[h] != NONE; hrd[w] = false }
#endif
		hubJoin(w, h);
		if
		:: ready -> skip
		:: else -> hubSubscribe(w, h)
		fi;
#ifndef MUT_NO_RETRY
		if
		:: !covered -> d_step { ready = false; attempt(w, got) } /* at once after the subscription */
		:: else -> ready = false
		fi;
#else
		ready = false;
#endif
		covered = false;
asleep:
		do
		:: got -> break
		:: else ->
			d_step { wake[w] -> wake[w] = false } /* asleep until a wake */
			d_step { attempt(w, got) }
		od;
		hubLeave(w, h);
locked:
		release(w);
		d_step { got = false; done[w]++ }
	:: else -> break
	od;
	fin[w] = true
}

#if JAVA
/* Wait.loop with Redis.subscribe and Redis.unsubscribe, on a
 * connection that stays open (Java never closes its pub/sub connection) */
proctype javawaiter(byte w) {
	byte h = HUB(w), s, k, n, ticket;
	bool got;
	do
	:: done[w] < TRIES ->
		d_step { wake[w] = false; attempt(w, got) } /* drainPermits, attempt */
		if
		:: got -> goto jlocked
		:: else -> skip
		fi;
		/* Redis.subscribe: the listener added, then its own SUBSCRIBE */
		d_step { inch[w] = true }
		d_step { s = sub[h]; assert(nfull(cmdq[s])); cmdq[s]!SUB; jsent[h]++; ticket = jsent[h]; s = 0;
			printf("EV %d (Java) SUBSCRIBE\n", w) }
#ifndef MUT_NO_CONFIRM
		jack[h] >= ticket; /* its reply */
#endif
#ifndef MUT_NO_RETRY
		d_step { ticket = 0; wake[w] = false; attempt(w, got) } /* at once (continue): drainPermits, attempt */
#else
		d_step { ticket = 0; got = false }
#endif
		do
		:: got -> break
		:: else ->
			d_step { wake[w] -> wake[w] = false } /* asleep until a permit */
			d_step { wake[w] = false; attempt(w, got) } /* drainPermits, attempt */
		od;
		/* the listener removed; the last one sends UNSUBSCRIBE */
		atomic { inch[w] = false;
			if
			:: !inch[MATE(w)] ->
				s = sub[h]; assert(nfull(cmdq[s])); cmdq[s]!UNSUB; s = 0;
				printf("EV %d (Java) leaves last: UNSUBSCRIBE\n", w)
			:: else -> skip
			fi }
jlocked:
		release(w);
		d_step { got = false; done[w]++ }
	:: else -> break
	od;
	fin[w] = true
}
#endif

/* a holder: holds the key at the start, releases it, may take it again */
active proctype holder() {
	byte held = 1, k, n;
	bool got;
	do
	:: key && owner == HOLDER -> release(HOLDER)
	:: held < HT && !(key && owner == HOLDER) ->
		d_step { held++; attempt(HOLDER, got); got = false }
	:: else -> break
	od
}

/* no waiter is stuck: when nothing can move, every waiter is done */
active proctype monitor() {
	byte i;
	atomic {
		timeout ->
		do
		:: i < NW ->
			if
			:: !fin[i] -> printf("EV stuck: waiter %d has not got the lock; key held: %d, wake pending: %d\n", i, key, wake[i])
			:: else -> skip
			fi;
			assert(fin[i]);
			i++
		:: else -> break
		od }
}

init {
	byte h;
	atomic {
		h = 0;
		do
		:: h < NC -> run server(h); h++
		:: else -> break
		od;
		h = 0;
		do
		:: h < NH ->
			last[h] = 2 * h + 1; sub[h] = NONE;
			if
			:: ISJAVA(h) || OTHER == 1 -> other[h] = true
			:: !ISJAVA(h) && OTHER == 0 -> other[h] = false
			:: !ISJAVA(h) && OTHER == 2 -> other[h] = true
			:: !ISJAVA(h) && OTHER == 2 -> other[h] = false
			fi;
			if
			:: other[h] -> /* the connection open already, for the other channel */
				last[h] = 2 * h; sub[h] = 2 * h
			:: else -> skip
			fi;
			run reader(h);
			if
			:: !ISJAVA(h) && LINGER -> run sweeper(h)
			:: else -> skip
			fi;
			h++
		:: else -> break
		od;
		h = 0;
		do
		:: h < NW ->
			if
			:: h == NW - 1 && W2 == 1 -> fin[h] = true /* no such waiter */
			:: else -> skip
			fi;
			if
			:: h == NW - 1 && W2 == 1 -> skip
			:: ISJAVA(HUB(h)) && !(h == NW - 1 && W2 == 1) ->
#if JAVA
				run javawaiter(h)
#else
				skip
#endif
			:: !ISJAVA(HUB(h)) && !(h == NW - 1 && W2 == 1) -> run gowaiter(h)
			fi;
			h++
		:: else -> break
		od;
		h = 0
	}
}
