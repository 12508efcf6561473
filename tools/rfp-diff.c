// SPDX-License-Identifier: GPL-2.0
/*
 * rfp-diff: a seeded trace of remap_file_pages() and the calls around it,
 * and of the mm state they leave, for comparing two kernels.
 *
 * A remap must answer exactly as mmap(MAP_FIXED | MAP_SHARED) of the same
 * file over the range would on the stock kernel (README, "What the kernel
 * does").  Rather than model
 * that, this program writes down everything it does and sees; the harness
 * runs it with the same seed on the stock and on the patched kernel (ASLR
 * off) and diffs the two traces.  Any difference is a finding.
 *
 * The run is made of segments.  Each one maps a window of WIN pages over
 * an object of OBJ pages (a file in DIR, a memfd, or shared anonymous
 * memory), with GUARD pages of PROT_NONE reservation on both sides, and
 * draws steps at random: remap_file_pages() (inside and around the window,
 * no-op remaps, offsets past EOF or huge, MAP_NONBLOCK, now and then
 * prot != 0), mmap(MAP_FIXED) of a sub-range, madvise, mprotect,
 * mlock/munlock, mlockall(MCL_FUTURE)/munlockall, mseal, memfd seals,
 * anonymous VMA names, userfaultfd registration, protection keys,
 * PR_SET_MDWE and READ_IMPLIES_EXEC (in forked children: they cannot be
 * undone), fork with a child that reads the window, writes, ftruncate,
 * a lowered vm.max_map_count, and (for whole segments) a small
 * RLIMIT_MEMLOCK without CAP_IPC_LOCK.
 *
 * Every object page p starts with MAGIC:gen:p, so reading a window page
 * tells which object page it shows.  After each step the trace has:
 *
 *   STEP OP ARGS = RESULT           addresses as w+PAGES[+BYTES], relative
 *                                   to the window's start
 *     vma w+A..w+B PERMS off=PAGE rss=KB locked=KB [pkey=K] flags=VMFLAGS name=NAME
 *                                   one per VMA overlapping the window
 *     meminfo: Mlocked +KB Unevictable +KB     (after mlock-related steps
 *                                   and while part of the window is locked;
 *                                   changes since the program started)
 *     pages: T T T ...              what each window page shows: the object
 *                                   page (.gen when refilled, :step of the
 *                                   last write into it), z for a zero page,
 *                                   S for SIGSEGV, B for SIGBUS
 *
 * A forked child's steps are numbered STEP.1, STEP.2...; a reader child
 * prints "child: T T T ..."; then "child exit N" (or the signal).  The
 * VMA's name tells the object (and an anonymous name); its protection key
 * is there because a fresh mmap() has key 0.
 *
 * No absolute address, pid, time, inode or device number is printed, so
 * that a trace depends on the seed and the kernel only.  Mlocked and
 * Unevictable are system-wide: they are printed as changes since the start
 * (the initramfs, on the unevictable list, carries each kernel's own
 * config), after draining this CPU's LRU and mlock batches and folding
 * the per-CPU vmstat diffs; the process keeps to CPU 0 for that.  It
 * allocates nothing once started (the lowered max_map_count would make
 * malloc() fail).
 *
 * Two options make the trace compare a remap with mmap() itself, on one
 * kernel, as SPEC's rule says a remap must be indistinguishable from
 * mmap(MAP_FIXED | MAP_SHARED) of the same file over the range:
 *
 *   -e  the watchers' events go into the trace: a userfaultfd registered
 *       with UFFD_FEATURE_EVENT_UNMAP ("event uffd unmap w+A..w+B"), and a
 *       fanotify group with FAN_PRE_ACCESS on each file the run creates,
 *       where the filesystem has pre-content events ("event fanotify
 *       pre-access off=N len=N", in pages).  A thread takes them and
 *       allows each, while a step runs; they are printed after its state.
 *   -m  each remap is done as mmap() instead: the syscall's own rule
 *       (prot, rounding, wrapping, the VMA at start and those after it:
 *       shared, contiguous, one file, the same flags) decides EINVAL; else
 *       mmap(MAP_FIXED | MAP_SHARED | MAP_POPULATE, plus MAP_NONBLOCK as
 *       passed and MAP_LOCKED for a locked VMA) of the VMA's file, through
 *       the descriptor the window was mapped from, with the VMA's
 *       protections, at the offset pgoff.  Two kinds of remap have no
 *       mmap() to stand for them, and stay the kernel's in both runs, by
 *       rule: a pgoff that no byte offset reaches ("rule=no-mmap-offset"),
 *       and those of shared anonymous memory, which has no descriptor of
 *       the window's own file (one opened anew is another struct file,
 *       whose VMAs never merge with the window's; the segment says so).
 *
 * Every trace prints the rule's verdict on each remap ("rule=mmap",
 * "rule=no-mmap-offset" or "rule=EINVAL(why)"), so that the syscall's own
 * refusals, which mmap() does not have, are said by rule in both traces;
 * the result that follows is the kernel's remap in one and mmap()'s in
 * the other.
 *
 * Usage: rfp-diff -s SEED -n STEPS -d DIR [-e] [-m]
 * Exit status 0 when the trace ran to its end ("# rfp-diff: ... done"),
 * 1 when it could not set itself up (the reason is printed).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rfp-tool.h"
#include "xorshift.h"

#ifndef SYS_mseal
#define SYS_mseal		462
#endif
#ifndef PR_SET_MDWE
#define PR_SET_MDWE		65
#define PR_MDWE_REFUSE_EXEC_GAIN 1
#endif
#ifndef PR_SET_VMA
#define PR_SET_VMA		0x53564d41
#define PR_SET_VMA_ANON_NAME	0
#endif
#ifndef MADV_COLD
#define MADV_COLD		20
#endif
/* fanotify's pre-content events (6.14), newer than the host's headers. */
#ifndef FAN_PRE_ACCESS
#define FAN_PRE_ACCESS		0x00100000
#endif
#define RFP_FAN_INFO_RANGE	6	/* FAN_EVENT_INFO_TYPE_RANGE */
struct rfp_fan_range {			/* struct fanotify_event_info_range */
	struct fanotify_event_info_header hdr;
	uint32_t pad;
	uint64_t offset, count;
};
#ifndef PKEY_DISABLE_WRITE
#define PKEY_DISABLE_WRITE	2
#endif

#define WIN	32	/* window pages */
#define OBJ	64	/* object pages */
#define GUARD	4	/* reserved pages on each side of the window */
#define MAGIC	0x52465044UL	/* "RFPD" */

enum backing { B_FILE, B_MEMFD, B_SHANON };
static const char *const backing_name[] = { "file", "memfd", "shared-anon" };

