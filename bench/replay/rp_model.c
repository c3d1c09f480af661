// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/replay/rp_model.c - tasks, address spaces and the calls that
 * change them, turned into removal / reuse / upgrade / batch-end steps.
 *
 * Tasks are placed on CPUs round-robin in the order they appear. A clone
 * with CLONE_VM (a thread, or vfork) shares its parent's address space;
 * one without copies the parent's mappings into a new one (fork); execve
 * gives the task a fresh one. A pid seen before any call created it is the
 * child of a clone-family call still in flight ("<unfinished ...>") if
 * there is one. Else it depends on whether the trace has shown process
 * events (clone, fork, vfork, execve, exit, exit_group calls) so far:
 *   - none: it was captured without `-e trace=process`, so nothing tells
 *     a thread from a process; the pid is read as a separate process with
 *     its own address space (reading 20 processes as threads of one would
 *     invent remote flushes), counted in st.unparented and warned about;
 *   - some: the pid was already running when strace attached (`strace -p`
 *     of a threaded process): a thread of the first task (st.orphans).
 * The "+++ exited +++" lines are not process events: strace prints them
 * whatever -e trace says.
 */
#include <stdlib.h>
#include <string.h>

#include "rp_model.h"

#define RP_HASH 4096u

static unsigned long pgup(unsigned long x)
{
	return (x + RP_PAGE - 1) & ~(RP_PAGE - 1);
}

static struct rp_mm *mm_new(struct rp_model *m)
{
	struct rp_mm *mm = calloc(1, sizeof(*mm));

	if (!mm)
		return NULL;
	rp_ivmap_init(&mm->vmas, sizeof(unsigned long));
	rp_ivmap_init(&mm->stale, sizeof(struct luf_cmp_rec));
	mm->dom = luf_cmp_dom_new(m->cmp);
	if (mm->dom < 0) {
		free(mm);
		return NULL;
	}
	mm->id = ++m->next_mm;
	m->st.mms++;
	m->live_mms++;
	return mm;
}

static void mm_put(struct rp_model *m, struct rp_mm *mm)
{
	if (--mm->refs > 0)
		return;
	/* teardown: the same for every policy, not counted (README: model) */
	rp_ivmap_free(&mm->vmas);
	rp_ivmap_free(&mm->stale);
	luf_cmp_dom_put(m->cmp, mm->dom);
	free(mm);
	m->live_mms--;
}

static struct rp_mm *mm_fork(struct rp_model *m, const struct rp_mm *parent)
{
	struct rp_mm *mm = mm_new(m);

	if (!mm)
		return NULL;
	if (parent->vmas.n) {
		mm->vmas.a = malloc(parent->vmas.n * parent->vmas.stride);
		if (!mm->vmas.a) {
			mm->refs = 1;
			mm_put(m, mm);
			return NULL;
		}
		memcpy(mm->vmas.a, parent->vmas.a, parent->vmas.n * parent->vmas.stride);
		mm->vmas.n = mm->vmas.cap = parent->vmas.n;
	}
	mm->brk = parent->brk;
	return mm;
}

static struct rp_task **slot(struct rp_model *m, long pid)
{
	return &m->hash[(unsigned long)pid & (m->hash_size - 1)];
}

static struct rp_task *task_find(struct rp_model *m, long pid)
{
	struct rp_task *t;

	for (t = *slot(m, pid); t; t = t->next)
		if (t->pid == pid)
			return t;
	return NULL;
}

static struct rp_task *task_new(struct rp_model *m, long pid, struct rp_mm *mm)
{
	struct rp_task *t = calloc(1, sizeof(*t));
	struct rp_task **s = slot(m, pid);

	if (!t)
		return NULL;
	if (luf_cmp_task_init(m->cmp, &t->ct, (unsigned int)(m->next_cpu++ % m->nr_cpus)) ||
	    luf_cmp_dom_add_cpu(m->cmp, mm->dom, t->ct.cpu)) {
		if (t->ct.imm.bits)
			luf_cmp_task_fini(m->cmp, &t->ct);
		free(t);
		return NULL;
	}
	t->pid = pid;
	t->mm = mm;
	mm->refs++;
	t->next = *s;
	*s = t;
	m->st.tasks++;
	if (!m->root)
		m->root = t;
	return t;
}

