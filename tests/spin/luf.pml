/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * tests/spin/luf.pml - a Promela model of luf's generation protocol.
 *
 * Checked by tests/spin/run with spin: exhaustively for safety (S1, S2,
 * S4 as assertions), under weak fairness for progress (L1, the ltl claim at
 * the end, compiled with -DLIVENESS), and once per mutant, each of which
 * must produce a counterexample. README.md beside this file says how.
 *
 * What is modelled, function by function
 * --------------------------------------
 *   model                 C (include/luf/, lib/)                   notes
 *   BEFORE, LUF_BEFORE    luf_ugen_before()          ugen.h        signed difference in UBITS bits
 *   NEWER                 luf_ugen_newer()           ugen.h        0 = none
 *   take_snap, snap_add   luf_ugen_new()             ugen.h        a second add if the first gave
 *                                                                  0; that 0 is visible between
 *   STAMP_OF (unmap)      luf_ugen_stamp()           ugen.h        current + 1, 0 -> 1; reads only
 *   CPU_DONE              luf_cpu_done()             batch.h       shared by diet and check_done
 *   batch_add             luf_batch_add()            batch.h
 *   batch_fold            luf_batch_fold()           batch.h
 *   check_done            luf_batch_check_done()     batch.h       done at once if the summary is
 *                                                                  not before the ugen (SUM_BEHIND)
 *   diet                  luf_batch_diet()           batch.h       all CPUs dropped at once, idem
 *   mark_loop, next_cpu   __luf_done_mark(),         done.h        a relaxed load, then a CAS that
 *                         __luf_done_mark_cpu()                    fails if another flusher raced;
 *                                                                  keeps low (LOW) for the summary
 *   sum (state)           struct luf_done: all and   done.h        one group: the model's 2 or 3
 *                         group[0]                                 CPUs are one cpumask word
 *   sum_after             __luf_done_sum_after(),    done.h        read the summary; recompute if
 *                         __luf_done_sum_group(),                  it was at low: the counters one
 *                         __luf_done_raise()                       load each, a max-CAS, holders
 *                                                                  read again (SUM 2; 1: one step)
 *   flush_rest, flush_now luf_flush_batch()          flush.h       diet (in the caller's step),
 *                                                                  snapshot, ops->flush (may fail:
 *                                                                  nothing changes), mark on success
 *   ctxsw (Cpu)           luf_local_flush_begin(),   flush.h       a CPU flushing itself for its
 *                         luf_local_flush_end()                    own reasons (context switch)
 *   flush_open            luf_pcpu_flush_open(),     pcpu.h        with luf_keytab_new_key() (round
 *                         __luf_keytab_fold(),       keytab.h      robin, skipping 0) and the fold
 *                         (diet, fold, name)         keytab.h      under the entry lock: diet, fold
 *   unmap (Cpu)           the caller's PTE clear,    pcpu.h        clear; stamp; add to the open
 *                         luf_pcpu_defer()                         set; fold at THRESH removals
 *   fold_free (Cpu)       luf_pcpu_fold()            pcpu.h        then frees the batch's folios
 *   abort_key             luf_abort_key(),           upgrade.h     luf_keytab_check_done(); fold
 *                         luf_key_flush(),           pcpu.h        the open set; copy the key's set;
 *                         luf_shared_flush()         shared.h      luf_flush_batch(); diet the set
 *   free_at               luf_free_at()              freelist.h    with the verdict cache; a pend
 *                                                                  folio keeps its key (fkey)
 *   release_pend          luf_freelist_release_pend() freelist.c
 *   release_done,         luf_freelist_release_done() freelist.c   pend folios whose key's set is
 *   release_one                                                    done, no flush: any subset of
 *                                                                  them for C's FIFO prefix
 *   rebuild_pend          luf_freelist_rebuild_      freelist.c    the pend set from the keys still
 *                         pend_set()                               pend, before a flush (ppart)
 *   alloc_begin, handout, luf_alloc_at(),            freelist.h    reserve, MAY_FLUSH, -EAGAIN,
 *   alloc_end, alloc_fail luf_freelist_refill()      freelist.c    -ENOMEM; all pend if their set
 *   (Cpu: allocate)                                                is done, else a done prefix,
 *                                                                  else one flush for all pend;
 *                                                                  the caller's lock and retries
 *   JOIN, the clear       the MMU                                  see "The MMU" below
 *
 * State: per CPU a TLB (bit f: it caches a stale translation of folio f;
 * a flush of that CPU clears its bits), done[], the open set and key of
 * its struct luf_pcpu; the done summary (sum); per folio its state and,
 * while pend, its key; the key table; one free list (clean and pend as
 * folio states, the pend set, pend_partial, the verdict cache) under the
 * caller's lock, as freelist.h asks of a list shared between CPUs.
 *
 * Not modelled
 * ------------
 *   - memory ordering: the model is sequentially consistent. The barrier in
 *     luf_ugen_stamp(), the acquire/release pairs on done and the seqlock
 *     are the job of ThreadSanitizer and the litmus test;
 *   - the seqcount of struct luf_shared: a read of a shared set is one
 *     atomic snapshot (what the retry loop provides), a write one atomic
 *     step (under the entry's lock). The verdict cache compares seqcounts:
 *     here any write to the cached key's set drops the cache;
 *   - per-CPU statistics, the received counters, LUF_DEBUG tracking;
 *   - domains (luf_domain_*, luf_shared_covers/add, luf_abort_domain) and
 *     writable or dirty removals (S3, the flush at fold): they use the same
 *     sets and the same luf_flush_batch();
 *   - the order of the lists: the folio handed out is any clean one (more
 *     behaviours than LIFO), and the done prefix of the FIFO pend list that
 *     luf_freelist_release_done() releases is any subset of the pend folios
 *     whose key's set is done, none included. It releases something only
 *     with 2 folios and 2 keys (with one key, or one folio, a done key
 *     means a done pend set): the configuration `run extra` checks;
 *   - more than one cpumask word: the summary is one value, group[0] and
 *     all at once, so __luf_done_sum_all() is not modelled, and the tests
 *     of all and of the word's group in check_done and diet are one test;
 *     nor is the lag hint (it only orders the loads of a check). Whether
 *     the summary catches up with the counters (its freshness) is no
 *     property here: a lagging summary only sends a check to the counters;
 *     it bounds the run like any live value;
 *   - a flush that fails after reaching some CPUs: a failed flush changes
 *     no TLB (reaching some could only leave fewer stale entries).
 *
 * Steps. Every access to shared state the protocol's correctness depends
 * on is its own step: the PTE clear and the stamp; each add of
 * luf_ugen_new(); each load and each CAS of done; with SUM 2 each load
 * and each CAS of the summary's recompute (SUM 1 merges them into the
 * worst case of one step, see sum_after; run uses it for the larger
 * configurations, which would not fit otherwise). Steps that only read
 * done, or only touch what one CPU owns, are merged with their neighbours:
 * done only moves forward, so reading it earlier can only keep more CPUs
 * in a set (an extra flush), never fewer. A flush is merged with the add
 * that takes its snapshot: a flush earlier than in C clears no more stale
 * entries and the mark is the same, so this is the worse case.
 *
 * The MMU. A CPU may cache a translation only while its PTE is present,
 * and a flush of the CPU drops it. An entry for a present PTE is not stale
 * and nothing observes it; any CPU may have (re)filled one just before the
 * clear, whatever it flushed before. So the model decides at the clear: the
 * CPUs that ever cached a translation form mm (the mm_cpumask the unmapper
 * passes as the removal's CPUs), the clear may add CPUs to it, and every
 * CPU of mm then holds a stale entry. The protocol reads mm, never a TLB:
 * fewer entries would leave it unchanged with less to catch, so this is
 * the worst case of a free-running MMU, without the interleavings of fills.
 *
 * Bounds. The counter has UBITS bits and wraps (it starts just below the
 * wrap). luf_ugen_before() is only right while the values it compares lie
 * less than half the counter space apart; in C that is the 2^63
 * generations documented in ugen.h (292 years at one flush a nanosecond).
 * The model makes that assumption explicit (BOUND_OK): the counter may not
 * move so far that a live value (a done counter, the summary, a set's ugen,
 * a snapshot or a CAS value in flight, the 0 seen between the two adds,
 * the low or minimum a recompute of the summary holds) would lie half the
 * space or more behind the newest stamp that could then be taken. An
 * optional flush (ctxsw) is then not enabled; a flush that is owed sets
 * `cut` and stops its process: the run leaves the assumption. Safety is
 * checked in every state before; L1 excuses a run once it is cut.
 *
 * Properties
 *   S1  alloc hands out no folio that any CPU still caches (assert in the
 *       handout); and the summary never runs ahead: every value its
 *       recompute writes is not after any CPU's done (wrap-safe), so a
 *       check it answers would have been answered so by the counters;
 *   S2  after a successful abort the folio is written: no CPU caches it;
 *   S4  a CAS of done only raises it (wrap-safe), and luf_ugen_new() never
 *       returns 0;
 *   L1  ltl l1 (-DLIVENESS, pan -a -f): an allocation of CPU 0 that may
 *       flush, started while pend folios exist, eventually succeeds. The
 *       caller retries under its lock after a failed flush, and a CPU's
 *       flush never fails twice in a row there (a backend that always fails
 *       leaves nothing to prove). Asserted in every run: such an allocation
 *       never returns -EAGAIN, nor -ENOMEM while a pend folio exists.
 *
 * Mutants (-D on the spin command line); each must give a counterexample:
 *   MUTANT_MARK_BEFORE_FLUSH  marks done before ops->flush, even if it then
 *                             fails                                   (S1)
 *   MUTANT_DIET_EARLY         CPU_DONE counts done == ugen - 1 as done (S1)
 *   MUTANT_UGEN_LT            luf_ugen_before() is a plain <: done stops
 *                             below the wrap, a CPU looks done       (S1)
 *   MUTANT_SUM_AHEAD          luf_flush_batch() raises the summary to
 *                             the snapshot before ops->flush, which
 *                             may then fail (its own write is not
 *                             asserted: the trail shows the stale
 *                             handout that follows)                  (S1)
 *   MUTANT_NO_ABORT           luf_abort_key() does nothing            (S2)
 *   MUTANT_MARK_STORE         __luf_done_mark_cpu() stores the snapshot
 *                             without its compare-and-swap loop       (S4)
 *   MUTANT_NO_PROGRESS        a MAY_FLUSH allocation gets -EAGAIN like
 *                             one that may not flush (with LIVENESS)  (L1)
 *
 * Not a check: -DSTRICT_RESERVE asserts a stronger reserve rule than L1
 * (docs/DESIGN.md 5): that a caller that may flush gets no folio at all once
 * only the reserve's worth of clean folios is left. luf_alloc_at() does hand
 * out the folios its flush (or a done pend set) just made clean when they are
 * all there is, as the first half of L1 requires; spin shows that at once,
 * which is why L1 states the reserve as a floor under the clean folios there
 * when the call begins.
 */

#ifndef NCPU
#define NCPU 2 /* 2 or 3 */
#endif
#ifndef NFOLIO
#define NFOLIO 2 /* 1 to 3 */
#endif
#ifndef NKEY
#define NKEY 1 /* valid keys 1..NKEY (nr_keys - 1 in C), 1 to 3 */
#endif
#ifndef UBITS
#define UBITS 3 /* width of the ugen counter */
#endif
#ifndef THRESH
#define THRESH 1 /* luf_pcpu threshold: fold after this many removals */
#endif
#ifndef INIT_ON_FREE
#define INIT_ON_FREE 1 /* a free may first abort and write the folio (S2) */
#endif
#ifndef RESERVE
#define RESERVE 1 /* clean folios kept from callers that may flush */
#endif
#ifndef SUM
#define SUM 2 /* done summary: 2 recompute a step per access, 1 in one step, 0 none */
#endif

#define UMASK ((1 << UBITS) - 1)
#define UHALF (1 << (UBITS - 1))
#ifndef USTART
#define USTART (UMASK - 1) /* start just below the wrap, as the C tests do */
#endif

#define BIT(x) (1 << (x))
#define HAS(m, x) ((((m) >> (x)) & 1) == 1)

/* Folio states: enum luf_folio_state, plus the model's mapped/unmapped. */
#define FS_MAPPED 0	/* in use, PTE present */
#define FS_UNMAPPED 1	/* PTE cleared by unmap, not freed yet */
#define FS_CLEAN 2	/* LUF_FOLIO_CLEAN */
#define FS_PEND 3	/* LUF_FOLIO_PEND */

/* results */
#define EOK 0
#define EIO 1	  /* ops->flush failed */
#define EAGAIN 2
#define ENOMEM 3
#define NEED 4	  /* alloc: a flush is owed (model-internal) */
#define RETRY 5	  /* alloc: the caller tries again (model-internal) */

/* luf_ugen_before(): the wrap-safe truth, also used by the model's checks */
#define BEFORE(a, b) ((((a) - (b)) & UMASK) >= UHALF)
#if defined(MUTANT_UGEN_LT)
#define LUF_BEFORE(a, b) ((a) < (b))
#else
#define LUF_BEFORE(a, b) BEFORE(a, b)
#endif
/* luf_ugen_newer() */
#define NEWER(a, b) ((a) == 0 -> (b) : ((b) == 0 -> (a) : (LUF_BEFORE(a, b) -> (b) : (a))))
/* luf_cpu_done() */
#if defined(MUTANT_DIET_EARLY)
#define CPU_DONE(c, u) (!LUF_BEFORE((done[c] + 1) & UMASK, u))
#else
#define CPU_DONE(c, u) (!LUF_BEFORE(done[c], u))
#endif
/* luf_ugen_stamp() of a counter at n: n + 1, skipping 0 */
#define STAMP_OF(n) ((((n) + 1) & UMASK) == 0 -> 1 : (((n) + 1) & UMASK))
/* where luf_ugen_new() leaves the counter */
#define NEWCUR ((((cur + 1) & UMASK) == 0) -> 1 : ((cur + 1) & UMASK))

/* ------------------------------------------------------------------ state */

byte cur = USTART;	   /* struct luf_ugen_src */
byte done[NCPU] = USTART;  /* struct luf_done_cpu: luf_done_init(start) */
byte sum = USTART;	   /* struct luf_done: group[0] and all (one group) */
byte tlb[NCPU];		   /* bit f: the CPU caches a stale translation of f */
byte mm;		   /* mm_cpumask: CPUs that have cached a translation */

byte fst[NFOLIO];	   /* FS_*, all FS_MAPPED at start */
byte fkey[NFOLIO];	   /* folio->key of a pend folio; 0 for the others */
byte unm[NCPU];		   /* bit f: folio f unmapped by this CPU, to be freed */

byte kcpus[NKEY];	   /* key table: the set of key k at index k - 1 */
byte kugen[NKEY];
byte knext;		   /* keytab->next, modulo NKEY */

byte ocpus[NCPU];	   /* struct luf_pcpu: the open set */
byte ougen[NCPU];
byte onr[NCPU];		   /* nr_open, saturated at THRESH */
byte pkey[NCPU];	   /* pc->key */

byte fl_lock;		   /* the caller's lock around the free list: owner + 1 */
byte pcpus;		   /* fl->pend_set */
byte pugen;
byte ckey;		   /* verdict cache: key, 0 = none (or stale: seq changed) */
bit cdone;
bit ppart;		   /* fl->pend_partial: a prefix left, the pend set covers more */

/* values a CPU holds in flight; 0 = none. Live values for the bound. */
byte hsnap[NCPU];	   /* a luf_ugen_new() snapshot */
byte hold[NCPU];	   /* the old value of a CAS loop */
byte hmin[NCPU];	   /* summary: the oldest value a mark replaced (low), then
			    * the minimum of the counters read (0: none) */
bit hzero[NCPU];	   /* between the two adds of luf_ugen_new(), holding 0 */
byte ccpus[NCPU];	   /* luf_shared_flush(): the scratch copy */
byte cugen[NCPU];

bit cut;		   /* the run left the 2^(UBITS-1) assumption */
bit want0;		   /* L1: CPU 0 is in a MAY_FLUSH allocation */

/* --------------------------------------------------- the wrap assumption */

/* x is no live value, or lies less than half the space behind stamp s */
#define LV(x, s) ((x) == 0 || ((((s) - (x)) & UMASK) < UHALF))
#define LVCPU(c, s) (LV(done[c], s) && LV(ougen[c], s) && LV(hsnap[c], s) && \
		     LV(hold[c], s) && LV(hmin[c], s) && LV(cugen[c], s) && \
		     (!hzero[c] || (s) < UHALF))
#if NCPU > 2
#define LVCPUS(s) (LVCPU(0, s) && LVCPU(1, s) && LVCPU(2, s))
#else
#define LVCPUS(s) (LVCPU(0, s) && LVCPU(1, s))
#endif
#if NKEY > 2
#define LVKEYS(s) (LV(kugen[0], s) && LV(kugen[1], s) && LV(kugen[2], s))
#elif NKEY > 1
#define LVKEYS(s) (LV(kugen[0], s) && LV(kugen[1], s))
#else
#define LVKEYS(s) LV(kugen[0], s)
#endif
/*
 * May the counter move to n? The 2^63 bound of the C code (ugen.h): every
 * live value stays less than half the space behind the newest stamp that
 * could be taken afterwards.
 */
#define BOUND_OK(n) (LVCPUS(STAMP_OF(n)) && LVKEYS(STAMP_OF(n)) && LV(pugen, STAMP_OF(n)) && \
		     (SUM == 0 || LV(sum, STAMP_OF(n))))