static long pg;
static const char *dir;
static int watch_events, reference;	/* -e, -m */
static unsigned long seed;
static long steps, step;

/* The segment: its object, reservation and window. */
static enum backing backing;
static int fd = -1, uffd = -1;
static char path[4096];
static char *res, *win;
static unsigned long res_len;
static long obj_size;		/* pages, as last ftruncate()d */
static int gen;			/* generation of the last refill */
static int memlimit;		/* this segment runs with a small RLIMIT_MEMLOCK */
static struct rlimit old_memlock;

static int pkey = -2;		/* -2: not allocated yet; -1: failed */
static int pkey_errno;
static long orig_max_map_count;
static int mmc_left;		/* steps until max_map_count is restored */
static int trunc_left;		/* steps until the object grows back */
static char *dummy;		/* a private page to madvise(MADV_COLD) */
static long base_mlocked, base_unevictable;

/* ---- output: one buffer, written with write(2), flushed before fork ---- */

static char obuf[1 << 16];
static size_t olen;

static void flush_out(void)
{
	size_t done = 0;

	while (done < olen) {
		ssize_t n = write(1, obuf + done, olen - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += n;
	}
	olen = 0;
}

__attribute__((format(printf, 1, 2)))
static void out(const char *fmt, ...)
{
	va_list ap;
	int n;

	if (olen > sizeof(obuf) - 4096)
		flush_out();
	va_start(ap, fmt);
	n = vsnprintf(obuf + olen, sizeof(obuf) - olen, fmt, ap);
	va_end(ap);
	if (n > 0)
		olen += (size_t)n < sizeof(obuf) - olen ? (size_t)n : sizeof(obuf) - olen - 1;
}

static void die(const char *what)
{
	int e = errno;

	out("# rfp-diff: cannot set up: %s: %s\n", what, strerror(e));
	flush_out();
	fprintf(stderr, "rfp-diff: %s: %s\n", what, strerror(e));
	exit(1);
}

static const char *ename(int e)
{
	static char b[16];
	const char *n = strerrorname_np(e);

	if (n)
		return n;
	snprintf(b, sizeof(b), "E%d", e);
	return b;
}

/* " = 0" or " = -1 EINVAL", with the line's end. */
static void result(long r, int e)
{
	if (r == -1)
		out(" = -1 %s\n", ename(e));
	else
		out(" = %ld\n", r);
}

/* An address relative to the window: w+PAGES or w+PAGES+0xBYTES. */
static const char *rel(unsigned long a)
{
	static char b[4][48];
	static int i;
	long d = (long)(a - (unsigned long)win);
	long p = d >= 0 ? d / pg : -((-d + pg - 1) / pg);
	long r = d - p * pg;
	char *s = b[i++ & 3];

	if (r)
		snprintf(s, sizeof(b[0]), "w%+ld+%#lx", p, r);
	else
		snprintf(s, sizeof(b[0]), "w%+ld", p);
	return s;
}

/* A length: Np or Np+0xBYTES. */
static const char *len(unsigned long l)
{
	static char b[4][48];
	static int i;
	char *s = b[i++ & 3];

	if (l % pg)
		snprintf(s, sizeof(b[0]), "%lup+%#lx", l / pg, l % pg);
	else
		snprintf(s, sizeof(b[0]), "%lup", l / pg);
	return s;
}

static const char *prot_name(int prot)
{
	static char b[4][8];
	static int i;
	char *s = b[i++ & 3];

	if (!prot)
		return "NONE";
	snprintf(s, sizeof(b[0]), "%s%s%s", prot & PROT_READ ? "R" : "",
		 prot & PROT_WRITE ? "W" : "", prot & PROT_EXEC ? "X" : "");
	return s;
}

/* ---- guarded access to window pages ---- */

static sigjmp_buf fault_jmp;
static volatile sig_atomic_t fault_armed;

static void on_fault(int sig)
{
	if (!fault_armed) {
		/* Not ours: die of it. */
		signal(sig, SIG_DFL);
		return;
	}
	fault_armed = 0;
	siglongjmp(fault_jmp, sig);
}

/* Read the page's two first words, or write the second: 0, SIGSEGV or SIGBUS. */
static int touch(char *p, int write, long tag, long *w0, long *w1)
{
	volatile long *v = (volatile long *)p;

	switch (sigsetjmp(fault_jmp, 1)) {
	case 0:
		break;
	case SIGSEGV:
		return SIGSEGV;
	default:
		return SIGBUS;
	}
	fault_armed = 1;
	if (write) {
		v[1] = tag;
	} else {
		*w0 = v[0];
		*w1 = v[1];
	}
	fault_armed = 0;
	return 0;
}

/* ---- reading /proc ---- */

static char sbuf[8 << 20];

static long read_file(const char *name, char *buf, size_t size)
{
	size_t n = 0;
	ssize_t r;
	int f = open(name, O_RDONLY | O_CLOEXEC);

	if (f < 0)
		return -1;
	while (n < size - 1 && (r = read(f, buf + n, size - 1 - n)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			close(f);
			return -1;
		}
		n += r;
	}
	buf[n] = 0;
	close(f);
	return n;
}

static int write_file(const char *name, const char *s)
{
	int f = open(name, O_WRONLY | O_CLOEXEC), e;
	ssize_t r;

	if (f < 0)
		return -1;
	r = write(f, s, strlen(s));
	e = errno;
	close(f);
	errno = e;
	return r < 0 ? -1 : 0;
}

/* ---- the watchers' events (-e) ---- */

/*
 * A thread takes the events of the userfaultfd and of the fanotify group
 * while a step runs (a call that raises one waits until it is taken), and
 * writes them into ebuf; the step's state prints them.  Main starts it
 * with a byte on ctl and stops it with another, which it answers on ack
 * once it has taken every event: main changes uffd and fan only while it
 * is stopped.
 */
static int fan = -1;		/* the fanotify group, or -1 */
static int ctl[2] = { -1, -1 }, ack[2] = { -1, -1 };
static pid_t watch_pid;		/* the process whose thread watches */
static int watch_running;
static char ebuf[1 << 16];
static size_t elen;

__attribute__((format(printf, 1, 2)))
static void ev(const char *fmt, ...)
{
	va_list ap;
	int n;

	if (elen > sizeof(ebuf) - 256)
		return;
	va_start(ap, fmt);
	n = vsnprintf(ebuf + elen, sizeof(ebuf) - elen, fmt, ap);
	va_end(ap);
	if (n > 0)
		elen += n;
}

/* An offset in pages, or pages and bytes (the thread's own rel()). */
static void ev_off(const char *what, long long off)
{
	if (off % pg)
		ev(" %s=%lldp+%#llx", what, off / pg, off % pg);
	else
		ev(" %s=%lldp", what, off / pg);
}

static void take_uffd(void)
{
	struct uffd_msg msg;

	while (read(uffd, &msg, sizeof(msg)) == sizeof(msg)) {
		ev("    event uffd");
		if (msg.event == UFFD_EVENT_UNMAP) {
			ev(" unmap");
			ev_off("start", (long long)(msg.arg.remove.start - (unsigned long)win));
			ev_off("end", (long long)(msg.arg.remove.end - (unsigned long)win));
			ev("\n");
		} else {
			ev(" %#x\n", msg.event);
		}
	}
}

static void take_fanotify(void)
{
	struct fanotify_event_metadata buf[256], *md;
	struct fanotify_event_info_header *hdr;
	struct rfp_fan_range *range;
	struct fanotify_response resp;
	ssize_t n;
	size_t i;

	while ((n = read(fan, buf, sizeof(buf))) > 0) {
		for (md = buf; FAN_EVENT_OK(md, n); md = FAN_EVENT_NEXT(md, n)) {
			ev("    event fanotify %s",
			   md->mask & FAN_PRE_ACCESS ? "pre-access" : "other");
			for (i = md->metadata_len; i + sizeof(*hdr) <= md->event_len;
			     i += hdr->len) {
				hdr = (void *)((char *)md + i);
				if (!hdr->len)
					break;
				if (hdr->info_type != RFP_FAN_INFO_RANGE)
					continue;
				range = (void *)hdr;
				ev_off("off", (long long)range->offset);
				ev_off("len", (long long)range->count);
			}
			ev("\n");
			if (md->fd >= 0) {
				resp.fd = md->fd;
				resp.response = FAN_ALLOW;
				if (write(fan, &resp, sizeof(resp)) != sizeof(resp))
					ev("    event fanotify: answer: %s\n", strerror(errno));
				close(md->fd);
			}
		}
	}
}

static void *watcher(void *arg)
{
	struct pollfd p[3];
	int n, k;
	char c;

	(void)arg;
	while (read(ctl[0], &c, 1) == 1) {
		n = 0;
		p[n++] = (struct pollfd){ .fd = ctl[0], .events = POLLIN };
		if (uffd >= 0)
			p[n++] = (struct pollfd){ .fd = uffd, .events = POLLIN };
		if (fan >= 0)
			p[n++] = (struct pollfd){ .fd = fan, .events = POLLIN };
		for (;;) {
			if (poll(p, n, -1) < 0 && errno != EINTR)
				break;
			for (k = 1; k < n; k++) {
				if (!(p[k].revents & POLLIN))
					continue;
				if (p[k].fd == uffd)
					take_uffd();
				else
					take_fanotify();
			}
			if (p[0].revents & POLLIN)
				break;
		}
		/* Stop: what is left was raised before, take it too. */
		if (read(ctl[0], &c, 1) != 1)
			break;
		if (uffd >= 0)
			take_uffd();
		if (fan >= 0)
			take_fanotify();
		if (write(ack[1], "k", 1) != 1)
			break;
	}
	return NULL;
}

static void watch_begin(void)
{
	if (!watch_events || getpid() != watch_pid || watch_running)
		return;
	if (write(ctl[1], "g", 1) != 1)
		die("starting the watcher");
	watch_running = 1;
}

/* Stop the watcher and print what it took. */
static void watch_end(void)
{
	char c;

	if (!watch_events || getpid() != watch_pid || !watch_running)
		return;
	if (write(ctl[1], "s", 1) != 1 || read(ack[0], &c, 1) != 1)
		die("stopping the watcher");
	watch_running = 0;
	if (elen)
		out("%.*s", (int)elen, ebuf);
	elen = 0;
}

static void watch_setup(void)
{
	pthread_t t;

	if (!watch_events)
		return;
	watch_pid = getpid();
	fan = fanotify_init(FAN_CLASS_PRE_CONTENT | FAN_CLOEXEC | FAN_NONBLOCK,
			    O_RDWR | O_LARGEFILE);
	out("# fanotify: %s\n", fan >= 0 ? "pre-content group" : ename(errno));
	if (pipe2(ctl, O_CLOEXEC) || pipe2(ack, O_CLOEXEC))
		die("pipe");
	if (pthread_create(&t, NULL, watcher, NULL))
		die("pthread_create");
}

/* Split a buffer into lines in place: end this one, return the next. */
static char *next_line(char *line)
{
	char *next = strchr(line, '\n');

	if (!next)
		return line + strlen(line);
	*next = 0;
	return next + 1;
}

/* An smaps line that starts a VMA's entry: "start-end perms ...". */
static int vma_header(const char *line)
{
	return (*line >= '0' && *line <= '9') || (*line >= 'a' && *line <= 'f');
}

struct vma {
	unsigned long start, end, off;
	char perms[8];
	char name[96];
	long rss, locked, pkey;
	char flags[160];
};

#define MAX_VMAS 256
static struct vma vmas[MAX_VMAS];
static int nvmas;		/* of them, overlapping the window */
static int nmaps;		/* VMAs of the process */
static long shows[WIN];		/* object page each window page maps, or -1 */
static int sealed_pages, locked_vmas;

static void parse_smaps(void)
{
	char *line, *next, *p;
	struct vma *v = NULL;
	unsigned long wend = (unsigned long)win + WIN * pg;
	int i, n;

	nvmas = nmaps = 0;
	if (read_file("/proc/self/smaps", sbuf, sizeof(sbuf)) < 0) {
		out("  smaps: %s\n", ename(errno));
		return;
	}
	for (line = sbuf; *line; line = next) {
		next = next_line(line);
		if (vma_header(line)) {
			struct vma t = { .pkey = -1 };

			nmaps++;
			v = NULL;
			if (sscanf(line, "%lx-%lx %7s %lx %*s %*s%n", &t.start, &t.end,
				   t.perms, &t.off, &n) != 4)
				continue;
			if (t.end <= (unsigned long)win || t.start >= wend || nvmas == MAX_VMAS)
				continue;
			p = line + n;
			while (*p == ' ')
				p++;
			snprintf(t.name, sizeof(t.name), "%s", *p ? p : "-");
			v = &vmas[nvmas++];
			*v = t;
		} else if (!v) {
			continue;
		} else if (!strncmp(line, "Rss:", 4)) {
			v->rss = atol(line + 4);
		} else if (!strncmp(line, "Locked:", 7)) {
			v->locked = atol(line + 7);
		} else if (!strncmp(line, "ProtectionKey:", 14)) {
			v->pkey = atol(line + 14);
		} else if (!strncmp(line, "VmFlags:", 8)) {
			p = line + 8;
			while (*p == ' ')
				p++;
			snprintf(v->flags, sizeof(v->flags), "%s", p);
			n = strlen(v->flags);
			while (n && v->flags[n - 1] == ' ')
				v->flags[--n] = 0;
		}
	}

	sealed_pages = locked_vmas = 0;
	for (i = 0; i < WIN; i++)
		shows[i] = -1;
	for (n = 0; n < nvmas; n++) {
		v = &vmas[n];
		for (i = 0; i < WIN; i++) {
			unsigned long a = (unsigned long)win + i * pg;

			if (a < v->start || a >= v->end)
				continue;
			if (v->perms[3] == 's')
				shows[i] = v->off / pg + (a - v->start) / pg;
			if (strstr(v->flags, "sl"))
				sealed_pages++;
		}
		if (strstr(v->flags, "lo"))
			locked_vmas++;
	}
}

/* ---- the syscall's own rule, and the remap done with mmap() (-m) ---- */

/* The VMA at or after @a, as smaps says: its file (dev, ino) and flags. */
struct vma_id {
	unsigned long start, end;
	char perms[8], dev[16], flags[160];
	unsigned long ino;
	long pkey;
};

static int vma_from(unsigned long a, struct vma_id *v)
{
	char *line, *next;
	int in = 0, n;

	if (read_file("/proc/self/smaps", sbuf, sizeof(sbuf)) < 0)
		return -1;
	for (line = sbuf; *line; line = next) {
		next = next_line(line);
		if (vma_header(line)) {
			if (in)
				return 0;
			memset(v, 0, sizeof(*v));
			v->pkey = -1;
			if (sscanf(line, "%lx-%lx %7s %*x %15s %lu%n", &v->start, &v->end,
				   v->perms, v->dev, &v->ino, &n) != 5)
				continue;
			in = v->end > a;
		} else if (in && !strncmp(line, "ProtectionKey:", 14)) {
			v->pkey = atol(line + 14);
		} else if (in && !strncmp(line, "VmFlags:", 8)) {
			snprintf(v->flags, sizeof(v->flags), "%s", line + 8);
		}
	}
	return in ? 0 : -1;
}

static int has_flag(const struct vma_id *v, const char *f)
{
	char b[8];

	snprintf(b, sizeof(b), " %s ", f);
	return strstr(v->flags, b) != NULL;
}

/*
 * remap_file_pages()'s own checks, before it calls mmap(): NULL if the
 * remap is an mmap() of the range, with *@vma the VMA at start; else why
 * it is EINVAL.
 */
static const char *remap_rule(unsigned long start, unsigned long size,
			      unsigned long prot, unsigned long pgoff,
			      struct vma_id *vma)
{
	struct vma_id next, prev;

	if (prot)
		return "prot";
	start &= ~(pg - 1);
	size &= ~(pg - 1);
	if (start + size <= start)
		return "size";
	if (pgoff + size / pg < pgoff)
		return "pgoff";
	if (vma_from(start, vma) || vma->start > start)
		return "no-vma";
	if (!has_flag(vma, "sh"))
		return "not-shared";
	prev = *vma;
	while (start + size > prev.end) {
		if (vma_from(prev.end, &next) || next.start != prev.end)
			return "hole";
		if (strcmp(next.dev, vma->dev) || next.ino != vma->ino)
			return "other-file";
		if (strcmp(next.flags, vma->flags) || next.pkey != vma->pkey)
			return "other-flags";
		prev = next;
	}
	return NULL;
}

/*
 * The remap as mmap() of the VMA's file, through the descriptor that the
 * window was mapped from: a file opened anew (/proc/self/map_files) is
 * another struct file, whose VMAs never merge with the window's.  0, or
 * -1 and errno.
 */
static long remap_by_mmap(unsigned long start, unsigned long size,
			  unsigned long pgoff, unsigned long flags,
			  const struct vma_id *vma)
{
	int prot = (vma->perms[0] == 'r' ? PROT_READ : 0) |
		   (vma->perms[1] == 'w' ? PROT_WRITE : 0) |
		   (vma->perms[2] == 'x' ? PROT_EXEC : 0);
	int mflags = MAP_SHARED | MAP_FIXED | MAP_POPULATE | (flags & MAP_NONBLOCK);
	struct stat st;
	void *m;

	if (has_flag(vma, "lo"))
		mflags |= MAP_LOCKED;
	/* Every shared VMA of a file segment is of fd's file. */
	if (fstat(fd, &st) || st.st_ino != vma->ino) {
		errno = EBADF;
		return -1;
	}
	start &= ~(pg - 1);
	size &= ~(pg - 1);
	m = mmap((void *)start, size, prot, mflags, fd, (off_t)(pgoff * pg));
	return m == MAP_FAILED ? -1 : 0;
}

/* Push the per-CPU LRU and mlock batches and vmstat diffs out, then read. */
static void read_meminfo(long *mlocked, long *unevictable)
{
	char *p;

	madvise(dummy, pg, MADV_COLD);	/* lru_add_drain() on this CPU */
	write_file("/proc/sys/vm/stat_refresh", "1");
	*mlocked = *unevictable = 0;
	if (read_file("/proc/meminfo", sbuf, sizeof(sbuf)) < 0)
		return;
	p = strstr(sbuf, "\nMlocked:");
	if (p)
		*mlocked = atol(p + 9);
	p = strstr(sbuf, "\nUnevictable:");
	if (p)
		*unevictable = atol(p + 13);
}

/* The window's pages, read under a guard. */
static void digest(const char *label)
{
	long w0, w1;
	int i, sig;

	out("  %s:", label);
	for (i = 0; i < WIN; i++) {
		sig = touch(win + i * pg, 0, 0, &w0, &w1);
		if (sig == SIGSEGV) {
			out(" S");
		} else if (sig) {
			out(" B");
		} else if ((unsigned long)w0 >> 32 == MAGIC) {
			out(" %lu", w0 & 0xffff);
			if ((w0 >> 16) & 0xffff)
				out(".%lu", (w0 >> 16) & 0xffff);
		} else if (w0 == 0) {
			out(" z");
		} else {
			out(" ?");
		}
		if (!sig && w1)
			out(":%ld", w1);
	}
	out("\n");
}

/* The state after a step: the window's VMAs, locked memory, its pages. */
static void state(int mlock_step)
{
	long ml, ue;
	int i;

	parse_smaps();
	for (i = 0; i < nvmas; i++) {
		struct vma *v = &vmas[i];

		out("    vma %s..%s %s off=%lu rss=%ld locked=%ld", rel(v->start),
		    rel(v->end), v->perms, v->off / pg, v->rss, v->locked);
		if (v->pkey >= 0)
			out(" pkey=%ld", v->pkey);
		out(" flags=%s name=%s\n", v->flags, v->name);
	}
	if (mlock_step || locked_vmas) {
		read_meminfo(&ml, &ue);
		out("    meminfo: Mlocked %+ld kB Unevictable %+ld kB\n",
		    ml - base_mlocked, ue - base_unevictable);
	}
	digest("pages");
	watch_end();
}

/* ---- the object ---- */

static char pbuf[65536] __attribute__((aligned(4096)));

/* Pages [from, to) of the object get their pattern, generation g. */
static long fill(long from, long to, int g)
{
	long p;

	for (p = from; p < to; p++) {
		memset(pbuf, 0, pg);
		((unsigned long *)pbuf)[0] = MAGIC << 32 | (unsigned long)g << 16 | p;
		if (backing == B_SHANON)
			memcpy(win + p * pg, pbuf, pg);
		else if (pwrite(fd, pbuf, pg, p * pg) != pg)
			return -1;
	}
	return 0;
}

/* ---- the steps ---- */

/* A sub-range of the window: mostly 1 to 8 pages, sometimes all of it. */
static void subrange(unsigned long *a, unsigned long *l)
{
	long sp, n;

	if (rnd(8) == 0) {
		sp = 0;
		n = WIN;
	} else {
		sp = rnd(WIN);
		n = 1 + rnd(8);
		if (sp + n > WIN)
			n = WIN - sp;
	}
	*a = (unsigned long)win + sp * pg;
	*l = n * pg;
}

static const char *label(const char *prefix)
{
	static char b[32];

	snprintf(b, sizeof(b), "%s%ld", prefix, step);
	return b;
}

static void op_remap(const char *lbl, int whole_noop)
{
	static const unsigned long flag_junk[] = {
		MAP_POPULATE, MAP_FIXED | MAP_NONBLOCK, MAP_PRIVATE, 0x80000 | MAP_NONBLOCK,
	};
	unsigned long start, size, pgoff, prot = 0, flags = 0, n;
	struct vma_id vma;
	const char *why;
	long sp, r;
	int k, e, beyond;

	k = rnd(100);
	sp = k < 80 ? (long)rnd(WIN) : (long)rnd(WIN + 2 * GUARD) - GUARD;
	start = (unsigned long)win + sp * pg;
	k = rnd(100);
	if (k < 68) {
		size = (1 + rnd(8)) * pg;
	} else if (k < 78) {
		size = (WIN - (sp > 0 ? sp : 0)) * pg;
	} else if (k < 86) {
		sp = 0;
		start = (unsigned long)win;
		size = WIN * pg;
	} else if (k < 93) {
		size = rnd(WIN + 8) * pg;
	} else if (k < 96) {
		size = rnd(pg);
	} else {
		size = (1 + rnd(4)) * pg + 1 + rnd(pg - 1);
	}
	if (rnd(20) == 0)
		start += 1 + rnd(pg - 1);
	/* Mostly file pages, often what the start shows already (a remap that
	 * may change nothing), sometimes across or past EOF, or huge; long
	 * ranges mostly inside the file, or the whole window is soon past EOF. */
	n = (size + pg - 1) / pg;
	k = rnd(100);
	if (k >= 80 && n > 8 && rnd(4))
		k = 0;
	if (k < 55) {
		pgoff = n < OBJ ? rnd(OBJ - n + 1) : 0;
	} else if (k < 80) {
		pgoff = sp >= 0 && sp < WIN && shows[sp] >= 0 ? (unsigned long)shows[sp] : rnd(OBJ);
	} else if (k < 93) {
		pgoff = OBJ - n / 2 - 1 + rnd(4);
	} else {
		static const unsigned long huge[] = {
			1UL << 40, (0x7fffffffffffffffUL >> 12) - 1, ~0UL - 3, 1UL << 52,
			(0x7fffffffffffffffUL >> 12) - 7,
		};
		pgoff = huge[rnd(5)];
	}
	if (whole_noop) {
		start = (unsigned long)win;
		size = WIN * pg;
		pgoff = shows[0] >= 0 ? (unsigned long)shows[0] : 0;
	}
	if (rnd(40) == 0)
		prot = rnd(2) ? PROT_READ : PROT_READ | PROT_WRITE;
	k = rnd(100);
	if (k < 50)
		flags = 0;
	else if (k < 95)
		flags = MAP_NONBLOCK;
	else
		flags = flag_junk[rnd(4)];

	out("%s remap %s %s prot=%#lx pgoff=", lbl, rel(start), len(size), prot);
	out(pgoff < (1UL << 20) ? "%lu" : "%#lx", pgoff);
	out(" flags=%#lx", flags);
	why = remap_rule(start, size, prot, pgoff, &vma);
	/* mmap() takes a byte offset: pgoff past ~0UL / pg has no mmap(). */
	beyond = !why && pgoff > ~0UL / pg;
	out(" rule=%s%s%s", why ? "EINVAL(" : beyond ? "no-mmap-offset" : "mmap",
	    why ? why : "", why ? ")" : "");
	if (!reference || backing == B_SHANON || beyond)
		r = rfp_syscall((void *)start, size, prot, pgoff, flags);
	else if (why) {
		r = -1;
		errno = EINVAL;
	} else
		r = remap_by_mmap(start, size, pgoff, flags, &vma);
	e = errno;
	result(r, e);
}

static void op_mmap(const char *lbl)
{
	unsigned long a, l, off;
	int prot = rnd(5) ? PROT_READ | PROT_WRITE : PROT_READ;
	void *m;
	int e;

	subrange(&a, &l);
	/* Inside the file, or now and then across its end. */
	off = rnd(5) ? rnd(OBJ - l / pg + 1) : OBJ - l / pg / 2 + rnd(4);
	if (backing == B_SHANON) {
		out("%s mmap %s %s %s MAP_SHARED|MAP_ANONYMOUS|MAP_FIXED", lbl, rel(a), len(l),
		    prot_name(prot));
		m = mmap((void *)a, l, prot, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	} else {
		out("%s mmap %s %s %s MAP_SHARED|MAP_FIXED off=%lu", lbl, rel(a), len(l),
		    prot_name(prot), off);
		m = mmap((void *)a, l, prot, MAP_SHARED | MAP_FIXED, fd, off * pg);
	}
	e = errno;
	result(m == MAP_FAILED ? -1 : m == (void *)a ? 0 : 1, e);
}

static void op_madvise(void)
{
	static const struct { int advice; const char *name; } adv[] = {
		{ MADV_DONTFORK, "DONTFORK" }, { MADV_DOFORK, "DOFORK" },
		{ MADV_DONTDUMP, "DONTDUMP" }, { MADV_DODUMP, "DODUMP" },
		{ MADV_RANDOM, "RANDOM" }, { MADV_SEQUENTIAL, "SEQUENTIAL" },
		{ MADV_NORMAL, "NORMAL" }, { MADV_HUGEPAGE, "HUGEPAGE" },
		{ MADV_NOHUGEPAGE, "NOHUGEPAGE" }, { MADV_DONTNEED, "DONTNEED" },
	};
	unsigned long a, l;
	int i = rnd(sizeof(adv) / sizeof(adv[0])), e;
	long r;

	subrange(&a, &l);
	out("%ld madvise %s %s %s", step, rel(a), len(l), adv[i].name);
	r = madvise((void *)a, l, adv[i].advice);
	e = errno;
	result(r, e);
}

static void op_mprotect(const char *lbl, int prot)
{
	unsigned long a, l;
	long r;
	int e;

	subrange(&a, &l);
	if (prot < 0) {
		int k = rnd(20);

		prot = k < 9 ? PROT_READ : k < 18 ? PROT_READ | PROT_WRITE : PROT_NONE;
	}
	out("%s mprotect %s %s %s", lbl, rel(a), len(l), prot_name(prot));
	r = mprotect((void *)a, l, prot);
	e = errno;
	result(r, e);
}

static void op_mlock(void)
{
	unsigned long a, l;
	long r;
	int e, lock = rnd(2);

	subrange(&a, &l);
	out("%ld %s %s %s", step, lock ? "mlock" : "munlock", rel(a), len(l));
	r = lock ? mlock((void *)a, l) : munlock((void *)a, l);
	e = errno;
	result(r, e);
}

static void op_mlockall(void)
{
	long r;
	int e;

	if (rnd(2)) {
		out("%ld mlockall MCL_FUTURE", step);
		r = mlockall(MCL_FUTURE);
	} else {
		out("%ld munlockall", step);
		r = munlockall();
	}
	e = errno;
	result(r, e);
}

static void op_mseal(void)
{
	unsigned long a = (unsigned long)win + rnd(WIN) * pg, l = (1 + rnd(4)) * pg;
	long r;
	int e;

	if (a + l > (unsigned long)win + WIN * pg)
		l = (unsigned long)win + WIN * pg - a;
	out("%ld mseal %s %s", step, rel(a), len(l));
	r = syscall(SYS_mseal, a, l, 0);
	e = errno;
	result(r, e);
}

static void op_memfd_seal(void)
{
	int seal = rnd(2) ? F_SEAL_FUTURE_WRITE : F_SEAL_WRITE, e;
	long r;

	out("%ld fcntl F_ADD_SEALS %s", step,
	    seal == F_SEAL_WRITE ? "F_SEAL_WRITE" : "F_SEAL_FUTURE_WRITE");
	r = fcntl(fd, F_ADD_SEALS, seal);
	e = errno;
	result(r, e);
	out("    seals %#x\n", fcntl(fd, F_GET_SEALS));
}

static void op_anon_name(void)
{
	static const char *const names[] = { "rfp-a", "rfp-b", NULL };
	const char *name = names[rnd(3)];
	unsigned long a, l;
	long r;
	int e;

	subrange(&a, &l);
	out("%ld prctl PR_SET_VMA_ANON_NAME %s %s %s", step, rel(a), len(l),
	    name ? name : "NULL");
	r = prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, a, l, name);
	e = errno;
	result(r, e);
}

static void op_uffd(void)
{
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	unsigned long a, l;
	long r;
	int e;

	if (uffd < 0) {
		struct uffdio_api api = {
			.api = UFFD_API,
			.features = UFFD_FEATURE_SIGBUS |
				    (watch_events ? UFFD_FEATURE_EVENT_UNMAP : 0),
		};

		out("%ld userfaultfd", step);
		r = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
		e = errno;
		result(r < 0 ? -1 : 0, e);
		if (r < 0)
			return;
		/* The watcher takes the new descriptor's events from now. */
		watch_end();
		uffd = r;
		watch_begin();
		out("%ld ioctl UFFDIO_API SIGBUS", step);
		r = ioctl(uffd, UFFDIO_API, &api);
		e = errno;
		result(r, e);
		if (r < 0) {
			watch_end();
			close(uffd);
			uffd = -1;
			watch_begin();
			return;
		}
	}
	subrange(&a, &l);
	reg.range.start = a;
	reg.range.len = l;
	out("%ld ioctl UFFDIO_REGISTER %s %s MISSING", step, rel(a), len(l));
	r = ioctl(uffd, UFFDIO_REGISTER, &reg);
	e = errno;
	result(r, e);
}

static void op_pkey(void)
{
	unsigned long a, l;
	long r;
	int e, key;

	if (pkey == -2) {
		out("%ld pkey_alloc 0 PKEY_DISABLE_WRITE", step);
		r = syscall(SYS_pkey_alloc, 0, PKEY_DISABLE_WRITE);
		pkey_errno = errno;
		result(r, pkey_errno);
		pkey = r < 0 ? -1 : r;
		return;
	}
	if (pkey < 0) {
		out("%ld pkey_mprotect: no key (pkey_alloc: %s)\n", step, ename(pkey_errno));
		return;
	}
	subrange(&a, &l);
	key = rnd(3) ? pkey : 0;
	out("%ld pkey_mprotect %s %s RW %d", step, rel(a), len(l), key);
	r = syscall(SYS_pkey_mprotect, a, l, PROT_READ | PROT_WRITE, key);
	e = errno;
	result(r, e);
}

static void wait_child(pid_t pid)
{
	int st;

	if (pid < 0) {
		out("    fork: %s\n", ename(errno));
		return;
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(st))
		out("    child killed by SIG%s\n", sigabbrev_np(WTERMSIG(st)));
	else
		out("    child exit %d\n", WEXITSTATUS(st));
}

/* A child that sets what cannot be undone, then remaps; its own trace. */
static void op_child(int mdwe)
{
	pid_t pid;
	long r;
	int e, k;

	out("%ld fork %s\n", step, mdwe ? "mdwe" : "read-implies-exec");
	flush_out();
	pid = fork();
	if (pid == 0) {
		char lbl[32];
		int j = 1;

		if (mdwe) {
			out("%ld.%d mprotect w+0 %dp RWX", step, j++, WIN);
			r = mprotect(win, WIN * pg, PROT_READ | PROT_WRITE | PROT_EXEC);
			e = errno;
			result(r, e);
			state(0);
			out("%ld.%d prctl PR_SET_MDWE REFUSE_EXEC_GAIN", step, j++);
			r = prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN, 0, 0, 0);
		} else {
			out("%ld.%d personality READ_IMPLIES_EXEC", step, j++);
			r = personality(READ_IMPLIES_EXEC);
			r = r < 0 ? -1 : 0;
		}
		e = errno;
		result(r, e);
		state(0);
		/* A no-op remap of the whole window, a random one, an mmap, an mprotect. */
		for (k = 0; k < 4; k++) {
			snprintf(lbl, sizeof(lbl), "%ld.%d", step, j++);
			if (k < 2)
				op_remap(lbl, k == 0);
			else if (k == 2)
				op_mmap(lbl);
			else
				op_mprotect(lbl, PROT_READ | PROT_WRITE | PROT_EXEC);
			state(0);
		}
		flush_out();
		_exit(0);
	}
	wait_child(pid);
}