static void task_unlink(struct rp_model *m, struct rp_task *t)
{
	struct rp_task **s = slot(m, t->pid);

	while (*s != t)
		s = &(*s)->next;
	*s = t->next;
}

static void rp_batch_end(struct rp_model *m, struct rp_task *t);

static int task_open(const struct rp_task *t)
{
	return t->in_unmap_run || t->ct.open;
}

static void task_del(struct rp_model *m, struct rp_task *t)
{
	if (task_open(t))
		rp_batch_end(m, t);
	task_unlink(m, t);
	if (m->root == t)
		m->root = NULL; /* later orphans start a new address space */
	mm_put(m, t->mm);
	luf_cmp_task_fini(m->cmp, &t->ct);
	free(t);
}

/* A task whose clone-family call is in flight, to adopt an unknown pid. */
static struct rp_task *pending_parent(struct rp_model *m)
{
	for (size_t b = 0; b < m->hash_size; b++)
		for (struct rp_task *t = m->hash[b]; t; t = t->next)
			if (t->clone_pending)
				return t;
	return NULL;
}

static struct rp_task *task_child(struct rp_model *m, struct rp_task *parent, long pid,
				  unsigned long flags)
{
	struct rp_mm *mm = (flags & RP_CLONE_VM) ? parent->mm : mm_fork(m, parent->mm);
	struct rp_task *t;

	if (!mm)
		return NULL;
	t = task_new(m, pid, mm);
	if (!t && !(flags & RP_CLONE_VM)) {
		mm->refs = 1;
		mm_put(m, mm);
	}
	m->st.clones++;
	return t;
}

static struct rp_task *task_get(struct rp_model *m, long pid)
{
	struct rp_task *t = task_find(m, pid), *p;
	struct rp_mm *mm;

	if (t)
		return t;
	p = m->st.clones || m->st.tasks ? pending_parent(m) : NULL;
	if (p) {
		p->clone_pending = 0;
		p->clone_child = pid;
		return task_child(m, p, pid, p->clone_flags);
	}
	if (m->root && m->st.proc_events) { /* attached: a thread of the first task */
		m->st.orphans++;
		return task_new(m, pid, m->root->mm);
	}
	if (m->st.tasks && !m->st.proc_events) /* no process events yet: a process */
		m->st.unparented++;
	mm = mm_new(m);
	if (!mm)
		return NULL;
	t = task_new(m, pid, mm);
	if (!t) {
		mm->refs = 1;
		mm_put(m, mm);
	}
	return t;
}

/* ---- the steps: calls into the policy simulator ---------------------- */

/* Drop stale ranges no policy and no bound still owes (only when there are many). */
static void stale_gc(struct rp_model *m, struct rp_mm *mm)
{
	size_t k = 0;

	for (size_t i = 0; i < mm->stale.n; i++) {
		struct rp_iv *iv = rp_iv_at(&mm->stale, i);

		if (luf_cmp_rec_live(m->cmp, rp_iv_val(iv))) {
			if (k != i)
				memcpy(rp_iv_at(&mm->stale, k), iv, mm->stale.stride);
			k++;
		}
	}
	mm->stale.n = k;
	mm->stale_gc = k;
}