/* the summary is before ugen u: not every CPU has flushed up to u */
#define SUM_BEHIND(u) (SUM == 0 || LUF_BEFORE(sum, u))
/* the summary at v would not be ahead of any CPU's counter (wrap-safe) */
#if NCPU > 2
#define SUM_OK(v) (!BEFORE(done[0], v) && !BEFORE(done[1], v) && !BEFORE(done[2], v))
#else
#define SUM_OK(v) (!BEFORE(done[0], v) && !BEFORE(done[1], v))
#endif

/* ---------------------------------------------------------- folio helpers */

#if NCPU > 2
#define NO_TLB(f) (!HAS(tlb[0], f) && !HAS(tlb[1], f) && !HAS(tlb[2], f))
#else
#define NO_TLB(f) (!HAS(tlb[0], f) && !HAS(tlb[1], f))
#endif

#define ISF(f, s) (fst[f] == (s) -> 1 : 0)
#if NFOLIO > 2
#define NSTATE(s) (ISF(0, s) + ISF(1, s) + ISF(2, s))
#elif NFOLIO > 1
#define NSTATE(s) (ISF(0, s) + ISF(1, s))
#else
#define NSTATE(s) ISF(0, s)
#endif
#define ANY_MAPPED (NSTATE(FS_MAPPED) > 0)
#define ANY_FREE (NSTATE(FS_CLEAN) + NSTATE(FS_PEND) > 0)