/* fork(); the child reads the window and says what it sees. */
static void op_fork(void)
{
	pid_t pid;

	out("%ld fork reader\n", step);
	flush_out();
	pid = fork();
	if (pid == 0) {
		digest("child");
		flush_out();
		_exit(0);
	}
	wait_child(pid);
}

static void op_write(void)
{
	long i = rnd(WIN);
	int sig = touch(win + i * pg, 1, step, NULL, NULL);

	out("%ld write w%+ld = %s\n", step, i,
	    sig == SIGSEGV ? "SIGSEGV" : sig ? "SIGBUS" : "ok");
}

/* ftruncate() to SIZE pages; what grows comes back with a new generation. */
static void truncate_to(const char *lbl, long size)
{
	long r;
	int e;

	out("%s ftruncate %ldp", lbl, size);
	r = ftruncate(fd, size * pg);
	e = errno;
	result(r, e);
	if (r < 0)
		return;
	if (size > obj_size) {
		out("    refill %ld..%ld gen %d", obj_size, size, gen + 1);
		r = fill(obj_size, size, ++gen);
		e = errno;
		result(r, e);
	}
	obj_size = size;
}

/* Shrink the object for a few steps: mostly past the window's first view. */
static void op_ftruncate(void)
{
	truncate_to(label(""), rnd(4) ? WIN + rnd(WIN) : rnd(WIN));
	trunc_left = 2 + rnd(8);
}

