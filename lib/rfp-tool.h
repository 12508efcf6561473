/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the harness's guest tools share (rfp-demo, rfp-bench, rfp-stress,
 * rfp-fuzz, rfp-faults, rfp-diff, rfp-compat-test): the system call,
 * counting VMAs, a test file, writing a sysctl or tracefs file, and
 * reporting a failure.  Header only: each tool is one static
 * binary built from one .c file.  Include it after defining _GNU_SOURCE.
 */
#ifndef RFP_TOOL_H
#define RFP_TOOL_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* remap_file_pages(2), the raw syscall (not glibc's wrapper). */
static inline long rfp_syscall(void *start, unsigned long size,
			       unsigned long prot, unsigned long pgoff,
			       unsigned long flags)
{
	return syscall(SYS_remap_file_pages, start, size, prot, pgoff, flags);
}

/* Remap @npages pages at @addr to file page @pgoff. */
static inline long rfp_remap(void *addr, unsigned long npages,
			     unsigned long pgoff, int flags)
{
	/* Asked once: rfp-bench counts the instructions around each call. */
	static long pagesize;

	if (!pagesize)
		pagesize = sysconf(_SC_PAGESIZE);
	return rfp_syscall(addr, npages * pagesize, 0, pgoff, flags);
}

/*
 * The number of VMAs that overlap [lo, lo + len) in /proc/self/maps; with
 * @len 0, all of its lines.  -1 if it cannot be read.
 */
static inline int rfp_vma_count(const void *lo, size_t len)
{
	unsigned long s, e, a = (unsigned long)lo, b = a + len;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!len || (sscanf(line, "%lx-%lx", &s, &e) == 2 &&
			     e > a && s < b))
			n++;
	fclose(f);
	return n;
}

/* Write @s to the file @path (a sysctl, a tracefs file): 0, or -1. */
static inline int rfp_write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s);
	close(fd);
	return ok ? 0 : -1;
}

/*
 * A new file "@tool.XXXXXX" in @dir, @npages pages long, page i starting
 * with the 64-bit number @first + i (all zeros if @first is negative).
 * Its name goes to @path, for the caller to unlink; with @path NULL it is
 * unlinked at once.  Returns the descriptor, or -1 with errno set.
 */
static inline int rfp_make_file(const char *dir, const char *tool,
				unsigned long npages, long first, char *path,
				size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	char name[256];
	unsigned long i;
	uint64_t v;
	int fd, err;

	if (!path) {
		path = name;
		len = sizeof(name);
	}
	snprintf(path, len, "%s/%s.XXXXXX", dir, tool);
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	if (path == name)
		unlink(name);
	if (ftruncate(fd, npages * page))
		goto fail;
	for (i = 0; first >= 0 && i < npages; i++) {
		v = first + i;
		if (pwrite(fd, &v, sizeof(v), i * page) != sizeof(v))
			goto fail;
	}
	return fd;
fail:
	err = errno;
	close(fd);
	errno = err;
	return -1;
}

/*
 * Report a failure on stderr, after the tool's name, and count it in
 * *@counter: atomically, since rfp-stress counts from several processes.
 */
#define rfp_fail(counter, ...) do {					\
	fprintf(stderr, "%s: ", program_invocation_short_name);	\
	fprintf(stderr, __VA_ARGS__);					\
	__atomic_add_fetch((counter), 1, __ATOMIC_RELAXED);		\
} while (0)

#endif /* RFP_TOOL_H */
