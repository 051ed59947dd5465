/*
 * namespace.pml: a migrate namespace whose own keys can vanish — deleted by
 * an operator's flush, or evicted — while the lock keys stay: `phase init`
 * after a lost namespace (with old followers still running, and at the end
 * state where nothing heartbeats), and the controller's step with evidence
 * (a legacy sighting, registry entries) that eviction can take.
 *
 * One lock name (legacy key + modern key). Go followers (a locker with a
 * namespace), a Java (legacy-only) locker, a plain modern locker with no
 * follower (the end state: services on modern.Locker, nothing heartbeats),
 * the controller (step, repair, init, cleanup), an operator's flush and, under
 * an evicting policy, eviction.
 *
 * Abstractions (migrate.pml checks what is left out): a follower's move is
 * one step — its reading writes its entry with the phase it moves to (the
 * announce, move and report of follower.sync are migrate.pml's); the
 * controller steps forward up to TOP; dead registry entries are gone
 * at once (less evidence than the code keeps: pruned later); a generation
 * is kept as its age in phase sets (0: the last set), saturated at GMAX
 * (an instance id stands for the namespace the follower read); the
 * server's and the lockers' clocks run at the same rate (the liveness margin
 * covers rates: S below is PL + LL, the margin 0). Lock keys are never
 * deleted here (a lost lock key is the modern and legacy models' residual).
 *
 * The fix modelled:
 *   the mark          a key outside the namespace's keys, written with every
 *                     phase set (init, step, repair) and by Cleanup: the phase
 *                     set and the instance. A flush leaves it; eviction can
 *                     take it (as any key) under an allkeys-* policy.
 *   follower          a missing phase refuses; a follower that read instance
 *                     X refuses a namespace that is not X; a fresh follower (a
 *                     new process: an older build rolled back, one started
 *                     after init) runs the phase it reads. Holders keep their
 *                     locks when the namespace vanishes.
 *   init              phase present: nothing. Mark present: restore its phase
 *                     and instance (a repair), unless the evidence shows a
 *                     higher phase.
 *                     No mark, and the namespace ran (hash, a registry entry
 *                     that ran it, a sighting): refuse. Nothing at all: the
 *                     first call stamps the server's time and refuses; a
 *                     later one starts legacy only if, in one script, the
 *                     stamp is at least S old and nothing else exists. A
 *                     flush removes the stamp.
 *   restored          a repair (init from the mark included) stamps
 *                     "restored" in the hash: for S after it the controller
 *                     refuses steps and rollbacks (the registry refills only
 *                     as lockers heartbeat; a cut-off locker's lock runs out
 *                     within S), for Q after it steps beyond dual-write (a lost
 *                     sighting comes back only when a locker meets the legacy
 *                     holder). A flush takes the stamp with the hash.
 *   generations       without the hash, an entry below the mark's generation
 *                     has not read its last set (a rollback, say) and is no
 *                     evidence; without a mark, the entries that read the
 *                     newest generation among them are. An entry AT the
 *                     mark's generation read the set the mark records: the
 *                     phase it still runs (not moved yet, waiting for a lock)
 *                     is no evidence either (GEN_AT_MARK=1 counts it, as the
 *                     code at cc29f65 does: a finding — repair then undoes
 *                     a rollback).  GENS=0: generations left out (every live
 *                     entry is evidence, the model before the review).
 *   policy            the controller refuses every step, repair and init
 *                     while the policy is allkeys-* or unreadable (EVICTING);
 *                     under noeviction or volatile-* nothing here is evicted
 *                     (the evidence keys carry no TTL).
 *
 * Property: never two valid holders of the lock, checked at every
 * acquisition and refresh, as in migrate.pml.
 *
 * Ties to code:
 *   follower reading   internal/protocol/migrateproto/scripts/heartbeat.lua @entry @read; Go: follower.reading, follower.judge
 *                      (a missing phase, or another instance, refuses)
 *   acquire per phase  internal/protocol/migrateproto/scripts/acquire.lua @free @write (dual phases);
 *                      legacy/scripts/acquire.lua @setnx (legacy)
 *   sighting           internal/protocol/migrateproto/scripts/sighting.lua @record
 *   status             internal/protocol/migrateproto/scripts/status.lua; Go: Controller.judge,
 *                      evictionBlockers (the policy read with the state)
 *   phase set          internal/protocol/migrateproto/scripts/phase_set.lua @silence @mark; Go: Controller.Step,
 *                      Controller.Repair, Controller.Init, Controller.initOnce,
 *                      Controller.repairPlan (each writes the mark; init waits
 *                      the silence from its stamp)
 *   restore            internal/protocol/migrateproto/scripts/phase_set.lua @restored; Go: Controller.judge
 *                      (blocker kinds restored and sighting: the silence, the
 *                      quiet period after it; the mark's generation decides
 *                      which entries speak without the hash), Controller.repairPlan
 *                      (the evidence it repairs to)
 *   end state          internal/protocol/migrateproto/scripts/cleanup.lua @mark; Go: Controller.Cleanup
 */

