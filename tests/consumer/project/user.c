// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * A consumer of luf's installed user-space backends: open whichever
 * barrier backend this machine allows, flush once, close.
 */
#include <luf/luf_user.h>
#include <stdio.h>

int main(void)
{
	static struct luf_user u;
	int ret = luf_user_backend_open(&u, NULL);

	if (ret) {
		/* No barrier available here: a clear reason, not a failure of packaging. */
		printf("luf user backend: none (%s)\n", luf_user_why(&u));
		return 0;
	}
	ret = luf_user_flush(&u, NULL, 0);
	printf("luf user backend: %s, flush %s\n", luf_user_kind_name(u.kind), ret ? "failed" : "ok");
	luf_user_close(&u);
	return ret ? 1 : 0;
}