static void op_max_map_count(void)
{
	char b[32];
	long k = rnd(4), r;
	int e;

	snprintf(b, sizeof(b), "%ld", nmaps + k);
	out("%ld max_map_count maps+%ld for some steps", step, k);
	r = write_file("/proc/sys/vm/max_map_count", b);
	e = errno;
	result(r, e);
	mmc_left = 2 + rnd(5);
}

static void restore_max_map_count(void)
{
	char b[32];
	long r;
	int e;

	snprintf(b, sizeof(b), "%ld", orig_max_map_count);
	out("    max_map_count restored");
	r = write_file("/proc/sys/vm/max_map_count", b);
	e = errno;
	result(r, e);
	mmc_left = 0;
}

enum op {
	OP_REMAP, OP_MMAP, OP_MADVISE, OP_MPROTECT, OP_MLOCK, OP_MLOCKALL,
	OP_MSEAL, OP_MEMFD_SEAL, OP_ANON_NAME, OP_UFFD, OP_MDWE, OP_PKEY,
	OP_PERSONALITY, OP_FORK, OP_WRITE, OP_FTRUNCATE, OP_MAX_MAP_COUNT, NR_OPS
};
/* Weights, out of their sum. */
static const int weight[NR_OPS] = {
	[OP_REMAP] = 34, [OP_MMAP] = 6, [OP_MADVISE] = 12, [OP_MPROTECT] = 7,
	[OP_MLOCK] = 6, [OP_MLOCKALL] = 2, [OP_MSEAL] = 1, [OP_MEMFD_SEAL] = 2,
	[OP_ANON_NAME] = 2, [OP_UFFD] = 2, [OP_MDWE] = 1, [OP_PKEY] = 2,
	[OP_PERSONALITY] = 1, [OP_FORK] = 4, [OP_WRITE] = 14, [OP_FTRUNCATE] = 2,
	[OP_MAX_MAP_COUNT] = 2,
};

