/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/version.h - version of the luf headers.
 *
 * LUF_VERSION is (major << 16 | minor << 8 | patch), for #if tests;
 * LUF_VERSION_STRING is the same as text.
 */
#ifndef LUF_VERSION_H
#define LUF_VERSION_H

#define LUF_VERSION_MAJOR 0 /* incompatible API changes (from 1.0 on) */
#define LUF_VERSION_MINOR 2 /* new API; before 1.0, also incompatible changes */
#define LUF_VERSION_PATCH 0 /* fixes only */
/* The version as one number, (major << 16 | minor << 8 | patch). */
#define LUF_VERSION ((LUF_VERSION_MAJOR << 16) | (LUF_VERSION_MINOR << 8) | LUF_VERSION_PATCH)
/* The version as text, "major.minor.patch". */
#define LUF_VERSION_STRING "0.2.0"

#endif /* LUF_VERSION_H */