/* the MMU at a clear: mm may grow by CPU c */
#define JOIN(c) if :: !HAS(mm, c) -> mm = mm | BIT(c) :: skip fi

/* --------------------------------------------------------- batch.h */

/* luf_batch_add(): nothing for an empty mask */
inline batch_add(bc, bu, c, s)
{
	if
	:: c != 0 -> bc = bc | c; bu = NEWER(bu, s)
	:: else -> skip
	fi
}

/* luf_batch_fold() */
inline batch_fold(dc, du, sc, su)
{
	if
	:: su != 0 -> dc = dc | sc; du = NEWER(du, su)
	:: else -> skip
	fi
}

/*
 * luf_batch_check_done(): done at once if the summary is not before the
 * set's ugen (@all; the group's test is the same value here), else the
 * counters of the set's CPUs
 */
inline check_done(bc, bu, res)
{
	res = 1;
	if
	:: bu != 0 && SUM_BEHIND(bu) ->
		for (li : 0 .. NCPU - 1) {
			if
			:: HAS(bc, li) && !CPU_DONE(li, bu) -> res = 0
			:: else -> skip
			fi
		}
		li = 0
	:: else -> skip
	fi
}

/*
 * luf_batch_diet(): every CPU dropped at once if the summary is not
 * before the set's ugen, else those whose counters are not
 */
