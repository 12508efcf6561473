// SPDX-License-Identifier: GPL-2.0
/*
 * librfp-empty.so: a shared library with nothing to do, built as
 * librfp-compat.so is.  Preloaded into rfp-bench's exec scenario (make
 * bench), it shows what loading any library adds to an exec, apart from
 * what the shim itself adds.
 */
int rfp_empty;