#define LEGACY 1
#define DW     2
#define DR     3
#define MODERN 4

#ifndef NG
#define NG 2 /* Go followers */
#endif
#ifndef PL
#define PL 1 /* phase lease */
#endif
#ifndef LL
#define LL 2 /* the longest lock lease */
#endif
#ifndef Q
#define Q 2 /* quiet period */
#endif
#ifndef S
#define S (PL + LL) /* init's silence: phase lease + longest lease + margin (0) */
#endif
#ifndef START
#define START MODERN
#endif
#ifndef TOP
#define TOP START /* the controller steps up to TOP */
#endif
#ifndef JAVA
#define JAVA 0 /* 1: a Java locker under the quiet-period assumption; 2: one
                  that holds the lock for the whole run (forgotten at
                  dual-read), met by a locker at least once a quiet period */
#endif
#ifndef GENS
#define GENS 1 /* 0: generations left out, every live entry is evidence */
#endif
#ifndef GMAX
#define GMAX 2 /* a generation's age in phase sets saturates here */
#endif
#ifndef PLAIN
#define PLAIN 0 /* a plain modern locker, once the migration has ended */
#endif
#ifndef ENDED
#define ENDED 0 /* the migration ended (Cleanup ran) before the run */
#endif
#ifndef MARK
#define MARK 1 /* the namespace has a mark (0: it ran on a build without marks) */
#endif
#ifndef FLUSH
#define FLUSH 1 /* operator flushes of the namespace's keys */
#endif
#ifndef CLOSE
#define CLOSE 1 /* a follower may close (its locker closed while holding a lock) */
#endif
#ifndef RESTART
#define RESTART 1 /* a follower may be restarted: a fresh process */
#endif
#ifndef REPAIR
#define REPAIR 1
#endif
#ifndef ROLLBACK
#define ROLLBACK 0 /* the controller may roll back one phase */
#endif
#ifndef EVICT
#define EVICT 0 /* the policy evicts at the start (allkeys-*) */
#endif
#ifndef PSWITCH
#define PSWITCH 0 /* times the policy may change (each flips it) */
#endif
#define MAXINST 3
#define RSAT (S > Q -> S : Q)

#define READS_LEGACY(p)  ((p) <= DR)
#define READS_MODERN(p)  ((p) >= DW)
#define WRITES_LEGACY(p) ((p) <= DW)
#define WRITES_MODERN(p) ((p) >= DW)
#define XW(w, r) ((WRITES_LEGACY(w) && READS_LEGACY(r)) || (WRITES_MODERN(w) && READS_MODERN(r)))
#define COMPAT(a, b) (XW(a, b) && XW(b, a))