inline diet(bc, bu)
{
	if
	:: bu != 0 && !SUM_BEHIND(bu) -> bc = 0; bu = 0
	:: bu != 0 && SUM_BEHIND(bu) ->
		for (li : 0 .. NCPU - 1) {
			if
			:: HAS(bc, li) && CPU_DONE(li, bu) -> bc = bc & ~BIT(li)
			:: else -> skip
			fi
		}
		li = 0;
		if
		:: bc == 0 -> bu = 0
		:: else -> skip
		fi
	:: else -> skip
	fi
}

/* ------------------------------------------ ugen.h, done.h, flush.h */

/*
 * The relaxed load of __luf_done_mark_cpu() for the first CPU of bc at or
 * after mi; mi == NCPU when none is left (the mark is complete).
 */
inline next_cpu(bc)
{
	do
	:: mi < NCPU && !HAS(bc, mi) -> mi++
	:: else -> break
	od;
	if
	:: mi < NCPU -> hold[me] = done[mi]
	:: else -> hold[me] = 0; hsnap[me] = 0
	fi
}

/* low of __luf_done_mark(): the oldest value a raise of done replaced */
#if SUM
#define LOW(w) ((hmin[me] == 0 || LUF_BEFORE(w, hmin[me])) -> (w) : hmin[me])
#else
#define LOW(w) 0
#endif

