// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * lib/sim/sim_check.c - the safety checker: luf's contract (docs/DESIGN.md
 * section 5) as checks on the simulated machine's state, run at the
 * moment each rule could first be broken.
 *
 *   when                              rule  what must hold
 *   luf_alloc() hands out a frame     S1    no CPU's TLB translates to it
 *   luf_free() puts it on clean       S1    no CPU's TLB translates to it
 *   luf_free() of any frame           S3    no writable or dirty entry for it
 *   a read through an entry           S1/S2 the frame holds the object the
 *                                           entry was filled for, at its newest
 *                                           version, and the page still maps it
 *   a write through an entry          S2/S3 the protection allows it (after the
 *                                           change's flush), the page maps that
 *                                           frame, no CPU maps the page elsewhere
 *   write permission granted, a       S2    no other CPU maps the page to another
 *   new page mapped at an address           frame (or another object)
 *   a frame written by another path   S2    no CPU translates to it
 *   after every operation             S4    done[cpu] never went back
 *
 * The checker uses its own wrap-safe comparison of ugens, not luf's (which a
 * mutant may break), and reads the machine's atomics only: it never takes a
 * TLB lock, and in every check the entries it scans can only disappear
 * while it looks (see sim_internal.h), so what it reports did happen.
 */
#include <string.h>

#include "sim_internal.h"

static const char *const sim_rule_names[LUF_SIM_NR_RULES] = {"ok", "S1", "S2", "S3", "S4", "L1"};

const char *luf_sim_rule_name(int rule)
{
	return rule >= 0 && rule < LUF_SIM_NR_RULES ? sim_rule_names[rule] : "?";
}

bool sim_ugen_older(unsigned long a, unsigned long b)
{
	return (long)(a - b) < 0;
}