/* Translations of [start, end) with protection @prot go (@force: as if writable). */
static int rp_removal(struct rp_model *m, struct rp_task *t, unsigned long start, unsigned long end,
		      unsigned long prot, int force)
{
	struct rp_mm *mm = t->mm;
	int accessible = (prot & (RP_PROT_READ | RP_PROT_WRITE | RP_PROT_EXEC)) != 0;
	unsigned int pte = accessible ? LUF_PTE_ACCESSIBLE : 0;
	struct luf_cmp_rec rec;
	size_t i, j;

	if (start >= end)
		return 0;
	m->st.removals++;
	if (accessible && ((prot & RP_PROT_WRITE) || force))
		pte |= LUF_PTE_WRITABLE | LUF_PTE_DIRTY;
	if (luf_cmp_remove(m->cmp, &t->ct, mm->dom, -1, pte, (end - start) / RP_PAGE, &rec))
		return -1;
	if (!accessible)
		return 0; /* inaccessible: nothing cached, nothing owed */
	/* the newest record covers the older ones of the range (the mask only grows) */
	if (rp_ivmap_cut(&mm->stale, start, end, &i, &j))
		return -1;
	rp_ivmap_erase(&mm->stale, i, j);
	if (!rp_ivmap_insert(&mm->stale, i, start, end, &rec))
		return -1;
	if (mm->stale.n > m->st.peak_stale)
		m->st.peak_stale = mm->stale.n;
	if (mm->stale.n > 65536 && mm->stale.n > 2 * mm->stale_gc)
		stale_gc(m, mm);
	return 0;
}

static void rp_removals_done(struct rp_model *m, struct rp_task *t)
{
	luf_cmp_call_end(m->cmp, &t->ct);
}

/*
 * batched, B3: zap_pte_range() (munmap, madvise, mmap over a mapping, brk
 * shrink), change_pte_range() (mprotect) and move_ptes() (mremap) call
 * flush_tlb_batched_pending() before changing the mm's entries.
 */
static void rp_pending(struct rp_model *m, struct rp_task *t)
{
	luf_cmp_pending(m->cmp, &t->ct, t->mm->dom);
}

/* [start, end) is handed out again (@upgrade: write permission granted). */
static int rp_reuse(struct rp_model *m, struct rp_task *t, unsigned long start, unsigned long end,
		    int upgrade)
{
	struct rp_mm *mm = t->mm;
	size_t i = rp_ivmap_lower(&mm->stale, start), j, n = 0;
	int ret;

	for (j = i; j < mm->stale.n && rp_iv_at(&mm->stale, j)->start < end; j++) {
		if (n == m->cap_recs) {
			size_t cap = m->cap_recs ? 2 * m->cap_recs : 64;
			struct luf_cmp_rec *r = realloc(m->recs, cap * sizeof(*r));

			if (!r)
				return -1;
			m->recs = r;
			m->cap_recs = cap;
		}
		m->recs[n++] = *(struct luf_cmp_rec *)rp_iv_val(rp_iv_at(&mm->stale, j));
	}
	if (upgrade)
		m->st.upgrade_points++;
	else if (n)
		m->st.reuse_points++;
	if (upgrade)
		ret = luf_cmp_upgrade(m->cmp, &t->ct, mm->dom, m->recs, n, LUF_ABORT_PROT_UPGRADE);
	else
		ret = luf_cmp_reuse(m->cmp, &t->ct, mm->dom, m->recs, n);
	if (ret || !n)
		return ret ? -1 : 0;
	/* settled (or reported): the range starts over */
	if (rp_ivmap_cut(&mm->stale, start, end, &i, &j))
		return -1;
	rp_ivmap_erase(&mm->stale, i, j);
	return 0;
}

static void rp_batch_end(struct rp_model *m, struct rp_task *t)
{
	m->st.batch_ends++;
	luf_cmp_batch_end(m->cmp, &t->ct);
	t->in_unmap_run = 0;
}

/* Remove the translations of the mappings in [start, end); erase them if @unmap. */
static int vma_remove(struct rp_model *m, struct rp_task *t, unsigned long start, unsigned long end,
		      int force, int unmap)
{
	struct rp_ivmap *v = &t->mm->vmas;
	size_t i, j;

	if (rp_ivmap_cut(v, start, end, &i, &j))
		return -1;
	if (j > i)
		rp_pending(m, t);
	for (size_t k = i; k < j; k++) {
		struct rp_iv *iv = rp_iv_at(v, k);

		if (rp_removal(m, t, iv->start, iv->end, *(unsigned long *)rp_iv_val(iv), force))
			return -1;
	}
	if (unmap)
		rp_ivmap_erase(v, i, j);
	return 0;
}