/*
 * __luf_done_mark() of bc to hsnap[me], from the load next_cpu() did: CAS;
 * if another flusher changed done since the load, the CAS fails and loads
 * the new value; stop at a CPU once done is not before the snapshot. The
 * oldest value replaced is kept in hmin[me] for sum_after().
 */
inline mark_loop(bc)
{
	do
#if defined(MUTANT_MARK_STORE)
	:: atomic {	/* a plain store of the snapshot, no compare-and-swap */
		mi < NCPU ->
		assert(!BEFORE(hsnap[me], done[mi])); /* S4: done never moves back */
		if
		:: LUF_BEFORE(done[mi], hsnap[me]) -> hmin[me] = LOW(done[mi])
		:: else -> skip
		fi;
		done[mi] = hsnap[me];
		mi++;
		next_cpu(bc)
	   }
#else
	:: atomic {
		mi < NCPU && LUF_BEFORE(hold[me], hsnap[me]) && done[mi] == hold[me] ->
		assert(!BEFORE(hsnap[me], done[mi])); /* S4: done never moves back */
		hmin[me] = LOW(hold[me]);
		done[mi] = hsnap[me];
		mi++;
		next_cpu(bc)
	   }
	:: atomic {
		mi < NCPU && LUF_BEFORE(hold[me], hsnap[me]) && done[mi] != hold[me] ->
		hold[me] = done[mi]	/* the CAS failed: another flusher raced */
	   }
	:: atomic {
		mi < NCPU && !LUF_BEFORE(hold[me], hsnap[me]) ->
		mi++;
		next_cpu(bc)
	   }
#endif
	:: mi >= NCPU -> break
	od;
	mi = 0
}

/*
 * __luf_done_sum_after() after a mark whose oldest replaced value is
 * hmin[me] (0: it raised no counter): unless the summary is before that
 * value (another CPU holds it back), __luf_done_sum_group() recomputes it.
 * The summary is @all and the one group at once: __luf_done_sum_all() (the
 * minimum of one group) and the lag hint are not modelled.
 *
 * SUM 2, as in C, a step per shared access:
 *   read the summary: recompute (sr = 1) or not (sr = 0);
 *   sr 1  read the counters, one load each, for their minimum and the CPUs
 *         holding it (hd); the last load also loads the summary for the
 *         CAS (a stale load only makes the CAS fail once more);
 *   sr 2  __luf_done_raise(): CAS the summary to the minimum while it is
 *         before it; a failed CAS loads the new value; done as soon as the
 *         summary is not before the minimum (another flusher published);
 *   sr 3  after a raise, read the holders again (one step: only reads,
 *         and only the summary's freshness depends on them): go round if
 *         one of them moved.
 * SUM 1, the same as one step: the summary read, the counters read and
 * the CAS at the instant of C's CAS. That is the worst case of every C
 * interleaving: C reads the summary and the counters earlier, so it
 * recomputes no more often and writes no newer minimum (they only move
 * forward), and a check that reads the summary sees it no older. What C
 * has on top are only older, staler writes, and the second round: with
 * one step a holder raised later was raised by a flusher that finds the
 * summary at its old value and recomputes itself.
 */
inline sum_after()
{
#if SUM == 0
	skip
#elif SUM == 2
	atomic {
		sr = ((hmin[me] != 0 && !LUF_BEFORE(sum, hmin[me])) -> 1 : 0);
		hmin[me] = 0
	};
	do
	:: atomic {
		sr == 1 ->
		if
		:: hd == 0 || LUF_BEFORE(done[mi], hmin[me]) -> hmin[me] = done[mi]; hd = BIT(mi)
		:: else ->
			if
			:: done[mi] == hmin[me] -> hd = hd | BIT(mi)
			:: else -> skip
			fi
		fi;
		mi++;
		if
		:: mi == NCPU -> mi = 0; hold[me] = sum; sr = 2
		:: else -> skip
		fi
	   }
	:: atomic {
		sr == 2 && LUF_BEFORE(hold[me], hmin[me]) && sum == hold[me] ->
		assert(SUM_OK(hmin[me])); /* S1: the summary never runs ahead of done */
		sum = hmin[me];
		hold[me] = 0;
		sr = 3
	   }
	:: atomic {
		sr == 2 && LUF_BEFORE(hold[me], hmin[me]) && sum != hold[me] ->
		hold[me] = sum	/* the CAS failed: another flusher raised it */
	   }
	:: atomic {
		sr == 2 && !LUF_BEFORE(hold[me], hmin[me]) ->
		hold[me] = 0; hmin[me] = 0; hd = 0; sr = 0
	   }
	:: atomic {
		sr == 3 ->
		for (li : 0 .. NCPU - 1) {
			if
			:: HAS(hd, li) && done[li] != hmin[me] -> sr = 1
			:: else -> skip
			fi
		}
		li = 0;
		hmin[me] = 0;
		hd = 0;
		if
		:: sr == 3 -> sr = 0
		:: else -> skip
		fi
	   }
	:: sr == 0 -> break
	od
#else
	atomic {
		if
		:: hmin[me] != 0 && !LUF_BEFORE(sum, hmin[me]) ->
			hmin[me] = done[0];
			for (li : 1 .. NCPU - 1) {
				if
				:: LUF_BEFORE(done[li], hmin[me]) -> hmin[me] = done[li]
				:: else -> skip
				fi
			}
			li = 0;
			if
			:: LUF_BEFORE(sum, hmin[me]) ->
				assert(SUM_OK(hmin[me])); /* S1: the summary never runs ahead of done */
				sum = hmin[me]
			:: else -> skip
			fi
		:: else -> skip
		fi;
		hmin[me] = 0
	}
#endif
}