#define JV NG        /* the Java locker's holder id */
#define PM (NG + 1)  /* the plain modern locker's holder id */
#define NH (NG + 2)

/* namespace keys (a flush deletes them all) */
bool phaseKey = true;
byte phase = START;
bool hashKey = true;  /* the namespace hash: its phase copy and instance */
byte mphase = START;
byte hinst = 1;
byte sinceAge = Q;    /* age of phase-since, saturated at Q */
#if JAVA
bool sightKey = true; /* the Java fleet was seen at the start */
#else
bool sightKey = false;
#endif
byte sightAge = 0;    /* age of the sighting, saturated at Q (0 when none) */
bool stamp = false;   /* init's pending stamp */
byte stampAge = 0;    /* its age, saturated at S */
/* registry: one entry per follower; eleft its life by the server's clock */
byte ephase[NG];      /* phase run, 0 none yet */
byte eheld[NG];       /* phase of a held lock or one in flight, 0 none */
byte einst[NG];       /* instance read, 0 none */
byte eleft[NG];
/* the mark: outside the namespace's keys */
bool markKey = MARK;
byte markPhase = START;
byte markInst = 1;
byte ninst = 1;       /* instances made so far */
/* generations: the age, in phase sets, of the one each follower read last
 * (its entry carries it); the hash and the mark carry the last set's */
byte fgen[NG];
bool rstKey = false;  /* "restored" in the namespace hash */
byte rstAge = 0;      /* its age, saturated at RSAT */
bool evicting = EVICT;
byte pswitch = PSWITCH;
byte flushes = FLUSH;
bool ended = ENDED;
/* the lock */
bool lk, mk;
byte lwho, mwho;
byte lleft, mleft;
/* holders: followers, the Java locker, the plain locker */
bool held[NH];
byte hleft[NH];
byte hph[NH];
/* followers' phase leases (their monotonic clocks) and acquires in flight */
byte trust[NG];
bool res[NG];
byte rph[NG];
byte rleft[NG];
bool hbt[NG], ctlt;
byte jquiet;
bool overlap;

#define LFREE (!lk || lleft == 0)
#define MFREE (!mk || mleft == 0)
#define VALID(i) (held[i] && hleft[i] > 0)
#define LIVE(j) (eleft[j] > 0)
#define RAN(j) (LIVE(j) && (einst[j] != 0 || ephase[j] != 0 || eheld[j] != 0))
#define DOWN(x) if :: x > 0 -> x-- :: else -> skip fi

inline acquired(i) {
	k = 0;
	do
	:: k < NH -> if :: k != i && VALID(k) -> overlap = true :: else -> skip fi; k++
	:: else -> break
	od;
	k = 0;
	if
	:: overlap -> printf("EV OVERLAP: %d holds in phase %d while another holds\n", i, hph[i])
	:: else -> skip
	fi;
	assert(!overlap)
}

/* JAVA 2: a locker meets the forgotten legacy holder at least once a quiet
 * period (the clock waits for it) */
#if JAVA == 2
#define JWAIT (jquiet + 1 >= Q)
#else
#define JWAIT false
#endif

active proctype clock() {
	byte k;
end:	do
	:: d_step { !JWAIT ->
		DOWN(lleft); DOWN(mleft);
		k = 0;
		do
		:: k < NG -> DOWN(eleft[k]); DOWN(trust[k]); DOWN(rleft[k]); hbt[k] = false;
			if :: eleft[k] == 0 -> ephase[k] = 0; eheld[k] = 0; einst[k] = 0 :: else -> skip fi;
			k++
		:: else -> break
		od;
		if :: lleft == 0 -> lk = false; lwho = 0 :: else -> skip fi;
		if :: mleft == 0 -> mk = false; mwho = 0 :: else -> skip fi;
		k = 0;
		do
		:: k < NH -> DOWN(hleft[k]);
			if :: hleft[k] == 0 -> held[k] = false; hph[k] = 0 :: else -> skip fi;
			k++
		:: else -> break
		od;
		k = 0;
		if :: sinceAge < Q -> sinceAge++ :: else -> skip fi;
		if :: sightKey && sightAge < Q -> sightAge++ :: else -> skip fi;
		if :: stamp && stampAge < S -> stampAge++ :: else -> skip fi;
		if :: rstKey && rstAge < RSAT -> rstAge++ :: else -> skip fi;
#if JAVA == 2
		lleft = LL; hleft[JV] = LL; /* it holds on */
#endif
		if :: jquiet < Q -> jquiet++ :: else -> skip fi;
		ctlt = false;
		printf("EV tick\n") }
	od
}