static int vma_insert(struct rp_model *m, struct rp_mm *mm, unsigned long start, unsigned long end,
		      unsigned long prot)
{
	struct rp_ivmap *v = &mm->vmas;
	size_t i, j;
	struct rp_iv *iv;

	prot &= RP_PROT_READ | RP_PROT_WRITE | RP_PROT_EXEC;
	if (rp_ivmap_cut(v, start, end, &i, &j))
		return -1;
	rp_ivmap_erase(v, i, j);
	if (i > 0 && (iv = rp_iv_at(v, i - 1))->end == start &&
	    *(unsigned long *)rp_iv_val(iv) == prot) {
		iv->end = end; /* grows the neighbour (brk, stacks) */
	} else if (!rp_ivmap_insert(v, i, start, end, &prot)) {
		return -1;
	}
	if (v->n > m->st.peak_vmas)
		m->st.peak_vmas = v->n;
	return 0;
}

static unsigned long vma_prot(struct rp_mm *mm, unsigned long addr)
{
	size_t i = rp_ivmap_lower(&mm->vmas, addr);
	struct rp_iv *iv;

	if (i == mm->vmas.n || (iv = rp_iv_at(&mm->vmas, i))->start > addr)
		return RP_PROT_READ | RP_PROT_WRITE;
	return *(unsigned long *)rp_iv_val(iv);
}

static int do_mprotect(struct rp_model *m, struct rp_task *t, unsigned long start,
		       unsigned long end, unsigned long prot)
{
	struct rp_ivmap *v = &t->mm->vmas;
	int upgrade = 0;
	size_t i, j;

	prot &= RP_PROT_READ | RP_PROT_WRITE | RP_PROT_EXEC;
	if (rp_ivmap_cut(v, start, end, &i, &j))
		return -1;
	if (j > i)
		rp_pending(m, t);
	for (size_t k = i; k < j; k++) {
		struct rp_iv *iv = rp_iv_at(v, k);
		unsigned long *old = rp_iv_val(iv);

		if (*old & ~prot) /* a right is lost: the old translation goes */
			if (rp_removal(m, t, iv->start, iv->end, *old, 0))
				return -1;
		if ((prot & RP_PROT_WRITE) && !(*old & RP_PROT_WRITE))
			upgrade = 1;
		*old = prot;
	}
	rp_removals_done(m, t);
	return upgrade ? rp_reuse(m, t, start, end, 1) : 0;
}

static int do_mremap(struct rp_model *m, struct rp_task *t, const struct rp_event *ev)
{
	unsigned long old = ev->arg[0], osz = pgup(ev->arg[1]), nsz = pgup(ev->arg[2]);
	unsigned long to = (unsigned long)ev->ret, prot = vma_prot(t->mm, old);

	if (to == old) {
		if (nsz < osz) {
			if (vma_remove(m, t, old + nsz, old + osz, 0, 1))
				return -1;
			rp_removals_done(m, t);
		} else if (nsz > osz) {
			if (rp_reuse(m, t, old + osz, old + nsz, 0) ||
			    vma_insert(m, t->mm, old + osz, old + nsz, prot))
				return -1;
		}
		return 0;
	}
	/* moved: the old translations go now (their frames live on: no deferral) */
	if (vma_remove(m, t, old, old + osz, 1, !(ev->arg[3] & RP_MREMAP_DONTUNMAP)) ||
	    vma_remove(m, t, to, to + nsz, 0, 1))
		return -1;
	rp_removals_done(m, t);
	if (rp_reuse(m, t, to, to + nsz, 0))
		return -1;
	return vma_insert(m, t->mm, to, to + nsz, prot);
}

static int madv_removes(unsigned long adv)
{
	return adv == RP_MADV_DONTNEED || adv == RP_MADV_DONTNEED_LOCKED || adv == RP_MADV_FREE ||
	       adv == RP_MADV_REMOVE || adv == RP_MADV_PAGEOUT;
}