/* ops->flush of bc succeeds (clear the TLBs, begin the mark) or fails */
inline flush_now(bc, ret)
{
	if
	:: hsnap[me] != 0 && ret == EOK ->
		for (li : 0 .. NCPU - 1) {
			if
			:: HAS(bc, li) -> tlb[li] = 0
			:: else -> skip
			fi
		}
		li = 0;
		mi = 0;
		next_cpu(bc)
	:: hsnap[me] != 0 && ret != EOK ->	/* failed: no mark */
		hsnap[me] = 0;
		mi = NCPU
	:: else -> skip
	fi
}

/*
 * One add of luf_ugen_new() into hsnap[me]. Unless the add gave 0 (the
 * second add follows), ops->flush of bc happens in the same step (see
 * "Steps"; flush_now) and on success the mark begins. If the add would
 * break the bound the run is cut and this process stops. fb: called from
 * luf_flush_batch() (1) rather than for a local flush (0).
 */
inline snap_add(bc, ret, fb)
{
	atomic {
		nxt = (cur + 1) & UMASK;
		if
		:: BOUND_OK(nxt) ->
			assert(!(hzero[me] && nxt == 0)); /* S4: never hands out 0 */
			cur = nxt;
			hsnap[me] = nxt;
			hzero[me] = (nxt == 0 -> 1 : 0);
#if defined(MUTANT_SUM_AHEAD)
			if
			:: fb && nxt != 0 ->	/* the summary claims the flush first
						 * (no SUM_OK here: see Mutants) */
				if
				:: LUF_BEFORE(sum, nxt) -> sum = nxt
				:: else -> skip
				fi
			:: else -> flush_now(bc, ret)
			fi
#elif !defined(MUTANT_MARK_BEFORE_FLUSH)
			flush_now(bc, ret)
#endif
		:: else -> cut = 1; cutme = 1
		fi;
		nxt = 0
	};
	if
	:: cutme -> goto cut_out
	:: else -> skip
	fi
}

/* luf_ugen_new() (+ ops->flush, see snap_add) */
inline take_snap(bc, ret, fb)
{
	snap_add(bc, ret, fb);
	if
	:: hzero[me] -> snap_add(bc, ret, fb)
	:: else -> skip
	fi
}

/* ops->flush() outcome, chosen before the flush (a local choice) */
inline flush_outcome(ret)
{
#if defined(LIVENESS)
	if
	:: ret = EOK; lastfail = 0
	:: !lastfail -> ret = EIO; lastfail = 1
	fi
#else
	if
	:: ret = EOK
	:: ret = EIO
	fi
#endif
}

/*
 * luf_flush_batch() from step 3, for a batch (bc, bu) this CPU owns that
 * its caller has just dieted (step 1) and found not empty (step 2). On
 * success the caller clears the batch in its next step.
 */
inline flush_rest(bc, bu, ret)
{
	flush_outcome(ret);
	take_snap(bc, ret, 1);
#if defined(MUTANT_MARK_BEFORE_FLUSH)
	/* marks done before ops->flush has returned, and whatever it returns */
	atomic { mi = 0; next_cpu(bc) };
	mark_loop(bc);
	sum_after();
	atomic {
		if
		:: ret == EOK ->
			for (li : 0 .. NCPU - 1) {
				if
				:: HAS(bc, li) -> tlb[li] = 0
				:: else -> skip
				fi
			}
			li = 0
		:: else -> skip
		fi
	}
#elif defined(MUTANT_SUM_AHEAD)
	/* the summary was raised with the snapshot; ops->flush only now */
	atomic { flush_now(bc, ret) };
	mark_loop(bc);
	sum_after()
#else
	mark_loop(bc);
	sum_after()
#endif
}

/* -------------------------------------------- keytab.h, shared.h, pcpu.h */

/* luf_pcpu_flush_open(): fold the open set into this CPU's key */
inline flush_open()
{
	if
	:: ougen[me] != 0 ->
		if
		:: pkey[me] == 0 ->	/* luf_keytab_new_key() */
			knext = (knext + 1) % NKEY;
			pkey[me] = knext + 1
		:: else -> skip
		fi;
		/* __luf_keytab_fold(): diet, then fold */
		diet(kcpus[pkey[me] - 1], kugen[pkey[me] - 1]);
		batch_fold(kcpus[pkey[me] - 1], kugen[pkey[me] - 1], ocpus[me], ougen[me]);
		if	/* the write bumped the seqcount */
		:: ckey == pkey[me] -> ckey = 0; cdone = 0
		:: else -> skip
		fi;
		ocpus[me] = 0;
		ougen[me] = 0;
		onr[me] = 0
	:: else -> skip	/* empty: returns at once, nr_open kept (as in C) */
	fi
}