inline land(i, p, left) {
	if
	:: p == LEGACY && LFREE -> /* legacy/scripts/acquire.lua @setnx */
		lk = true; lwho = i; lleft = left; held[i] = true
	:: (p == DW || p == DR) && LFREE && MFREE -> /* internal/protocol/migrateproto/scripts/acquire.lua @free @write */
		if :: p == DW -> lk = true; lwho = i; lleft = left :: else -> skip fi;
		mk = true; mwho = i; mleft = LL; held[i] = true
	:: (p == DW || p == DR) && !LFREE && MFREE && !(mk && mwho == lwho) -> /* internal/protocol/migrateproto/scripts/sighting.lua @record */
		sightKey = true; sightAge = 0
	:: p == MODERN && MFREE -> /* internal/protocol/modernproto/acquire.lua */
		mk = true; mwho = i; mleft = LL; held[i] = true
	:: else -> skip
	fi
}

/* follower.want, as migrate.pml: one phase towards the phase read; straight
 * to it for a follower that runs nothing yet or whose lease lapsed holding
 * nothing (in flight included); one that lapsed holding waits. */
#define LAPSED (trust[i] == 0)
#define BUSY (VALID(i) || res[i])
#define WAITS (LAPSED && BUSY)
#define WANT(c, t) ((c) == 0 || (LAPSED && !BUSY) -> (t) : (WAITS -> (c) : ((t) > (c) -> (c) + 1 : ((t) < (c) -> (c) - 1 : (c)))))
#define HELDREP (VALID(i) -> hph[i] : (res[i] -> rph[i] : 0))
#define ENTRY ephase[i] = cur; eheld[i] = HELDREP; einst[i] = kinst; eleft[i] = PL + LL

/* the instance check: a follower that read an instance refuses another */
#ifdef MUT_ANY_INSTANCE
#define SAME_NS (true)
#else
#define SAME_NS (kinst == 0 || (hashKey && hinst == kinst))
#endif