static int do_call(struct rp_model *m, struct rp_task *t, const struct rp_event *ev)
{
	unsigned long a0 = ev->arg[0], ret = (unsigned long)ev->ret, end;
	struct rp_mm *mm = t->mm;

	switch (ev->sys) {
	case RP_SYS_MMAP:
		end = ret + pgup(ev->arg[1]);
		if (vma_remove(m, t, ret, end, 0, 1))
			return -1;
		rp_removals_done(m, t);
		if (rp_reuse(m, t, ret, end, 0))
			return -1;
		return vma_insert(m, mm, ret, end, ev->arg[2]);
	case RP_SYS_MUNMAP:
		if (vma_remove(m, t, a0, a0 + pgup(ev->arg[1]), 0, 1))
			return -1;
		rp_removals_done(m, t);
		return 0;
	case RP_SYS_MPROTECT:
	case RP_SYS_PKEY_MPROTECT:
		return do_mprotect(m, t, a0, a0 + pgup(ev->arg[1]), ev->arg[2]);
	case RP_SYS_MADVISE:
		if (madv_removes(ev->arg[2])) {
			if (vma_remove(m, t, a0, a0 + pgup(ev->arg[1]), 0, 0))
				return -1;
			rp_removals_done(m, t);
		}
		return 0;
	case RP_SYS_MREMAP:
		return do_mremap(m, t, ev);
	case RP_SYS_BRK:
		if (!mm->brk || !ret) {
			mm->brk = ret;
		} else if (pgup(ret) > pgup(mm->brk)) {
			if (rp_reuse(m, t, pgup(mm->brk), pgup(ret), 0) ||
			    vma_insert(m, mm, pgup(mm->brk), pgup(ret),
				       RP_PROT_READ | RP_PROT_WRITE))
				return -1;
		} else if (pgup(ret) < pgup(mm->brk)) {
			if (vma_remove(m, t, pgup(ret), pgup(mm->brk), 0, 1))
				return -1;
			rp_removals_done(m, t);
		}
		mm->brk = ret ? ret : mm->brk;
		return 0;
	case RP_SYS_CLONE:
	case RP_SYS_CLONE3:
	case RP_SYS_FORK:
	case RP_SYS_VFORK:
		t->clone_pending = 0;
		if ((long)ret > 0 && t->clone_child != (long)ret && !task_find(m, (long)ret) &&
		    !task_child(m, t, (long)ret, ev->arg[0]))
			return -1;
		t->clone_child = 0;
		return 0;
	case RP_SYS_EXECVE:
	case RP_SYS_EXECVEAT:
		if (ev->ret != 0)
			return 0;
		mm = mm_new(m);
		if (!mm)
			return -1;
		mm_put(m, t->mm);
		t->mm = mm;
		mm->refs = 1;
		return luf_cmp_dom_add_cpu(m->cmp, mm->dom, t->ct.cpu) ? -1 : 0;
	default:
		return 0;
	}
}

/* A call of strace's process class: its presence tells threads from processes. */
static int process_call(enum rp_sys sys)
{
	switch (sys) {
	case RP_SYS_CLONE:
	case RP_SYS_CLONE3:
	case RP_SYS_FORK:
	case RP_SYS_VFORK:
	case RP_SYS_EXECVE:
	case RP_SYS_EXECVEAT:
	case RP_SYS_EXIT:
	case RP_SYS_EXIT_GROUP:
		return 1;
	default:
		return 0;
	}
}

/* munmap, a removing madvise, a shrinking brk: consecutive ones form a batch */
static int unmap_type(const struct rp_task *t, const struct rp_event *ev)
{
	if (ev->failed)
		return 0;
	if (ev->sys == RP_SYS_MUNMAP)
		return 1;
	if (ev->sys == RP_SYS_MADVISE)
		return madv_removes(ev->arg[2]);
	if (ev->sys == RP_SYS_BRK)
		return t->mm->brk && ev->ret && pgup((unsigned long)ev->ret) < pgup(t->mm->brk);
	return 0;
}

