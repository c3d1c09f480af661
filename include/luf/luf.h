/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/luf.h - everything: the umbrella header.
 *
 * Header-only use: include this and call the static inline API.
 * Linked use (libluf): define LUF_LINKED before including it; the same
 * names then resolve to libluf's exported symbols (see luf/api.h).
 */
#ifndef LUF_LUF_H
#define LUF_LUF_H

#include "version.h"
#if defined(LUF_LINKED) || defined(LUF_BUILDING_LIB)
#include "api.h"
#endif
#include "platform.h"
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
#include "freelist.h"
#include "upgrade.h"
#if defined(LUF_LINKED) || defined(LUF_BUILDING_LIB)
#include "api.h"
#endif

#endif /* LUF_LUF_H */