static enum op pick_op(void)
{
	int sum = 0, i, k;

	for (i = 0; i < NR_OPS; i++)
		sum += weight[i];
	for (;;) {
		k = rnd(sum);
		for (i = 0; k >= weight[i]; i++)
			k -= weight[i];
		if (i == OP_MEMFD_SEAL && backing != B_MEMFD)
			continue;
		if (i == OP_ANON_NAME && backing != B_SHANON)
			continue;
		if (i == OP_FTRUNCATE && (backing == B_SHANON || trunc_left))
			continue;
		if (i == OP_MAX_MAP_COUNT && mmc_left)
			continue;
		return i;
	}
}

static void do_step(void)
{
	enum op op = pick_op();

	watch_begin();
	switch (op) {
	case OP_REMAP: op_remap(label(""), 0); break;
	case OP_MMAP: op_mmap(label("")); break;
	case OP_MADVISE: op_madvise(); break;
	case OP_MPROTECT: op_mprotect(label(""), -1); break;
	case OP_MLOCK: op_mlock(); break;
	case OP_MLOCKALL: op_mlockall(); break;
	case OP_MSEAL: op_mseal(); break;
	case OP_MEMFD_SEAL: op_memfd_seal(); break;
	case OP_ANON_NAME: op_anon_name(); break;
	case OP_UFFD: op_uffd(); break;
	case OP_MDWE: op_child(1); break;
	case OP_PKEY: op_pkey(); break;
	case OP_PERSONALITY: op_child(0); break;
	case OP_FORK: op_fork(); break;
	case OP_WRITE: op_write(); break;
	case OP_FTRUNCATE: op_ftruncate(); break;
	case OP_MAX_MAP_COUNT: op_max_map_count(); break;
	case NR_OPS: break;
	}
	if (mmc_left && --mmc_left == 0)
		restore_max_map_count();
	if (trunc_left && --trunc_left == 0)
		truncate_to("   ", OBJ);
	state(op == OP_MLOCK || op == OP_MLOCKALL);
}

