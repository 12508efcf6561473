/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading a word of a mapping that may lie past the end of its file: the
 * access raises SIGBUS, which sigbus_read() turns into -1.  Install
 * on_sigbus() for SIGBUS first.  Per thread, so threads may read at once.
 */
#ifndef RFP_SIGBUS_READ_H
#define RFP_SIGBUS_READ_H

#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>

static __thread sigjmp_buf bus_jmp;
static __thread volatile int bus_armed;

static void on_sigbus(int sig)
{
	(void)sig;
	if (bus_armed)
		siglongjmp(bus_jmp, 1);
	abort();	/* a SIGBUS where none was expected */
}

/* The first word at p, or -1 when reading it raises SIGBUS. */
static long sigbus_read(const void *p)
{
	long v;

	if (sigsetjmp(bus_jmp, 1)) {
		bus_armed = 0;
		return -1;
	}
	bus_armed = 1;
	v = *(const volatile long *)p;
	bus_armed = 0;
	return v;
}

#endif