void sim_violation(struct luf_sim *sim, enum luf_sim_rule rule, unsigned int cpu, const char *fmt,
		   ...)
{
	enum luf_sim_rule r = rule >= LUF_SIM_NR_RULES || rule == LUF_SIM_OK ? LUF_SIM_S1 : rule;
	char msg[sizeof(sim->first.msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	__luf_add_relaxed(&sim->nv[r], 1);
	pthread_mutex_lock(&sim->vlock);
	if (!atomic_load_explicit(&sim->have_first, memory_order_relaxed)) {
		sim->first.rule = r;
		sim->first.cpu = cpu;
		sim->first.op = __luf_read_once(&sim->nr_ops);
		memcpy(sim->first.msg, msg, sizeof(msg));
		atomic_store_explicit(&sim->have_first, 1, memory_order_release);
	}
	pthread_mutex_unlock(&sim->vlock);
}

static const char *sim_prot_name(uint32_t prot)
{
	static const char *const names[] = {"PROT_NONE", "PROT_READ", "PROT_READ|WRITE",
					    "unmapped"};

	return prot < 4 ? names[prot] : "?";
}

/* What a stamp holds, for messages. */
static void sim_stamp_name(uint64_t stamp, char *buf, size_t len)
{
	uint32_t obj = (uint32_t)(stamp >> 32), ver = (uint32_t)stamp;

	if (obj == SIM_OBJ_FILE)
		snprintf(buf, len, "data of a file write");
	else if (obj == SIM_OBJ_POISON)
		snprintf(buf, len, "poison");
	else if (obj == SIM_OBJ_LINK)
		snprintf(buf, len, "a free-list link word");
	else if (obj == SIM_OBJ_ZERO)
		snprintf(buf, len, "zeroes (init-on-free)");
	else
		snprintf(buf, len, "object %u version %u", obj, ver);
}

/*
 * S1/S2/S3: @frame must have no translation (@writable_only: no writable or
 * dirty one) on any CPU; @what says what is happening to it.
 */
void sim_check_no_entries(struct luf_sim *sim, unsigned int cpu, uint32_t frame, bool writable_only,
			  enum luf_sim_rule rule, const char *what)
{
	struct sim_frame *f = &sim->frames[frame];
	uint32_t n =
	    atomic_load_explicit(writable_only ? &f->wrefs : &f->refs, memory_order_acquire);
	uint64_t mask = writable_only ? (SIM_E_W | SIM_E_D) : 0;

	if (!n)
		return;
	for (unsigned int c = 0; c < sim->cfg.nr_cpus; c++) {
		for (uint32_t sid = 0; sid < sim->nr_slots; sid++) {
			uint64_t e = sim_load(sim_ent(sim, c, sid));

			if (!(e & SIM_E_VALID) || sim_e_frame(e) != frame || (mask && !(e & mask)))
				continue;
			sim_violation(
			    sim, rule, cpu,
			    "frame %u %s while CPU %u still has a %s entry for it (d%u:p%u)", frame,
			    what, c, (e & SIM_E_W) ? "writable" : "read-only",
			    sid / sim->cfg.nr_pages, sid % sim->cfg.nr_pages);
			return;
		}
	}
	sim_violation(sim, rule, cpu, "frame %u %s while %u TLB entries still translate to it",
		      frame, what, n);
}

/*
 * A read by @cpu through its entry @e for @dom:@page (own TLB lock held).
 * The object table is read before the frame: a concurrent writer stores
 * the frame first, so a reader that sees a new version in the table sees
 * it in the frame too, and only a stale frame reads older than the table.
 */
void sim_check_read(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int page,
		    uint64_t e, uint64_t *stamp)
{
	uint32_t frame = sim_e_frame(e), obj = sim_e_obj(e), now = 0, sobj, sver, at;
	bool known = sim_obj_version(sim, obj, &now);
	uint64_t s = sim_load(&sim->frames[frame].stamp);
	char got[64];

	sobj = (uint32_t)(s >> 32);
	sver = (uint32_t)s;
	if (stamp)
		*stamp = s;
	if (sobj != obj) {
		sim_stamp_name(s, got, sizeof(got));
		sim_violation(
		    sim, sobj && sobj < SIM_OBJ_SPECIAL ? LUF_SIM_S1 : LUF_SIM_S2, cpu,
		    "CPU %u read d%u:p%u through its entry for frame %u and found %s, not "
		    "object %u: the frame was %s while the entry was stale",
		    cpu, dom, page, frame, got, obj,
		    sobj && sobj < SIM_OBJ_SPECIAL ? "reused" : "written");
		return;
	}
	if (known && (int32_t)(sver - now) < 0) {
		sim_violation(
		    sim, LUF_SIM_S2, cpu,
		    "stale read: CPU %u read version %u of object %u (d%u:p%u) from frame "
		    "%u, but it is at version %u: a write was made possible while this "
		    "entry was stale",
		    cpu, sver, obj, dom, page, frame, now);
		return;
	}
	at = atomic_load_explicit(&sim_slot(sim, dom, page)->obj, memory_order_acquire);
	if (at && at != obj)
		sim_violation(sim, LUF_SIM_S2, cpu,
			      "CPU %u read object %u through a stale entry for d%u:p%u (frame %u), "
			      "but d%u:p%u now maps object %u",
			      cpu, obj, dom, page, frame, dom, page, at);
}

/*
 * S2 at the moment a translation for @dom:@page to @frame (object @obj) is
 * installed or made writable (domain lock held): no CPU but @skip_cpu
 * (which refills its entry right after; UINT_MAX: none) may still map the
 * page to another frame if the new translation is writable, nor to another
 * object at all.
 */
void sim_check_install(struct luf_sim *sim, unsigned int skip_cpu, unsigned int dom,
		       unsigned int page, uint32_t frame, uint32_t obj, bool writable,
		       const char *why)
{
	uint32_t sid = sim_slot_id(sim, dom, page);

	for (unsigned int c = 0; c < sim->cfg.nr_cpus; c++) {
		uint64_t e;

		if (c == skip_cpu)
			continue;
		e = sim_load(sim_ent(sim, c, sid));
		if (!(e & SIM_E_VALID) || sim_e_frame(e) == frame)
			continue;
		if (writable) {
			sim_violation(
			    sim, LUF_SIM_S2, sim_tctx.cpu,
			    "%s: write permission for d%u:p%u (frame %u) granted while CPU "
			    "%u still maps it to frame %u (a stale translation not flushed)",
			    why, dom, page, frame, c, sim_e_frame(e));
			return;
		}
		if (sim_e_obj(e) != obj) {
			sim_violation(
			    sim, LUF_SIM_S2, sim_tctx.cpu,
			    "%s: d%u:p%u now maps object %u (frame %u) while CPU %u still "
			    "maps it to object %u in frame %u",
			    why, dom, page, obj, frame, c, sim_e_obj(e), sim_e_frame(e));
			return;
		}
	}
}

/*
 * A write by @cpu through its writable entry @e for @dom:@page (domain lock
 * and own TLB lock held), checked before it lands.
 */
void sim_check_write(struct luf_sim *sim, unsigned int cpu, unsigned int dom, unsigned int page,
		     uint64_t e)
{
	struct sim_slot *s = sim_slot(sim, dom, page);
	uint32_t frame = sim_e_frame(e), sid = sim_slot_id(sim, dom, page);
	uint32_t committed = atomic_load(&s->committed);
	uint64_t pte = sim_load(&s->pte);

	if (committed != LUF_SIM_PROT_RW) {
		sim_violation(sim, LUF_SIM_S2, cpu,
			      "CPU %u wrote d%u:p%u through a writable entry (frame %u) after the "
			      "page became %s: a stale writable translation survived the change",
			      cpu, dom, page, frame, sim_prot_name(committed));
		return;
	}
	if (atomic_load(&sim->frames[frame].state) == SIM_FRAME_FREE) {
		sim_violation(sim, LUF_SIM_S3, cpu,
			      "CPU %u wrote d%u:p%u through a writable entry into frame %u, which "
			      "is on a free list",
			      cpu, dom, page, frame);
		return;
	}
	if ((pte & SIM_PTE_PRESENT) && sim_pte_frame(pte) != frame) {
		sim_violation(sim, LUF_SIM_S2, cpu,
			      "CPU %u wrote d%u:p%u through its entry for frame %u while the page "
			      "maps frame %u: the two copies diverge",
			      cpu, dom, page, frame, sim_pte_frame(pte));
		return;
	}
	for (unsigned int c = 0; c < sim->cfg.nr_cpus; c++) {
		uint64_t o = sim_load(sim_ent(sim, c, sid));

		if (c != cpu && (o & SIM_E_VALID) && sim_e_frame(o) != frame) {
			sim_violation(
			    sim, LUF_SIM_S2, cpu,
			    "CPU %u wrote d%u:p%u (frame %u) while CPU %u still maps it to "
			    "frame %u",
			    cpu, dom, page, frame, c, sim_e_frame(o));
			return;
		}
	}
}

/* S4 after each operation of @cpu: the done counters it samples never go back. */
void sim_check_done(struct luf_sim *sim, unsigned int cpu)
{
	struct sim_cpu *sc = &sim->cpus[cpu];
	unsigned int n = sim->cfg.nr_cpus;

	for (unsigned int k = 0; k < sim->nr_seen; k++) {
		unsigned int x = (cpu + k) % n;
		unsigned long d = luf_done_read(&sim->luf->done, x);

		if (sim_ugen_older(d, sc->seen[k]))
			sim_violation(sim, LUF_SIM_S4, cpu, "done[%u] went back from %#lx to %#lx",
				      x, sc->seen[k], d);
		sc->seen[k] = d;
	}
}
