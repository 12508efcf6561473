/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The random numbers of the stress tools: xorshift64, so that one seed
 * gives one sequence on every machine and every libc.  The tool seeds
 * rnd_state (never with 0).
 */
#ifndef RFP_XORSHIFT_H
#define RFP_XORSHIFT_H

#include <stdint.h>

static uint64_t rnd_state;

static inline uint64_t rnd64(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* A number in [0, n), or 0 when n is 0. */
static inline unsigned long rnd(unsigned long n)
{
	return n ? rnd64() % n : 0;
}

#endif