proctype follower(byte i) {
	byte cur = START, kinst = 1, nxt, k;
	bool closed = false;
end:	do
	/* follower.reading: the entry, then the phase and the namespace hash,
	 * in one script; the move (one step here) and its entry */
	:: d_step { !closed && !hbt[i] ->
		hbt[i] = true;
		if
		:: !phaseKey -> trust[i] = 0 /* refuse: lost or uninitialised */
		:: phaseKey && !SAME_NS -> trust[i] = 0 /* refuse: not the instance read */
		:: phaseKey && SAME_NS ->
			if :: hashKey -> kinst = hinst; fgen[i] = 0 :: else -> skip fi; /* (GENS 0: stays 0) */
			nxt = WANT(cur, phase);
			if
			:: nxt == cur && WAITS -> skip /* no lease until its locks are gone */
			:: else ->
				if
				:: nxt != cur && VALID(i) && !COMPAT(hph[i], nxt) -> held[i] = false; hleft[i] = 0; hph[i] = 0
				:: else -> skip
				fi;
				cur = nxt; trust[i] = PL
			fi;
			nxt = 0
		fi;
		ENTRY;
		printf("EV f%d reads %d (phase key %d, instance %d), runs %d, generation age %d\n", i, phase, phaseKey, hinst, cur, fgen[i]) }
	/* lock call: follower.valid + reserve, in one step */
	:: d_step { !closed && !held[i] && !res[i] && cur != 0 && trust[i] > 0 ->
		res[i] = true; rph[i] = cur; rleft[i] = LL }
	/* the acquire lands, in the phase reserved */
	:: d_step { res[i] ->
		res[i] = false;
		land(i, rph[i], rleft[i]);
		if
		:: held[i] && !COMPAT(rph[i], cur) -> /* the follower moved on: released, not obtained */
			if :: lk && lwho == i -> lk = false :: else -> skip fi;
			if :: mk && mwho == i -> mk = false :: else -> skip fi;
			held[i] = false
		:: held[i] && COMPAT(rph[i], cur) -> hleft[i] = rleft[i]; hph[i] = rph[i];
			printf("EV f%d locks in phase %d (lease left %d)\n", i, rph[i], hleft[i]);
			if :: hleft[i] > 0 -> acquired(i) :: else -> skip fi
		:: else -> skip
		fi;
		rph[i] = 0; rleft[i] = 0 }
	/* refresh: while the phase lease runs, within one step of the phase run */
	:: d_step { !closed && VALID(i) && trust[i] > 0 && COMPAT(hph[i], cur) && hleft[i] < LL ->
		if :: lk && lwho == i && WRITES_LEGACY(hph[i]) -> lleft = LL :: else -> skip fi;
		if :: mk && mwho == i && WRITES_MODERN(hph[i]) -> mleft = LL :: else -> skip fi;
		hleft[i] = LL;
		printf("EV f%d refreshes its phase-%d lock\n", i, hph[i]);
		acquired(i) }
	:: d_step { held[i] ->
		if :: lk && lwho == i -> lk = false :: else -> skip fi;
		if :: mk && mwho == i -> mk = false :: else -> skip fi;
		held[i] = false; hleft[i] = 0; hph[i] = 0 }
#if CLOSE
	/* the locker closed while it holds a lock: no heartbeat, no refresh */
	:: d_step { !closed && !res[i] -> closed = true; trust[i] = 0; printf("EV f%d closes\n", i) }
#endif
#if RESTART
	/* a new process in its place (say, an older build rolled back): runs
	 * nothing yet, has read no instance */
	:: d_step { (cur != 0 || kinst != 0 || closed) && !held[i] && !res[i] ->
		closed = false; cur = 0; kinst = 0; trust[i] = 0; printf("EV f%d restarts\n", i) }
#endif
	od
}

#if JAVA == 1
/* The Java fleet, as migrate.pml: a live Java locker locks at least once a
 * quiet period and is then seen; one quiet for Q has retired. */
proctype java() {
	byte k;
end:	do
	:: d_step { jquiet < Q && !held[JV] && LFREE ->
		lk = true; lwho = JV; lleft = LL; held[JV] = true; hleft[JV] = LL; hph[JV] = LEGACY;
		jquiet = 0; sightKey = true; sightAge = 0;
		printf("EV java locks the legacy key\n");
		acquired(JV) }
	:: d_step { held[JV] ->
		if :: lk && lwho == JV -> lk = false :: else -> skip fi;
		held[JV] = false; hleft[JV] = 0 }
	od
}
#endif

#if JAVA == 2
/* A forgotten legacy-only locker that holds the lock for the whole run (a
 * dual-read follower cannot take it: it reads the legacy key); a locker
 * meets it, and records a sighting, at least once a quiet period. */
proctype java() {
end:	do
	:: d_step { jquiet > 0 -> jquiet = 0; sightKey = true; sightAge = 0;
		printf("EV a locker meets the legacy holder: a sighting\n") }
	od
}
#endif

#if PLAIN
/* The end state: a plain modern.Locker on the derived key, no follower, no
 * entry; it refreshes for as long as it likes. */
