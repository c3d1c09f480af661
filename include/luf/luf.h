/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/luf.h - everything: the umbrella header.
 *
 * The fast paths (defer, fold, free, clean allocation, check_done, diet,
 * the upgrade check) are static inline in their headers; the slow paths
 * (set-up, the flush and settle paths, aborts, statistics sums) are
 * declared there and defined once in lib/<concept>.c: link libluf (luf::luf,
 * luf::static) in user space, or build lib/luf in a kernel tree.
 */
#ifndef LUF_LUF_H
#define LUF_LUF_H

#include "version.h"
#include "platform.h"
#if !defined(__KERNEL__)
#include "error.h" /* user space: luf_last_error(); a kernel logs (platform/kernel.h) */
#endif
#include "ugen.h"
#include "cpumask.h"
#include "done.h"
#include "batch.h"
#include "stats.h"
#include "arch.h"
#include "flush.h"
#include "shared.h"
#include "keytab.h"
#include "domain.h"
#include "pcpu.h"
#include "folio.h"
#include "freelist.h"
#include "upgrade.h"

#endif /* LUF_LUF_H */
