// SPDX-License-Identifier: GPL-2.0
/*
 * librfp-compat.so: the shim's descriptor numbers, out of the program's
 * way (the highest free under the descriptor limit), and whether the
 * process holds a POSIX lock on a file (closing any descriptor of it
 * would drop the lock).  Async-signal-safe: no allocation, no lock.
 */
#define _GNU_SOURCE
#define _FILE_OFFSET_BITS 64	/* fstat() of files of 2 GiB and more */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "shim.h"

/*
 * The descriptor limit now (the program may change it at any time), as
 * far as the shim's numbers go: at most 1024, for the kernel sizes the
 * descriptor table by the highest number in use.
 */
int fd_limit(void)
{
	struct rlimit lim;

	if (getrlimit(RLIMIT_NOFILE, &lim))
		return 1024;
	return lim.rlim_cur > 1024 ? 1024 : lim.rlim_cur;
}

/*
 * A copy of FD at the highest number free under the limit: -1 when the
 * only numbers free are at or below FD.  FD came from open(), dup() or
 * memfd_create(), which take the lowest free number, so a copy above it
 * leaves the program's next open() the number it would have had.
 */
static int dup_high(int fd)
{
	int top = fd_limit() - 1, step, high = -1;

	/* From the top down, by steps that double: a few calls at most. */
	for (step = 1; top - step + 1 > fd && high < 0; step *= 2)
		high = fcntl(fd, F_DUPFD_CLOEXEC, top - step + 1);
	/* The steps may have jumped over the numbers just above FD. */
	if (high < 0 && fd < top)
		high = fcntl(fd, F_DUPFD_CLOEXEC, fd + 1);
	return high;
}

/* Said once a process: no number is left out of the program's way. */
static void no_room(void)
{
	static _Atomic pid_t said;
	char buf[24];

	if (atomic_exchange(&said, getpid()) != getpid())
		say("rfp-compat: no descriptor number free above the program's (descriptor limit ",
		    ul(buf, fd_limit(), 10),
		    "): the shim keeps none, and a remap may have to find its file again, or fail with ENOSYS\n",
		    NULL);
}

/*
 * Whether this process holds a POSIX lock on DEV:INO, from /proc/locks:
 * "1: POSIX  ADVISORY  WRITE 1234 fd:01:5678 0 EOF".  Waiters ("->")
 * hold nothing; OFD locks belong to their open file, not to the process.
 */
bool holds_posix_lock(dev_t dev, ino_t ino)
{
	struct reader r = { .fd = open("/proc/locks", O_RDONLY | O_CLOEXEC) };
	unsigned long pid = getpid();
	const char *p;
	char *line;
	bool held = false;

	if (r.fd < 0)	/* ENOENT: a kernel without file locks */
		return errno != ENOENT;	/* else it cannot tell: do not close */
	while (!held && (line = next_line(&r))) {
		p = strchr(line, ':');
		if (!p || strstr(line, "->"))
			continue;
		p++;
		skip_spaces(&p);
		if (strncmp(p, "POSIX", 5))
			continue;
		/* POSIX, ADVISORY, READ or WRITE, then the pid. */
		for (int field = 0; field < 3; field++) {
			while (*p && *p != ' ')
				p++;
			skip_spaces(&p);
		}
		if (parse_dec(&p) != pid)
			continue;
		skip_spaces(&p);
		unsigned int maj = parse_hex(&p);

		if (*p++ != ':')
			continue;
		unsigned int min = parse_hex(&p);

		if (*p++ != ':')
			continue;
		held = parse_dec(&p) == ino && makedev(maj, min) == dev;
	}
	sys_close(r.fd);
	return held;
}

/*
 * FD, the shim's, just opened at the program's next number, moved up out
 * of the program's way (FRESH: a file nobody can have locked yet).  FD
 * itself where its file is locked (closing it would drop the lock), and
 * where no number is free above the program's: then *LOW is set, for the
 * caller to close it as soon as it can.
 */
int shim_fd(int fd, bool fresh, bool *low)
{
	struct stat st;
	int high;

	*low = false;
	if (fd < 0)
		return fd;
	if (!fresh && (fstat(fd, &st) || holds_posix_lock(st.st_dev, st.st_ino)))
		return fd;
	high = dup_high(fd);
	if (high < 0) {
		no_room();
		*low = true;
		return fd;
	}
	sys_close(fd);
	return high;
}