proctype plain() {
	byte k;
end:	do
	:: d_step { ended && !held[PM] && MFREE ->
		mk = true; mwho = PM; mleft = LL; held[PM] = true; hleft[PM] = LL; hph[PM] = MODERN;
		printf("EV plain locks the modern key\n");
		acquired(PM) }
	:: d_step { VALID(PM) && mk && mwho == PM && hleft[PM] < LL ->
		mleft = LL; hleft[PM] = LL; acquired(PM) }
	:: d_step { held[PM] ->
		if :: mk && mwho == PM -> mk = false :: else -> skip fi;
		held[PM] = false; hleft[PM] = 0; hph[PM] = 0 }
	od
}
#endif

/* Controller.judge: every live entry runs p and holds nothing of another phase */
#define ENTRY_AT(j, p) (!LIVE(j) || ((ephase[j] == 0 || ephase[j] == (p)) && (eheld[j] == 0 || eheld[j] == (p))))
/* ... and, for a rollback to p, every live entry's phases are compatible with p */
#define ENTRY_COMPAT(j, p) (!LIVE(j) || ((ephase[j] == 0 || COMPAT(ephase[j], p)) && (eheld[j] == 0 || COMPAT(eheld[j], p))))
/* Without the hash, an entry is evidence when it read the newest
 * generation: the mark's (the last phase set, age 0), else the newest a
 * live entry read (Controller.judge); with the hash, every live entry is
 * (more evidence than the code takes: entries above the hash's generation) */
#define GCAND(j) (LIVE(j) && einst[j] != 0)
#if NG == 2
#define GNEW_E (GCAND(0) && (!GCAND(1) || fgen[0] <= fgen[1]) -> fgen[0] : (GCAND(1) -> fgen[1] : GMAX + 1))
#else
#define GNEW_E (GCAND(0) -> fgen[0] : GMAX + 1)
#endif
#ifndef GEN_AT_MARK
#define GEN_AT_MARK 0 /* 1: entries at the mark's generation speak too (cc29f65) */
#endif
#ifdef MUT_OLD_GEN_EVIDENCE
#define GNEWEST GNEW_E /* the mark's generation ignored: the code before the review */
#define GABOVE(j) true
#else
#define GNEWEST (markKey -> 0 : GNEW_E)
#define GABOVE(j) (GEN_AT_MARK || !markKey) /* none is above the mark's here */
#endif
#if GENS
#define SPEAKS(j) (LIVE(j) && (hashKey || (einst[j] != 0 && fgen[j] == GNEWEST && GABOVE(j))))
#else
#define SPEAKS(j) LIVE(j)
#endif
#define EMAX(j) (!SPEAKS(j) -> 0 : (eheld[j] > ephase[j] -> eheld[j] : ephase[j]))
#if NG == 2
#define ALL_COMPAT(p) (ENTRY_COMPAT(0, p) && ENTRY_COMPAT(1, p))
#define ALL_AT(p) (ENTRY_AT(0, p) && ENTRY_AT(1, p))
#define ANY_RAN (RAN(0) || RAN(1))
#define EVID_E (EMAX(0) > EMAX(1) -> EMAX(0) : EMAX(1))
#else
#define ALL_COMPAT(p) (ENTRY_COMPAT(0, p))
#define ALL_AT(p) (ENTRY_AT(0, p))
#define ANY_RAN (RAN(0))
#define EVID_E (EMAX(0))
#endif
#define QUIET(next) ((next) <= DW || ((!sightKey || sightAge >= Q) && ((next) != DR || sinceAge >= Q)))
/* after a restore: no step or rollback for S, no step beyond dual-write for Q */
#ifdef MUT_NO_RESTORED
#define RESTORED_S true
#else
#define RESTORED_S (!rstKey || rstAge >= S)
#endif
#ifdef MUT_NO_RESTORED_QUIET
#define RESTORED_Q(next) true
#else
#define RESTORED_Q(next) ((next) <= DW || !rstKey || rstAge >= Q)
#endif
/* the evidence of the phase reached: the hash, the live entries */
#define EVID_H (hashKey -> mphase : 0)
#define EVIDENCE (EVID_H > EVID_E -> EVID_H : EVID_E)
#ifdef MUT_IGNORE_POLICY
#define POLICY_OK true
#else
#define POLICY_OK (!evicting)
#endif
#ifdef MUT_IGNORE_MARK
#define HASMARK false
#else
#define HASMARK markKey
#endif
#ifdef MUT_NO_SILENCE
#define SILENT true
#else
#define SILENT (stamp && stampAge >= S)
#endif
/* a phase set (phase_set.lua): the phase, phase-since, the hash (its
 * instance kept, a new one if the hash is gone) and the mark */