int rp_model_event(struct rp_model *m, const struct rp_event *ev)
{
	struct rp_task *t, *u;
	int unmap;

	m->st.events++;
	if (luf_cmp_explaining(m->cmp))
		snprintf(m->where, sizeof(m->where), "line %-7lu pid %-7ld %-9s", m->line, m->pid,
			 m->what ? m->what : "-");
	switch (ev->kind) {
	case RP_EV_NONE:
		if (ev->started) {
			m->st.proc_events++;
			t = task_get(m, ev->pid);
			if (!t)
				return -1;
			t->clone_pending = 1;
			t->clone_flags = ev->started_flags;
			t->clone_child = 0;
		}
		return 0;
	case RP_EV_SIGNAL:
		m->st.signals++;
		return 0;
	case RP_EV_EXIT:
		m->st.exits++;
		t = task_find(m, ev->pid);
		if (t)
			task_del(m, t);
		return 0;
	case RP_EV_SUPERSEDED: /* the exec'ing thread ev->ret takes over pid ev->pid */
		t = task_find(m, ev->pid);
		u = task_find(m, ev->ret);
		if (t && u && t != u) {
			task_del(m, t);
			task_unlink(m, u);
			u->pid = ev->pid;
			u->next = *slot(m, u->pid);
			*slot(m, u->pid) = u;
		}
		return 0;
	case RP_EV_CALL:
		break;
	}
	m->st.calls++;
	m->st.by_sys[ev->sys]++;
	if (process_call(ev->sys))
		m->st.proc_events++;
	t = task_get(m, ev->pid);
	if (!t)
		return -1;
	unmap = unmap_type(t, ev);
	if (!unmap && task_open(t))
		rp_batch_end(m, t); /* the run of unmaps ended: free its pages */
	if (ev->failed) {
		m->st.failed++;
		return 0;
	}
	if (ev->sys == RP_SYS_OTHER) {
		m->st.ignored++;
		return 0;
	}
	if (do_call(m, t, ev))
		return -1;
	if (unmap)
		t->in_unmap_run = 1;
	else if (task_open(t))
		rp_batch_end(m, t); /* removals of mprotect, mremap, mmap: freed at return */
	return 0;
}

void rp_model_explain(struct rp_model *m, FILE *f)
{
	luf_cmp_explain(m->cmp, f);
	luf_cmp_where(m->cmp, f ? m->where : NULL);
}

void rp_model_finish(struct rp_model *m)
{
	struct luf *l = luf_cmp_luf(m->cmp);
	long a = 0;

	if (luf_cmp_explaining(m->cmp))
		snprintf(m->where, sizeof(m->where), "line %-7lu pid %-7ld %-9s", m->line, m->pid,
			 m->what ? m->what : "-");
	for (size_t b = 0; b < m->hash_size; b++)
		for (struct rp_task *t = m->hash[b]; t; t = t->next)
			if (task_open(t))
				rp_batch_end(m, t);
	luf_cmp_result(m->cmp, &m->res);
	m->st.luf_deferred = (unsigned long long)luf_stats_sum(l, LUF_STAT_DEFERRED);
	m->st.luf_no_flush = (unsigned long long)luf_stats_sum(l, LUF_STAT_NO_FLUSH);
	m->st.luf_skipped = (unsigned long long)luf_stats_sum(l, LUF_STAT_FLUSH_SKIPPED);
	for (int c = 0; c < LUF_ABORT_NR_CAUSES; c++)
		a += luf_stats_sum(l, (enum luf_stat_item)(LUF_STAT_ABORT + c));
	m->st.luf_aborts = (unsigned long long)a;
	m->st.bat_redundant = m->res.bat_redundant;
}

int rp_model_init(struct rp_model *m, unsigned int nr_cpus)
{
	struct luf_cmp_config cc = {.nr_cpus = nr_cpus, .nr_keys = 4096};

	memset(m, 0, sizeof(*m));
	if (!nr_cpus || nr_cpus > RP_MAX_CPUS)
		return -1;
	m->nr_cpus = nr_cpus;
	m->hash_size = RP_HASH;
	m->hash = calloc(m->hash_size, sizeof(*m->hash));
	if (!m->hash || luf_cmp_create(&cc, &m->cmp))
		return -1;
	return 0;
}

void rp_model_fini(struct rp_model *m)
{
	if (m->hash && m->cmp) {
		for (size_t b = 0; b < m->hash_size; b++)
			while (m->hash[b])
				task_del(m, m->hash[b]);
	}
	luf_cmp_destroy(m->cmp);
	free(m->hash);
	free(m->recs);
	memset(m, 0, sizeof(*m));
}
