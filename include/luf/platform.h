/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/platform.h - select the platform shim.
 *
 * Inside a kernel build (__KERNEL__ defined by Kbuild) the core headers
 * use platform/kernel.h; everywhere else platform/user.h (GCC and Clang
 * __atomic builtins), which a kernel tree does not carry. Nothing else in
 * include/luf/ includes a libc or kernel header.
 */
#ifndef LUF_PLATFORM_H
#define LUF_PLATFORM_H

#if defined(__KERNEL__)
#include "platform/kernel.h"
#else
#include "platform/user.h"
#endif

#endif /* LUF_PLATFORM_H */
