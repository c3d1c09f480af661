// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * luf_core.c - luf's slow paths (lib/<concept>.c of the luf repository)
 * compiled into the out-of-tree module, for a stock kernel that has no
 * luf of its own. Kbuild puts the directory holding them on the include
 * path (the repository's lib/, or core/ next to a vendored copy).
 */
#include "flush.c"
#include "keytab.c"
#include "domain.c"
#include "pcpu.c"
#include "freelist.c"
#include "upgrade.c"
