// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/fuzz/fuzz_parse.c - libFuzzer target for luf-replay: the input is
 * split into lines, each parsed as strace output (bench/replay/rp_parse.c)
 * and as a kernel trace line (rp_kparse.c); the events of each are replayed
 * on a 4-CPU model under all four policies (rp_model.c, rp_kmodel.c: the
 * policy simulator and the real luf code). Any crash, sanitizer report,
 * leak, or a safety violation by a policy is a failure.
 * Build (clang): -fsanitize=fuzzer,address,undefined; run: fuzz_parse corpus/
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rp_kmodel.h"
#include "rp_kparse.h"
#include "rp_model.h"
#include "rp_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rp_parser *p = rp_parser_new();
	struct rp_model m;
	const char *s = (const char *)data, *e = s + size, *err;
	struct rp_event ev;
	struct rp_kmodel *k = NULL;
	struct luf_cmp_result kres;
	struct rp_kstats kst;
	struct rp_kev kev;

	if (!p)
		return 0;
	if (rp_model_init(&m, 4) || rp_kmodel_new(4, 4096, &k)) {
		rp_model_fini(&m);
		rp_kmodel_free(k);
		rp_parser_free(p);
		return 0;
	}
	while (s < e) {
		const char *nl = memchr(s, '\n', (size_t)(e - s));
		size_t len = nl ? (size_t)(nl - s) : (size_t)(e - s);

		if (!rp_parse_line(p, s, len, &ev, &err) && (ev.kind != RP_EV_NONE || ev.started))
			if (rp_model_event(&m, &ev))
				break;
		if (!rp_kparse(s, len, &kev, &err) && rp_kmodel_event(k, &kev, &err) == -1)
			break;
		s += len + (nl ? 1 : 0);
	}
	rp_kmodel_finish(k, &kres, &kst);
	for (int i = 0; i < LUF_CMP_NPOL; i++)
		for (int r = 0; r < LUF_CMP_NRULES; r++)
			if (kres.c[i].viol[r])
				abort(); /* a policy broke a safety rule on a kernel trace */
	rp_kmodel_free(k);
	rp_model_finish(&m);
	for (int i = 0; i < LUF_CMP_NPOL; i++)
		for (int r = 0; r < LUF_CMP_NRULES; r++)
			if (m.res.c[i].viol[r])
				abort(); /* a policy broke a safety rule */
	rp_model_fini(&m);
	rp_parser_free(p);
	return 0;
}