/* luf_abort_key(k) -> luf_key_flush() -> luf_shared_flush() */
inline abort_key(k, ret)
{
	ret = EOK;
#if !defined(MUTANT_NO_ABORT)
	atomic {
		r = 0;
		if
		:: k != 0 ->
			check_done(kcpus[k - 1], kugen[k - 1], r);
			r = !r;
			if
			:: r ->		/* owed: fold the open set, copy, diet */
				flush_open();
				ccpus[me] = kcpus[k - 1];
				cugen[me] = kugen[k - 1];
				diet(ccpus[me], cugen[me])
			:: else -> skip
			fi
		:: else -> skip
		fi
	};
	if
	:: r ->
		if
		:: cugen[me] != 0 -> flush_rest(ccpus[me], cugen[me], ret)
		:: else -> skip
		fi;
		atomic {
			if
			:: ret == EOK ->	/* diet the shared set under its lock */
				diet(kcpus[k - 1], kugen[k - 1]);
				if
				:: ckey == k -> ckey = 0; cdone = 0
				:: else -> skip
				fi
			:: else -> skip
			fi;
			ccpus[me] = 0;
			cugen[me] = 0;
			r = 0
		}
	:: else -> skip
	fi
#endif
}

/* ----------------------------------------------------------- freelist.h */

/* luf_free_at() under the list lock: one step (it reads a snapshot) */
inline free_at(f, k)
{
	atomic {
		fl_lock == 0 ->
		r = 1;
		if
		:: k != 0 && k == ckey -> r = cdone	/* cache hit: same seqcount */
		:: k != 0 && k != ckey ->
			check_done(kcpus[k - 1], kugen[k - 1], r);
			if
			:: !r -> batch_fold(pcpus, pugen, kcpus[k - 1], kugen[k - 1])
			:: else -> skip
			fi;
			ckey = k;
			cdone = r
		:: else -> skip
		fi;
		fst[f] = (r -> FS_CLEAN : FS_PEND);
		fkey[f] = (r -> 0 : k);
		unm[me] = unm[me] & ~BIT(f);
		r = 0
	}
}

/* luf_freelist_release_pend() */
inline release_pend()
{
	for (li : 0 .. NFOLIO - 1) {
		if
		:: fst[li] == FS_PEND -> fst[li] = FS_CLEAN; fkey[li] = 0
		:: else -> skip
		fi
	}
	li = 0;
	pcpus = 0;
	pugen = 0;
	ppart = 0;
	ckey = 0;
	cdone = 0
}

/* pend folio g to clean if its key's set is done now, or keep it (rd) */
inline release_one(g)
{
	if
	:: fst[g] == FS_PEND ->
		check_done(kcpus[fkey[g] - 1], kugen[fkey[g] - 1], rd);
		if
		:: rd -> fst[g] = FS_CLEAN; fkey[g] = 0; r = 1
		:: skip
		fi;
		rd = 0
	:: else -> skip
	fi
}

/*
 * luf_freelist_release_done(): pend folios whose key's set is done now
 * move to clean, no flush, the pend set left as it is (it covers more).
 * C releases the longest such prefix of the FIFO pend list; the model's
 * lists have no order, so any subset of them, none included (more
 * behaviours). r = 1 if any moved.
 */
inline release_done()
{
	release_one(0);
#if NFOLIO > 1
	release_one(1);
#endif
#if NFOLIO > 2
	release_one(2);
#endif
	if
	:: r -> ppart = 1
	:: else -> skip
	fi
}

/* luf_freelist_rebuild_pend_set(): the union of the keys still pend */
inline rebuild_pend()
{
	pcpus = 0;
	pugen = 0;
	for (li : 0 .. NFOLIO - 1) {
		if
		:: fst[li] == FS_PEND ->
			batch_fold(pcpus, pugen, kcpus[fkey[li] - 1], kugen[fkey[li] - 1])
		:: else -> skip
		fi
	}
	li = 0;
	ppart = 0;
	ckey = 0;
	cdone = 0
}

/*
 * luf_alloc_at() up to the flush, with luf_freelist_refill(): ret = EOK (a
 * clean folio can be taken), ENOMEM, EAGAIN, or NEED (the pend set,
 * rebuilt if a prefix left and dieted, still needs a flush).
 */
inline alloc_begin(flags, ret)
{
	ret = EOK;
	if
	:: NSTATE(FS_CLEAN) > (flags -> RESERVE : 0) -> skip
	:: else ->
		if
		:: NSTATE(FS_PEND) == 0 -> ret = ENOMEM
		:: else ->
			check_done(pcpus, pugen, r);
			if
			:: r -> release_pend()
			:: else ->
				release_done();
				if
				:: r -> skip	/* released a prefix */
				:: else ->
#if defined(MUTANT_NO_PROGRESS)
					ret = EAGAIN
#else
					if
					:: !flags -> ret = EAGAIN
					:: else ->
						if
						:: ppart -> rebuild_pend()
						:: else -> skip
						fi;
						/* luf_flush_batch(): diet first */
						diet(pcpus, pugen);
						if
						:: pugen == 0 -> release_pend()	/* skipped */
						:: else -> ret = NEED
						fi
					fi
#endif
				fi
			fi;
			r = 0
		fi
	fi
}

/* hand out a clean folio (under the lock), map it and write it */
inline handout()
{
	if
	:: fst[0] == FS_CLEAN -> f = 0
#if NFOLIO > 1
	:: fst[1] == FS_CLEAN -> f = 1
#endif
#if NFOLIO > 2
	:: fst[2] == FS_CLEAN -> f = 2
#endif
	fi;
#if defined(STRICT_RESERVE)
	assert(!flags || NSTATE(FS_CLEAN) > RESERVE);
#endif
	assert(NO_TLB(f)); /* S1: no CPU still caches it */
	fst[f] = FS_MAPPED;
	f = 0
}