byte np; /* the phase to set */
inline restored() { /* phase_set.lua @restored (a repair) */
	rstKey = true; rstAge = 0
}
inline setphase() {
	phaseKey = true; phase = np; np = 0; sinceAge = 0;
	if :: !hashKey -> ninst++; hinst = ninst :: else -> skip fi;
	hashKey = true; mphase = phase;
	k = 0; /* a generation above every earlier one */
	do
	:: k < NG -> if :: GENS && fgen[k] < GMAX -> fgen[k]++ :: else -> skip fi; k++
	:: else -> break
	od;
	k = 0;
	markKey = true; markPhase = phase; markInst = hinst
}
/* the instance a repair keeps: the hash's, else the mark's, else a live
 * entry's; every live entry that read an instance must have read that one */
#ifdef MUT_REPAIR_ENTRY_INSTANCE
#define KEEP (hashKey -> hinst : (LIVE(0) && einst[0] != 0 -> einst[0] : (NG == 2 && LIVE(NG - 1) && einst[NG - 1] != 0 -> einst[NG - 1] : (markKey -> markInst : 0))))
#else
#define KEEP (hashKey -> hinst : (markKey -> markInst : (LIVE(0) && einst[0] != 0 -> einst[0] : (NG == 2 && LIVE(NG - 1) && einst[NG - 1] != 0 -> einst[NG - 1] : 0))))
#endif
#define INSTS_AGREE(j) (!LIVE(j) || einst[j] == 0 || einst[j] == KEEP)