/* ---- segments ---- */

/* CAP_IPC_LOCK in or out of the effective set (it stays permitted). */
static int cap_ipc_lock(int on)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	if (on)
		d[0].effective |= 1U << CAP_IPC_LOCK;
	else
		d[0].effective &= ~(1U << CAP_IPC_LOCK);
	return syscall(SYS_capset, &h, d);
}

/*
 * -e: the pre-content mark on the segment's file, and a descriptor of it
 * opened after the mark, since the events are for those.
 */
static void watch_file(void)
{
	long r;
	int e;

	out("  fanotify_mark FAN_PRE_ACCESS");
	r = fanotify_mark(fan, FAN_MARK_ADD, FAN_PRE_ACCESS, fd, NULL);
	e = errno;
	result(r, e);
	if (r)
		return;
	r = open(path, O_RDWR | O_CLOEXEC);
	if (r < 0)
		die("reopening the file after its mark");
	close(fd);
	fd = r;
}

static void segment_begin(int seg, long len)
{
	long r;
	int e;

	out("# segment %d: %s, %ld steps%s\n", seg, backing_name[backing], len,
	    memlimit ? ", RLIMIT_MEMLOCK 8 pages without CAP_IPC_LOCK" : "");
	/* Said in both traces of -m's comparison, by rule. */
	if (watch_events && backing == B_SHANON)
		out("# shared anonymous memory: no descriptor maps the window's own file, so its remaps are the kernel's with -m too\n");
	res_len = (GUARD + OBJ + GUARD) * pg;
	res = mmap(NULL, res_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (res == MAP_FAILED)
		die("reserving address space");
	win = res + GUARD * pg;
	gen = 0;
	obj_size = OBJ;
	if (backing == B_SHANON) {
		/* OBJ pages of shared memory, then all but the window unmapped. */
		if (mmap(win, OBJ * pg, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
			die("mmap shared anonymous memory");
		fill(0, OBJ, 0);
		if (mmap(win + WIN * pg, (OBJ - WIN) * pg, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) == MAP_FAILED)
			die("mmap the guard after the window");
	} else {
		if (backing == B_FILE) {
			snprintf(path, sizeof(path), "%s/rfp-diff.%d", dir, seg);
			fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		} else {
			fd = memfd_create("rfp-diff", MFD_ALLOW_SEALING | MFD_CLOEXEC);
		}
		if (fd < 0)
			die(backing == B_FILE ? path : "memfd_create");
		if (ftruncate(fd, OBJ * pg) || fill(0, OBJ, 0))
			die("filling the object");
		if (backing == B_FILE && fan >= 0)
			watch_file();
		/* Mapping the window raises a pre-content event of its own. */
		watch_begin();
		if (mmap(win, WIN * pg, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
			 fd, 0) == MAP_FAILED)
			die("mmap the window");
	}
	if (memlimit) {
		struct rlimit rl;

		getrlimit(RLIMIT_MEMLOCK, &old_memlock);
		rl.rlim_cur = 8 * pg;
		rl.rlim_max = old_memlock.rlim_max;
		out("  capset -CAP_IPC_LOCK");
		r = cap_ipc_lock(0);
		e = errno;
		result(r, e);
		out("  setrlimit RLIMIT_MEMLOCK 8p");
		r = setrlimit(RLIMIT_MEMLOCK, &rl);
		e = errno;
		result(r, e);
	}
	state(0);
}

static void segment_end(int seg)
{
	long r;
	int e;

	if (mmc_left)
		restore_max_map_count();
	trunc_left = 0;
	if (uffd >= 0)
		close(uffd);
	uffd = -1;
	out("# end of segment %d: munlockall", seg);
	r = munlockall();
	e = errno;
	result(r, e);
	out("  munmap the window and its guards");
	r = munmap(res, res_len);
	e = errno;
	result(r, e);
	if (fd >= 0)
		close(fd);
	fd = -1;
	if (backing == B_FILE)
		unlink(path);
	if (memlimit) {
		setrlimit(RLIMIT_MEMLOCK, &old_memlock);
		cap_ipc_lock(1);
	}
}

static void setup(void)
{
	struct sigaction sa = { .sa_handler = on_fault };
	cpu_set_t cpus;
	char b[32];

	pg = sysconf(_SC_PAGESIZE);
	if (pg > (long)sizeof(pbuf))
		die("page size");
	/* One CPU: the per-CPU batches behind Mlocked and Unevictable are then ours. */
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus))
		die("sched_setaffinity to CPU 0");
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL) || sigaction(SIGBUS, &sa, NULL))
		die("sigaction");
	dummy = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (dummy == MAP_FAILED)
		die("mmap a page");
	if (read_file("/proc/sys/vm/max_map_count", b, sizeof(b)) < 0)
		die("/proc/sys/vm/max_map_count");
	orig_max_map_count = atol(b);
	read_meminfo(&base_mlocked, &base_unevictable);
	watch_setup();
}

