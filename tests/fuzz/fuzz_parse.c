// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/fuzz/fuzz_parse.c - libFuzzer target for luf-replay: the input is
 * split into lines, each parsed (bench/replay/rp_parse.c) and every event
 * replayed on a 4-CPU model under all four policies (rp_model.c, the real
 * luf code included). Any crash, sanitizer report, leak, or a safety
 * violation by a policy is a failure.
 * Build (clang): -fsanitize=fuzzer,address,undefined; run: fuzz_parse corpus/
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rp_model.h"
#include "rp_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rp_parser *p = rp_parser_new();
	struct rp_model m;
	const char *s = (const char *)data, *e = s + size, *err;
	struct rp_event ev;

	if (!p)
		return 0;
	if (rp_model_init(&m, 4)) {
		rp_model_fini(&m);
		rp_parser_free(p);
		return 0;
	}
	while (s < e) {
		const char *nl = memchr(s, '\n', (size_t)(e - s));
		size_t len = nl ? (size_t)(nl - s) : (size_t)(e - s);

		if (!rp_parse_line(p, s, len, &ev, &err) && (ev.kind != RP_EV_NONE || ev.started))
			if (rp_model_event(&m, &ev))
				break;
		s += len + (nl ? 1 : 0);
	}
	rp_model_finish(&m);
	for (int i = 0; i < LUF_CMP_NPOL; i++)
		for (int r = 0; r < LUF_CMP_NRULES; r++)
			if (m.res.c[i].viol[r])
				abort(); /* a policy broke a safety rule */
	rp_model_fini(&m);
	rp_parser_free(p);
	return 0;
}