active proctype controller() {
	byte k;
end:	do
	/* Controller.Step (forward) */
	:: d_step { !ctlt && phaseKey && POLICY_OK && phase < TOP && ALL_AT(phase) && QUIET(phase + 1) && RESTORED_S && RESTORED_Q(phase + 1) && (hashKey || ninst < MAXINST) ->
		ctlt = true; np = phase + 1; setphase();
		printf("EV controller steps to phase %d\n", phase) }
#if ROLLBACK
	/* Controller.Step back: every live entry compatible with the target */
	:: d_step { !ctlt && phaseKey && POLICY_OK && phase > LEGACY && ALL_COMPAT(phase - 1) && RESTORED_S && (hashKey || ninst < MAXINST) ->
		ctlt = true; np = phase - 1; setphase();
		printf("EV controller rolls back to phase %d\n", phase) }
#endif
#if REPAIR
	/* Controller.Repair, to the phase the evidence (and the mark) shows,
	 * the instance kept; refused when entries read other instances */
	:: d_step { !ctlt && !phaseKey && POLICY_OK && (EVIDENCE != 0 || markKey) && KEEP != 0 && INSTS_AGREE(0) && INSTS_AGREE(NG - 1) ->
		ctlt = true;
		np = EVIDENCE;
		if :: markKey && markPhase > np -> np = markPhase :: else -> skip fi;
		hinst = KEEP; hashKey = true; setphase(); restored();
		printf("EV controller repairs to phase %d, instance %d\n", phase, hinst) }
#endif
	/* Controller.Init */
	:: d_step { !ctlt && !phaseKey && POLICY_OK ->
		ctlt = true;
		if
		:: HASMARK && EVIDENCE <= markPhase -> /* restore the mark */
			np = markPhase; hinst = markInst; hashKey = true; setphase(); restored(); stamp = false;
			printf("EV controller init restores the mark: phase %d, instance %d\n", phase, hinst)
		:: HASMARK && EVIDENCE > markPhase -> printf("EV init refused: the evidence is above the mark\n")
		:: !HASMARK && (hashKey || ANY_RAN || sightKey) -> printf("EV init refused: the namespace ran\n")
		:: !HASMARK && !(hashKey || ANY_RAN || sightKey) && SILENT && ninst < MAXINST ->
			np = LEGACY; hashKey = false; setphase(); stamp = false; stampAge = 0;
			printf("EV controller init: legacy, instance %d\n", hinst)
		:: !HASMARK && !(hashKey || ANY_RAN || sightKey) && !stamp -> stamp = true; stampAge = 0;
			printf("EV init refused: stamped, wait for the silence\n")
		:: else -> printf("EV init refused\n")
		fi }
#if PLAIN && !ENDED
	/* Controller.Cleanup: the end state (modern, every live entry at it, the
	 * quiet period over); the services may now run plain modern lockers */
	:: d_step { !ctlt && !ended && phaseKey && phase == MODERN && sinceAge >= Q && ALL_AT(MODERN) ->
		ctlt = true; ended = true; sightKey = false; sightAge = 0;
		markKey = true; markPhase = MODERN; markInst = hinst;
		printf("EV controller cleans up: the end state\n") }
#endif
	od
}

/* The operator's flush of the namespace's keys (not the lock keys, not the
 * mark); eviction, while the policy is allkeys-*; a change of policy. */
active proctype env() {
	byte k;
end:	do
	:: d_step { flushes > 0 -> flushes--;
		phaseKey = false; phase = 0; hashKey = false; mphase = 0; hinst = 0; sinceAge = 0; rstKey = false; rstAge = 0;
		sightKey = false; sightAge = 0; stamp = false; stampAge = 0;
		k = 0;
		do
		:: k < NG -> eleft[k] = 0; ephase[k] = 0; eheld[k] = 0; einst[k] = 0; k++
		:: else -> break
		od;
		k = 0;
		printf("EV the namespace's keys are flushed\n") }
	:: d_step { pswitch > 0 -> pswitch--; evicting = !evicting; printf("EV the policy now evicts: %d\n", evicting) }
	:: d_step { evicting && sightKey -> sightKey = false; sightAge = 0; printf("EV the sighting is evicted\n") }
	:: d_step { evicting && LIVE(0) -> eleft[0] = 0; ephase[0] = 0; eheld[0] = 0; einst[0] = 0; printf("EV f0's entry is evicted\n") }
#if NG == 2
	:: d_step { evicting && LIVE(1) -> eleft[1] = 0; ephase[1] = 0; eheld[1] = 0; einst[1] = 0; printf("EV f1's entry is evicted\n") }
#endif
	:: d_step { evicting && markKey -> markKey = false; printf("EV the mark is evicted\n") }
	:: d_step { evicting && hashKey -> hashKey = false; mphase = 0; hinst = 0; rstKey = false; rstAge = 0; printf("EV the namespace hash is evicted\n") }
	:: d_step { evicting && phaseKey -> phaseKey = false; phase = 0; printf("EV the phase key is evicted\n") }
	od
}

init {
	atomic {
		run follower(0);
#if NG == 2
		run follower(1);
#endif
#if JAVA
		run java();
#endif
#if JAVA == 2
		lk = true; lwho = JV; lleft = LL; held[JV] = true; hleft[JV] = LL; hph[JV] = LEGACY;
#endif
#if PLAIN
		run plain();
#endif
	}
}