/* the end of an allocation: L1 checks, unlock */
inline alloc_end()
{
	assert(!flags || ret != EAGAIN); /* L1: a caller that may flush */
	assert(!flags || ret != ENOMEM || NSTATE(FS_PEND) == 0); /* L1 */
	if
	:: me == 0 -> want0 = 0
	:: else -> skip
	fi;
	fl_lock = 0;
	flags = 0;
	ret = 0
}

/*
 * luf_alloc_at() failed. With LIVENESS the caller of an allocation that
 * may flush retries under its lock while pend folios exist (L1 is about
 * that caller); otherwise it may retry after a failed flush, or give up.
 */
inline alloc_fail()
{
#if defined(LIVENESS)
	if
	:: flags && NSTATE(FS_PEND) > 0 -> ret = RETRY
	:: else -> alloc_end()
	fi
#else
	if
	:: ret == EIO -> ret = RETRY
	:: alloc_end()
	fi
#endif
}

/* ------------------------------------------------------------ processes */

proctype Cpu(byte me)
{
	byte f, k, flags, ret, li, mi, nxt, sr, hd;
	bit r, rd, cutme;
#if defined(LIVENESS)
	bit lastfail;	/* this CPU's previous flush failed */
#endif

end_idle:
	do
	:: /* unmap: clear the PTE of a mapped folio */
		atomic {
			!cut && ANY_MAPPED ->
			if
			:: fst[0] == FS_MAPPED -> f = 0
#if NFOLIO > 1
			:: fst[1] == FS_MAPPED -> f = 1
#endif
#if NFOLIO > 2
			:: fst[2] == FS_MAPPED -> f = 2
#endif
			fi;
			fst[f] = FS_UNMAPPED;
			unm[me] = unm[me] | BIT(f);
			/* the CPUs that cached it: mm, all stale now */
			JOIN(0);
			JOIN(1);
#if NCPU > 2
			JOIN(2);
#endif
			for (li : 0 .. NCPU - 1) {
				if
				:: HAS(mm, li) -> tlb[li] = tlb[li] | BIT(f)
				:: else -> skip
				fi
			}
			li = 0;
			f = 0
		};
		/* luf_pcpu_defer(): stamp (reads the counter), add to the open
		 * set, and at the threshold luf_pcpu_flush_open() */
		atomic {
			batch_add(ocpus[me], ougen[me], mm, STAMP_OF(cur));
			if
			:: onr[me] < THRESH -> onr[me]++
			:: else -> skip
			fi;
			if
			:: onr[me] >= THRESH -> flush_open()
			:: else -> skip
			fi
		}

	:: /* luf_pcpu_fold(), then free the batch's folios with its key */
		atomic {
			!cut && unm[me] != 0 ->
			flush_open();
			k = pkey[me];
			pkey[me] = 0
		};
		do
		:: unm[me] != 0 ->
			f = (HAS(unm[me], 0) -> 0 : (HAS(unm[me], 1) -> 1 : 2));
			if
			:: INIT_ON_FREE ->	/* abort the deferral, then write */
				abort_key(k, ret);
				if
				:: ret == EOK -> assert(NO_TLB(f)) /* S2 */
				:: else -> skip	/* still owed: must not write */
				fi;
				ret = 0
			:: skip
			fi;
			free_at(f, k);
			f = 0
		:: else -> break
		od;
		k = 0

	:: /* allocate (flags 0 or LUF_ALLOC_MAY_FLUSH), then map and write */
		!cut && ANY_FREE ->
		if
		:: flags = 0
		:: flags = 1
		fi;
retry:
		atomic {
			(fl_lock == 0 || fl_lock == me + 1) ->	/* held on a retry */
			fl_lock = me + 1;
			if
			:: me == 0 && flags && NSTATE(FS_PEND) > 0 -> want0 = 1
			:: else -> skip
			fi;
			alloc_begin(flags, ret);
			if
			:: ret == EOK -> handout(); alloc_end()
			:: ret == NEED -> skip
			:: else -> alloc_fail()
			fi
		};
		if
		:: ret == NEED ->
			flush_rest(pcpus, pugen, ret);
			atomic {
				if
				:: ret == EOK -> release_pend(); handout(); alloc_end()
				:: else -> alloc_fail()
				fi
			}
		:: else -> skip
		fi;
		if
		:: ret == RETRY -> goto retry
		:: else -> skip
		fi

	:: /* context switch: a full local flush, luf_local_flush_begin/end */
		!cut && BOUND_OK(NEWCUR) ->
		ret = EOK;
		take_snap(BIT(me), ret, 0);
		mark_loop(BIT(me));
		sum_after()
	od;

cut_out:
	/* the run left the wrap assumption: stop here, free the list */
	if
	:: fl_lock == me + 1 -> fl_lock = 0
	:: else -> skip
	fi
}

init {
	atomic {
		run Cpu(0);
		run Cpu(1);
#if NCPU > 2
		run Cpu(2);
#endif
	}
}

#if defined(LIVENESS)
/* L1: a MAY_FLUSH allocation started while pend folios exist succeeds */
ltl l1 { [] (want0 -> <> (!want0 || cut)) }
#endif