int main(int argc, char **argv)
{
	int c, seg;

	while ((c = getopt(argc, argv, "s:n:d:em")) != -1) {
		switch (c) {
		case 's': seed = strtoul(optarg, NULL, 0); break;
		case 'n': steps = atol(optarg); break;
		case 'd': dir = optarg; break;
		case 'e': watch_events = 1; break;
		case 'm': reference = 1; break;
		default: goto usage;
		}
	}
	if (!dir || steps <= 0 || optind != argc)
		goto usage;

	/* splitmix64 of the seed: a non-zero xorshift state for every seed. */
	rnd_state = seed + 0x9e3779b97f4a7c15UL;
	rnd_state = (rnd_state ^ (rnd_state >> 30)) * 0xbf58476d1ce4e5b9UL;
	rnd_state = (rnd_state ^ (rnd_state >> 27)) * 0x94d049bb133111ebUL;
	rnd_state ^= rnd_state >> 31;
	if (!rnd_state)
		rnd_state = 1;

	setup();
	out("# rfp-diff: seed %lu steps %ld dir %s\n", seed, steps, dir);
	for (seg = 0; step < steps; seg++) {
		long n = 30 + rnd(40), k;

		if (seg == 0) {
			backing = B_FILE;
		} else {
			k = rnd(4);
			backing = k < 2 ? B_FILE : k == 2 ? B_MEMFD : B_SHANON;
		}
		memlimit = seg > 0 && rnd(4) == 0;
		if (n > steps - step)
			n = steps - step;
		segment_begin(seg, n);
		for (k = 0; k < n; k++) {
			step++;
			do_step();
			if (sealed_pages >= WIN / 2) {
				out("    (half the window is sealed: a new window)\n");
				break;
			}
		}
		segment_end(seg);
	}
	out("# rfp-diff: seed %lu steps %ld done\n", seed, steps);
	flush_out();
	return 0;

usage:
	fprintf(stderr, "usage: rfp-diff -s SEED -n STEPS -d DIR [-e] [-m]\n");
	return 1;
}
