// SPDX-License-Identifier: GPL-2.0
/*
 * rfp-compat-test: librfp-compat.so, run under rfp-compat on a kernel that
 * refuses remap_file_pages() (vm.remap_file_pages = 0, or a kernel built
 * without it).  Every case checks that the shim emulated the calls it
 * made (rfp_compat_emulated()), so that a kernel doing the remaps itself
 * cannot make them pass.
 *
 *   rfp-compat rfp-compat-test [kselftest harness options]
 */
#define _GNU_SOURCE
#include <sched.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <linux/filter.h>
#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/ioctl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#include "kselftest_harness.h"

/* sighold(), sigset() and sigignore() are what a case tries. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include "rfp-tool.h"

#define PAGES 8

/* The marker of the shim's own call (shim-map.c). */
#ifdef __LP64__
#define SHIM_MARKER	0x5266704352667043UL
#else
#define SHIM_MARKER	0x52667043UL
#endif

static long page;

/* How many calls the shim has emulated; -1 when it is not loaded. */
static long emulated(void)
{
	unsigned long (*fn)(void) = dlsym(RTLD_DEFAULT, "rfp_compat_emulated");

	return fn ? (long)fn() : -1;
}

/*
 * The raw syscall as a program makes it without glibc's syscall(), which
 * the shim answers itself: the seccomp filter's case.  libc's own
 * syscall(), past the shim's, makes it so.
 */
static long (*libc_syscall)(long nr, ...);

__attribute__((constructor))
static void find_libc_syscall(void)
{
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);

	libc_syscall = libc ? dlsym(libc, "syscall") : NULL;
	if (!libc_syscall)
		libc_syscall = syscall;
}

static int raw_rfp(void *addr, unsigned long npages, unsigned long pgoff,
		   int flags)
{
	return libc_syscall(SYS_remap_file_pages, addr, npages * page, 0,
			    pgoff, flags, 0L);
}

/* syscall(), as PyPy-STM makes the call. */
static int syscall_rfp(void *addr, unsigned long npages, unsigned long pgoff,
		       int flags)
{
	return rfp_remap(addr, npages, pgoff, flags);
}

static int glibc_rfp(void *addr, unsigned long npages, unsigned long pgoff,
		     int flags)
{
	return remap_file_pages(addr, npages * page, 0, pgoff, flags);
}

enum backing { TMPFS_CLOSED, SHARED_ANON, MEMFD_CLOSED };

/*
 * A window of PAGES pages over a new object whose page i starts with
 * "page i"; the descriptor is closed (and the file unlinked) before the
 * first remap, so the shim has to find the file on its own.
 */
static char *make_window(enum backing b)
{
	char path[] = "/dev/shm/rfp-compat-XXXXXX";
	char *w;
	int fd = -1, i;

	if (b == SHARED_ANON) {
		w = mmap(NULL, PAGES * page, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	} else {
		fd = b == TMPFS_CLOSED ? mkstemp(path) : memfd_create("rfp-test", 0);
		if (fd < 0 || ftruncate(fd, PAGES * page))
			return MAP_FAILED;
		if (b == TMPFS_CLOSED)
			unlink(path);
		w = mmap(NULL, PAGES * page, PROT_READ | PROT_WRITE, MAP_SHARED,
			 fd, 0);
		close(fd);
	}
	if (w == MAP_FAILED)
		return w;
	for (i = 0; i < PAGES; i++)
		sprintf(w + i * page, "page %d", i);
	return w;
}

/* Which object page the window's page I shows (its "page N" header). */
static int shows(char *w, int i)
{
	int n = -1;

	sscanf(w + i * page, "page %d", &n);
	return n;
}

/* Remaps the window backwards with RFP (one call a page); 0 or errno. */
static int reverse(char *w, int (*rfp)(void *, unsigned long, unsigned long, int))
{
	int i;

	for (i = 0; i < PAGES; i++)
		if (rfp(w + i * page, 1, PAGES - 1 - i, 0))
			return errno;
	return 0;
}

static int reversed(char *w)
{
	int i;

	for (i = 0; i < PAGES; i++)
		if (shows(w, i) != PAGES - 1 - i)
			return 0;
	return 1;
}

FIXTURE(window) {
	char *w;
	long emulated;
};

FIXTURE_VARIANT(window) {
	enum backing backing;
};

FIXTURE_VARIANT_ADD(window, tmpfs_closed_unlinked) {
	.backing = TMPFS_CLOSED,
};

FIXTURE_VARIANT_ADD(window, shared_anonymous) {
	.backing = SHARED_ANON,
};

FIXTURE_VARIANT_ADD(window, memfd_closed) {
	.backing = MEMFD_CLOSED,
};

FIXTURE_SETUP(window)
{
	page = sysconf(_SC_PAGESIZE);
	self->emulated = emulated();
	if (self->emulated < 0)
		SKIP(return, "librfp-compat.so is not loaded: run this under rfp-compat");
	self->w = make_window(variant->backing);
	ASSERT_NE(self->w, MAP_FAILED);
}

FIXTURE_TEARDOWN(window)
{
	if (self->w && self->w != MAP_FAILED)
		munmap(self->w, PAGES * page);
}

/* The shim, not the kernel, made N calls since setup. */
#define ASSERT_EMULATED(n) ASSERT_EQ(self->emulated + (long)(n), emulated())

TEST_F(window, glibc_wrapper)
{
	ASSERT_EQ(0, reverse(self->w, glibc_rfp));
	ASSERT_TRUE(reversed(self->w));
	ASSERT_EMULATED(PAGES);
}

TEST_F(window, raw_syscall)
{
	ASSERT_EQ(0, reverse(self->w, raw_rfp));
	ASSERT_TRUE(reversed(self->w));
	ASSERT_EMULATED(PAGES);
}

/*
 * glibc's syscall(): the remap answered as glibc's would answer it (errno
 * as it was after a success), every other call passed to glibc's.
 */
TEST_F(window, glibc_syscall)
{
	errno = 1234;
	ASSERT_EQ(0, reverse(self->w, syscall_rfp));
	ASSERT_EQ(1234, errno);
	ASSERT_TRUE(reversed(self->w));
	ASSERT_EMULATED(PAGES);
	ASSERT_EQ(getpid(), syscall(SYS_getpid));
	errno = 0;
	ASSERT_EQ(-1, syscall(SYS_close, -1));
	ASSERT_EQ(EBADF, errno);
	/* Six arguments through, the sixth too. */
	ASSERT_EQ(0, syscall(SYS_prctl, PR_SET_NAME, "six args", 0, 0, 0, 0));
	ASSERT_EMULATED(PAGES);
	/*
	 * The sixth argument of a remap is not read: the shim's own call
	 * leaves its marker on the stack, where a five-argument call finds
	 * it.
	 */
	ASSERT_EQ(0, syscall(SYS_remap_file_pages, self->w, page, 0, 1, 0,
			     SHIM_MARKER));
	ASSERT_EMULATED(PAGES + 1);
}

/* Writes land in the object at the remapped offset. */
TEST_F(window, write_lands_at_remapped_offset)
{
	ASSERT_EQ(0, raw_rfp(self->w, 1, 5, 0));
	strcpy(self->w, "page 5 written");
	ASSERT_EQ(0, raw_rfp(self->w, 1, 0, 0));
	ASSERT_EQ(0, raw_rfp(self->w + page, 1, 5, 0));
	ASSERT_STREQ("page 5 written", self->w + page);
	ASSERT_STREQ("page 0", self->w);
	ASSERT_EMULATED(3);
}

/* The kernel's refusals, with the mapping unchanged. */
TEST_F(window, refusals_like_the_kernel)
{
	char *priv = mmap(NULL, page, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(priv, MAP_FAILED);
	errno = 0;
	EXPECT_EQ(-1, rfp_syscall(self->w, page, PROT_READ, 1, 0));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(-1, rfp_syscall(self->w, page - 1, 0, 1, 0));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(-1, raw_rfp(self->w, 1, -1UL, 0));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(-1, raw_rfp(priv, 1, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	/* Past the window's end: the next VMA is not the window's. */
	EXPECT_EQ(-1, raw_rfp(self->w + (PAGES - 1) * page, 2, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, munmap(self->w + 3 * page, page));
	errno = 0;
	EXPECT_EQ(-1, raw_rfp(self->w + 2 * page, 2, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(-1, raw_rfp(self->w + 3 * page, 1, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	for (int i = 0; i < PAGES; i++)
		if (i != 3)
			EXPECT_EQ(i, shows(self->w, i));
	munmap(priv, page);
}

/*
 * The field KEY ("Rss:", "VmFlags:") of the smaps entry of the VMA that
 * covers ADDR, into OUT; 0, or -1 when there is none.
 */
static int smaps_field(void *addr, const char *key, char *out, size_t size)
{
	char line[512];
	FILE *f = fopen("/proc/self/smaps", "r");
	unsigned long lo, hi;
	int in = 0, ret = -1;

	while (f && fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') < strchr(line, ' ') &&
		    sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in = lo <= (unsigned long)addr && (unsigned long)addr < hi;
		else if (in && !strncmp(line, key, strlen(key)) && ret < 0) {
			snprintf(out, size, "%s", line + strlen(key));
			ret = 0;
		}
	}
	if (f)
		fclose(f);
	return ret;
}

static long rss_kb(void *addr)
{
	char v[64];

	return smaps_field(addr, "Rss:", v, sizeof(v)) ? -1 : atol(v);
}

static int vmflag(void *addr, const char *flag)
{
	char v[256];

	return smaps_field(addr, "VmFlags:", v, sizeof(v)) ? -1 : !!strstr(v, flag);
}

/* MAP_NONBLOCK leaves the pages unpopulated; without it, populated. */
TEST_F(window, populate_unless_nonblock)
{
	ASSERT_EQ(0, raw_rfp(self->w, 2, 4, MAP_NONBLOCK));
	ASSERT_EQ(0, raw_rfp(self->w + 4 * page, 2, 0, 0));
	ASSERT_EMULATED(2);
	EXPECT_EQ(0, rss_kb(self->w));
	EXPECT_EQ(2 * page / 1024, rss_kb(self->w + 4 * page));
}

/* A locked window stays locked, as the kernel's MAP_LOCKED keeps it. */
TEST_F(window, mlock_kept)
{
	if (mlock(self->w, PAGES * page))
		SKIP(return, "mlock: %s", strerror(errno));
	ASSERT_EQ(1, vmflag(self->w + page, " lo"));
	ASSERT_EQ(0, raw_rfp(self->w + page, 1, 6, MAP_NONBLOCK));
	EXPECT_EQ(1, vmflag(self->w + page, " lo"));
	EXPECT_EQ(6, shows(self->w, 1));
	ASSERT_EMULATED(1);
}

/*
 * What the shim cannot see: memory locked with the raw syscall, in a
 * process that never asked glibc for locked memory.  A remap inside one
 * writable VMA then takes the fast path, which does not ask the kernel
 * about VM_LOCKED, and the remapped page is no longer locked, where the
 * kernel's remap keeps it locked (README, "What it cannot do").
 */
/*
 * The lock of each remapped VMA follows the program's mlock() calls as
 * the kernel's VM_LOCKED does: half the window unlocked again, a range
 * across both halves refused (the VMAs' flags differ), no lock in a
 * forked child, mlockall(MCL_FUTURE) for a window mapped later,
 * munlockall(), mlockall(MCL_CURRENT), and an mlock() that fails.
 */
TEST_F(window, mlock_followed)
{
	char *later;
	int status, locked;
	pid_t pid;

	if (mlock(self->w, PAGES * page))
		SKIP(return, "mlock: %s", strerror(errno));
	ASSERT_EQ(0, munlock(self->w + PAGES / 2 * page, PAGES / 2 * page));
	ASSERT_EQ(0, raw_rfp(self->w + page, 1, 6, 0));
	EXPECT_EQ(1, vmflag(self->w + page, " lo"));
	ASSERT_EQ(0, raw_rfp(self->w + (PAGES - 1) * page, 1, 2, 0));
	EXPECT_EQ(0, vmflag(self->w + (PAGES - 1) * page, " lo"));
	EXPECT_EQ(-1, raw_rfp(self->w + (PAGES / 2 - 1) * page, 2, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(raw_rfp(self->w + 2 * page, 1, 5, 0) ? 2 :
		      vmflag(self->w + 2 * page, " lo"));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("1: the child's remap was locked");
	EXPECT_EQ(1, vmflag(self->w + 2 * page, " lo"));

	if (mlockall(MCL_FUTURE))
		SKIP(return, "mlockall: %s", strerror(errno));
	later = make_window(variant->backing);
	ASSERT_NE(MAP_FAILED, later);
	ASSERT_EQ(0, raw_rfp(later, 1, 3, 0));
	EXPECT_EQ(1, vmflag(later, " lo"));
	ASSERT_EQ(0, munlockall());
	ASSERT_EQ(0, raw_rfp(later + page, 1, 4, 0));
	EXPECT_EQ(0, vmflag(later + page, " lo"));
	EXPECT_EQ(0, vmflag(self->w + page, " lo"));
	ASSERT_EQ(0, mlockall(MCL_CURRENT));
	ASSERT_EQ(0, raw_rfp(later + 2 * page, 1, 1, 0));
	EXPECT_EQ(1, vmflag(later + 2 * page, " lo"));
	ASSERT_EQ(0, munlockall());
	munmap(later, PAGES * page);

	/*
	 * mlock() over a hole fails with ENOMEM, and may have locked what is
	 * mapped: a remap keeps what the kernel says of the VMA.
	 */
	ASSERT_EQ(0, munmap(self->w + (PAGES - 1) * page, page));
	EXPECT_EQ(-1, mlock(self->w, PAGES * page));
	locked = vmflag(self->w + 3 * page, " lo");
	ASSERT_EQ(0, raw_rfp(self->w + 3 * page, 1, 1, 0));
	EXPECT_EQ(locked, vmflag(self->w + 3 * page, " lo"));
	ASSERT_EMULATED(6);
}

/*
 * A fork() child of a process that has locked nothing takes the shim's
 * blank table of locked ranges at its first call (nothing is written to
 * it at the fork): a lock the child sets is followed.
 */
TEST_F(window, mlock_in_a_fork_child)
{
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		long before = emulated();

		if (mlock(self->w + page, page))
			_exit(3);
		if (raw_rfp(self->w + page, 1, 6, 0) || emulated() != before + 1)
			_exit(2);
		_exit(vmflag(self->w + page, " lo") == 1 ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 3)
		SKIP(return, "mlock() refused in the child");
	ASSERT_EQ(0, WEXITSTATUS(status))
		TH_LOG("1: the child's remap of the page it locked is not locked");
}

/* Whether this kernel has PROCMAP_QUERY (Linux 6.11), the shim's fast path. */
static int has_procmap_query(void)
{
	/* struct procmap_query's size; the kernel checks it before anything. */
	uint64_t q[13] = { sizeof(q) };
	int fd = open("/proc/self/maps", O_RDONLY), ret;

	q[2] = (uintptr_t)&page;	/* query_addr: a VMA of this program */
	ret = ioctl(fd, _IOWR('f', 17, uint64_t[13]), q);
	close(fd);
	return ret == 0 || errno != ENOTTY;
}

TEST_F(window, raw_mlock_is_lost)
{
	if (!has_procmap_query())
		SKIP(return, "no PROCMAP_QUERY: the shim reads smaps, which shows the lock");
	if (syscall(SYS_mlock, self->w, PAGES * page))
		SKIP(return, "mlock: %s", strerror(errno));
	ASSERT_EQ(1, vmflag(self->w + page, " lo"));
	ASSERT_EQ(0, raw_rfp(self->w + page, 1, 6, MAP_NONBLOCK));
	ASSERT_EMULATED(1);
	EXPECT_EQ(6, shows(self->w, 1));
	EXPECT_EQ(0, vmflag(self->w + page, " lo"));
	EXPECT_EQ(1, vmflag(self->w, " lo"));
}

/* A child's remaps do not change the parent's window. */
TEST_F(window, fork_keeps_layouts_apart)
{
	pid_t pid = fork();
	int status;

	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(reverse(self->w, raw_rfp) || !reversed(self->w));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, status);
	for (int i = 0; i < PAGES; i++)
		EXPECT_EQ(i, shows(self->w, i));
}

struct thread_arg {
	char *w;
	int ok;
};

static void *remap_thread(void *p)
{
	struct thread_arg *a = p;

	a->ok = !reverse(a->w, raw_rfp) && reversed(a->w);
	return NULL;
}

/* Threads remapping their own windows at once. */
TEST_F(window, threads)
{
	struct thread_arg a[4];
	pthread_t t[4];
	int i;

	for (i = 0; i < 4; i++) {
		a[i].w = make_window(variant->backing);
		ASSERT_NE(MAP_FAILED, a[i].w);
		ASSERT_EQ(0, pthread_create(&t[i], NULL, remap_thread, &a[i]));
	}
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, pthread_join(t[i], NULL));
		EXPECT_TRUE(a[i].ok);
		munmap(a[i].w, PAGES * page);
	}
	ASSERT_EMULATED(4 * PAGES);
}

static volatile sig_atomic_t sigsys_seen;

static void on_sigsys(int sig)
{
	sigsys_seen = sig;
}

/* The program's own SIGSYS handler keeps working, and the shim with it. */
TEST_F(window, program_sigsys_handler)
{
	struct sigaction sa = { .sa_handler = on_sigsys }, old;

	ASSERT_EQ(0, sigaction(SIGSYS, &sa, NULL));
	ASSERT_EQ(0, sigaction(SIGSYS, NULL, &old));
	EXPECT_TRUE(old.sa_handler == on_sigsys);
	ASSERT_EQ(0, raise(SIGSYS));
	EXPECT_EQ(SIGSYS, sigsys_seen);
	ASSERT_EQ(0, reverse(self->w, raw_rfp));
	EXPECT_TRUE(reversed(self->w));
	ASSERT_EMULATED(PAGES);
}

/*
 * A thread that blocks every signal still gets its calls emulated: a
 * blocked SIGSYS from seccomp would kill it, so the shim keeps SIGSYS out
 * of every mask (a difference the program can see in its mask).
 */
TEST_F(window, all_signals_blocked)
{
	sigset_t all, now;

	sigfillset(&all);
	ASSERT_EQ(0, sigprocmask(SIG_BLOCK, &all, NULL));
	ASSERT_EQ(0, reverse(self->w, raw_rfp));
	ASSERT_EQ(0, sigprocmask(SIG_SETMASK, NULL, &now));
	EXPECT_FALSE(sigismember(&now, SIGSYS));
	EXPECT_TRUE(sigismember(&now, SIGUSR1));
	sigemptyset(&all);
	ASSERT_EQ(0, sigprocmask(SIG_SETMASK, &all, NULL));
	EXPECT_TRUE(reversed(self->w));
	ASSERT_EMULATED(PAGES);
}

/* Runs this program again as ARGV (with ENV added), its stderr in OUT. */
/*
 * PATH run with ARGV, ENV added to the environment (or LD_PRELOAD taken
 * out, for "-LD_PRELOAD"): its wait status, and its stderr in OUT.
 */
static int run_program(const char *path, char *const argv[], const char *env,
		       char *out, size_t size)
{
	int p[2], status;
	ssize_t n, len = 0;
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 2);
		if (env && !strcmp(env, "-LD_PRELOAD"))
			unsetenv("LD_PRELOAD");
		else if (env)
			putenv((char *)env);
		execv(path, argv);
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], out + len, size - 1 - len)) > 0)
		len += n;
	out[len] = '\0';
	close(p[0]);
	waitpid(pid, &status, 0);
	return status;
}

static int run_self(char *const argv[], const char *env, char *out, size_t size)
{
	return run_program("/proc/self/exe", argv, env, out, size);
}

static int seccomp_filters(void);
static const struct long_run_fn { const char *name; int (*fn)(void); } long_runs[3];

/* The child programs run_self() starts: a remap of a new window each. */
static int child_main(const char *what)
{
	char *w;
	long before = emulated();

	page = sysconf(_SC_PAGESIZE);
	for (unsigned int i = 0; i < sizeof(long_runs) / sizeof(long_runs[0]); i++)
		if (!strcmp(what, long_runs[i].name))
			return long_runs[i].fn();
	if (!strncmp(what, "exec-chain-", 11)) {
		int n = atoi(what + 11);
		char next[32];

		if (n > 0) {
			snprintf(next, sizeof(next), "exec-chain-%d", n - 1);
			execl("/proc/self/exe", "rfp-compat-test", "--child", next, NULL);
			return 2;
		}
		/* As many filters as the first process of the chain had. */
		return getenv("RFP_TEST_FILTERS") &&
		       seccomp_filters() == atoi(getenv("RFP_TEST_FILTERS")) ? 0 : 3;
	}
	if (!strcmp(what, "early")) {
		char **early = dlsym(RTLD_DEFAULT, "rfp_early_window");

		/* Mapped by a constructor that ran before the shim's. */
		if (!early || *early == MAP_FAILED || raw_rfp(*early, 1, 1, 0))
			return 1;
		return shows(*early, 0) == 1 && emulated() == before + 1 ? 0 : 1;
	}
	w = make_window(SHARED_ANON);
	if (!strcmp(what, "raw-call"))
		return raw_rfp(w, 1, 0, 0) ? errno : 0;
	if (before < 0 || w == MAP_FAILED || reverse(w, raw_rfp) || !reversed(w))
		return 1;
	if (!strcmp(what, "raw-call"))
		return 0;	/* the remaps above were the test */
	if (!strcmp(what, "fork")) {
		pid_t pid = fork();
		int status;

		if (pid == 0)
			_exit(reverse(w, raw_rfp) != 0);
		waitpid(pid, &status, 0);
		return status != 0;
	}
	return emulated() != before + PAGES;
}

/* An exec()ed program has the shim too: the filter and LD_PRELOAD go on. */
TEST_F(window, exec_keeps_the_shim)
{
	char out[4096];
	char *argv[] = { "rfp-compat-test", "--child", "exec", NULL };

	ASSERT_EQ(0, run_self(argv, NULL, out, sizeof(out)));
	TH_LOG("child's stderr: %s", out);
}

/* The shim says it once a process, on stderr; RFP_COMPAT_QUIET=1 not. */
TEST_F(window, says_once_a_process)
{
	char out[4096], *p;
	char *argv[] = { "rfp-compat-test", "--child", "fork", NULL };
	int lines = 0;

	ASSERT_EQ(0, run_self(argv, "RFP_COMPAT_QUIET=0", out, sizeof(out)));
	for (p = out; (p = strstr(p, "rfp-compat: ")); p++)
		lines++;
	TH_LOG("stderr of a process and its child: %s", out);
	EXPECT_EQ(2, lines);
	EXPECT_NE(NULL, strstr(out, "emulated with mmap(MAP_FIXED)"));
	ASSERT_EQ(0, run_self(argv, "RFP_COMPAT_QUIET=1", out, sizeof(out)));
	EXPECT_STREQ("", out);
}

#define TRACE_INSTANCE "/sys/kernel/tracing/instances/rfp-compat-test"
#define TRACE_EVENT_FILE TRACE_INSTANCE "/events/mmap/remap_file_pages/"

/* The calls the kernel refused (ret=-38) in the instance's trace. */
static long refused_in_trace(void)
{
	char line[512];
	FILE *f = fopen(TRACE_INSTANCE "/trace", "r");
	long n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "remap_file_pages: ") && strstr(line, " ret=-38"))
			n++;
	fclose(f);
	return n;
}

/*
 * The kernel still sees every call (and names the caller in its log,
 * rate-limited): the shim asks it first each time.  Its
 * mmap:remap_file_pages event records each refused call, in a trace
 * instance of the test's own, filtered on its children's name.
 */
TEST_F(window, kernel_sees_every_call)
{
	char out[4096];
	char *argv[] = { "rfp-compat-test", "--child", "fork", NULL };
	long n;

	if (access("/sys/kernel/tracing/events/mmap/remap_file_pages", F_OK))
		SKIP(return, "no mmap:remap_file_pages trace event: a kernel without the series' tracepoint");
	rmdir(TRACE_INSTANCE);
	ASSERT_EQ(0, mkdir(TRACE_INSTANCE, 0700));
	/* run_self() executes /proc/self/exe: its processes are named "exe". */
	ASSERT_EQ(0, rfp_write_str(TRACE_EVENT_FILE "filter",
				   "ret == -38 && comm == \"exe\"\n"));
	ASSERT_EQ(0, rfp_write_str(TRACE_EVENT_FILE "enable", "1\n"));
	ASSERT_EQ(0, run_self(argv, NULL, out, sizeof(out)));
	rfp_write_str(TRACE_EVENT_FILE "enable", "0\n");
	n = refused_in_trace();
	rmdir(TRACE_INSTANCE);
	/* The child and its forked child: PAGES refused calls each. */
	EXPECT_EQ(2 * PAGES, n);
}

/*
 * Without root, /proc/self/map_files is closed: the shim finds the files
 * it kept (the closed and unlinked file, the memfd it made the shared
 * anonymous mapping from).
 */
TEST_F(window, without_privileges)
{
	int status;
	pid_t pid;

	if (getuid() != 0)
		SKIP(return, "runs as root, to drop to uid 65534");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char path[64];
		char *w;

		if (setgid(65534) || setuid(65534))
			_exit(2);
		w = make_window(variant->backing);
		if (w == MAP_FAILED)
			_exit(3);
		/* The premise: map_files is closed to this process. */
		snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx",
			 (unsigned long)w, (unsigned long)w + PAGES * page);
		if (open(path, O_RDWR) >= 0 || errno != EPERM)
			_exit(4);
		_exit(reverse(w, raw_rfp) || !reversed(w) ? 1 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, status) TH_LOG("exit status %d: 3 no window, 4 map_files open",
				    WEXITSTATUS(status));
}

/*
 * What the shim cannot do: a shared anonymous mapping made behind its
 * back (a raw mmap syscall), in a process without privileges, has no
 * descriptor anywhere.  The call fails with the kernel's -ENOSYS, and the
 * shim says why.  As root, /proc/self/map_files serves.
 */
/*
 * mmap() behind the shim's back (it interposes glibc's), at offset 0.
 * i386's SYS_mmap is old_mmap(), which takes a struct: mmap2 there.
 */
static void *raw_mmap(void *addr, size_t len, int prot, int flags, int fd)
{
#ifdef SYS_mmap2
	return (void *)syscall(SYS_mmap2, addr, len, prot, flags, fd, 0);
#else
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, 0);
#endif
}

static int remap_unseen_shared_anonymous(void)
{
	char *w = (char *)raw_mmap(NULL, 2 * page,
				  PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1);

	strcpy(w + page, "page 1");
	if (raw_rfp(w, 1, 1, 0))
		return errno;
	return strcmp(w, "page 1") ? 255 : 0;
}

/*
 * The wait status of a child that runs FN, first dropping to uid 65534 if
 * DROP, killed by SIGALRM after SECONDS unless 0; -1 when it could not.
 */
static int child_status(int (*fn)(void), int drop, int seconds)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		alarm(seconds);
		if (drop && (setgid(65534) || setuid(65534)))
			_exit(254);
		_exit(fn() & 0xff);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

/* FN's answer (0, or an errno) from child_status(); -1: it did not exit. */
static int in_child(int (*fn)(void), int drop)
{
	int status = child_status(fn, drop, 0);

	return status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(unseen_shared_anonymous_mapping)
{
	int drop;

	page = sysconf(_SC_PAGESIZE);
	if (emulated() < 0)
		SKIP(return, "librfp-compat.so is not loaded: run this under rfp-compat");
	/* As this process is, then (as root) without privileges. */
	for (drop = 0; drop < 2 && (!drop || getuid() == 0); drop++) {
		int privileged = getuid() == 0 && !drop;

		EXPECT_EQ(privileged ? 0 : ENOSYS,
			  in_child(remap_unseen_shared_anonymous, drop)) {
			TH_LOG("%s", privileged ? "as root, map_files gives the file" :
			       "without privileges, the call fails with ENOSYS");
		}
	}
}

/* The number on line KEY (with its colon) of /proc/self/status; -1: none. */
static long status_number(const char *key)
{
	char line[128];
	FILE *f = fopen("/proc/self/status", "r");
	size_t n = strlen(key);
	long v = -1;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n))
			v = strtol(line + n, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

/* The Seccomp: line: 0 none, 2 a filter. */
static int seccomp_mode(void)
{
	return status_number("Seccomp:");
}

/*
 * rfp-compat --glibc-only (RFP_COMPAT_SECCOMP=0) installs no filter:
 * glibc's wrapper and its syscall() are emulated, a raw call is not.
 * make compat runs this case so; under the filter, which nothing
 * removes, it skips.
 */
TEST(glibc_only_without_filter)
{
	long before = emulated();
	char *w;

	page = sysconf(_SC_PAGESIZE);
	if (before < 0)
		SKIP(return, "librfp-compat.so is not loaded: run this under rfp-compat");
	if (seccomp_mode() != 0)
		SKIP(return, "a seccomp filter is installed: run this under rfp-compat --glibc-only");
	w = make_window(SHARED_ANON);
	ASSERT_NE(MAP_FAILED, w);
	ASSERT_EQ(0, reverse(w, glibc_rfp));
	ASSERT_TRUE(reversed(w));
	ASSERT_EQ(before + PAGES, emulated());
	ASSERT_EQ(0, syscall_rfp(w, 1, 0, 0));
	ASSERT_EQ(before + PAGES + 1, emulated());
	raw_rfp(w, 1, 0, 0);
	ASSERT_EQ(before + PAGES + 1, emulated());
}

/*
 * The filter outlives exec(): a child that does not load the shim (here
 * LD_PRELOAD cleared) and makes the raw call dies of SIGSYS, where it
 * would have got ENOSYS without the shim (README, "What it cannot do").
 */
TEST(child_without_the_shim_dies_of_sigsys)
{
	char out[4096];
	char *argv[] = { "rfp-compat-test", "--child", "raw-call", NULL };
	int status;

	if (emulated() < 0)
		SKIP(return, "librfp-compat.so is not loaded: run this under rfp-compat");
	if (seccomp_mode() != 2)
		SKIP(return, "no seccomp filter (rfp-compat --glibc-only)");
	status = run_self(argv, "LD_PRELOAD=", out, sizeof(out));
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(SIGSYS, WTERMSIG(status));
}

static int remap_unseen_linked_file(void)
{
	char path[] = "/dev/shm/rfp-compat-XXXXXX";
	int fd = mkstemp(path), ret;
	char *w;

	if (fd < 0 || ftruncate(fd, 2 * page))
		return 253;
	w = (char *)raw_mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
			    MAP_SHARED, fd);
	close(fd);
	strcpy(w + page, "page 1");
	ret = raw_rfp(w, 1, 1, 0) ? errno : strcmp(w, "page 1") ? 255 : 0;
	unlink(path);
	return ret;
}

/*
 * A file mapped behind the shim's back, its descriptor closed, but still
 * linked: the path in /proc/self/maps serves, without privileges too.
 */
TEST(unseen_linked_file_by_path)
{
	int drop;

	page = sysconf(_SC_PAGESIZE);
	if (emulated() < 0)
		SKIP(return, "librfp-compat.so is not loaded: run this under rfp-compat");
	for (drop = 0; drop < 2 && (!drop || getuid() == 0); drop++)
		EXPECT_EQ(0, in_child(remap_unseen_linked_file, drop))
			TH_LOG("%s", drop ? "as uid 65534" : "as this process is");
}

/* ---- the program around the shim: nothing may break it ---- */

/* How many of this process's descriptors name the file DEV:INO. */
static int fds_of(dev_t dev, ino_t ino)
{
	char path[64];
	struct stat st;
	int fd, n = 0;

	for (fd = 0; fd < 4096; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (!stat(path, &st) && st.st_dev == dev && st.st_ino == ino)
			n++;
	}
	return n;
}

/* How many descriptors, and how many VMAs, name a memfd of the shim. */
static int shim_memfds(int *vmas)
{
	char path[64], link[256], line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int fd, n = 0;

	for (fd = 0; fd < 4096; fd++) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, link, sizeof(link) - 1);
		if (len > 0 && (link[len] = '\0', strstr(link, "memfd:rfp-compat")))
			n++;
	}
	*vmas = 0;
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "memfd:rfp-compat"))
			(*vmas)++;
	if (f)
		fclose(f);
	return n;
}

/* A child that must exit 0 within SECONDS, or it is killed: its status. */
static int in_child_within(int (*fn)(void), int seconds)
{
	return child_status(fn, 0, seconds);
}

#define ASSERT_CHILD_OK(status) do {					\
	int _s = (status);						\
	ASSERT_TRUE(WIFEXITED(_s) && WEXITSTATUS(_s) == 0)		\
		TH_LOG("child: %s %d", WIFSIGNALED(_s) ? "killed by signal" :	\
		       "exit status", WIFSIGNALED(_s) ? WTERMSIG(_s) :	\
		       WEXITSTATUS(_s));					\
} while (0)

#define NEEDS_SHIM() do {						\
	page = sysconf(_SC_PAGESIZE);					\
	if (emulated() < 0)						\
		SKIP(return, "librfp-compat.so is not loaded: run this under rfp-compat"); \
} while (0)

/*
 * A library constructor that runs before the shim's (preloaded after it)
 * maps shared anonymous memory and sets signal dispositions and masks:
 * the process gets to main(), and remaps that memory.
 */
TEST(constructor_before_the_shim)
{
	char exe[512], env[2 * 512 + 32], out[4096], *slash;
	char *argv[] = { "rfp-compat-test", "--child", "early", NULL };
	const char *preload = getenv("LD_PRELOAD");
	ssize_t n;
	int status;

	NEEDS_SHIM();
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_LT(0, n);
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	ASSERT_NE(NULL, slash);
	*slash = '\0';
	snprintf(env, sizeof(env), "LD_PRELOAD=%s %s/librfp-compat-early.so",
		 preload ? preload : "", exe);
	snprintf(out, sizeof(out), "%s/librfp-compat-early.so", exe);
	if (access(out, R_OK))
		SKIP(return, "no librfp-compat-early.so next to this program");
	status = run_self(argv, env, out, sizeof(out));
	TH_LOG("child's stderr: %s", out);
	ASSERT_CHILD_OK(status);
}

static volatile sig_atomic_t program_sigsys_calls;

static void count_sigsys(int sig)
{
	program_sigsys_calls++;
}

/*
 * A program started with every signal blocked (posix_spawn() with a full
 * mask) makes raw calls: the shim unblocks SIGSYS before main().
 */
TEST(spawned_with_every_signal_blocked)
{
	char *argv[] = { "rfp-compat-test", "--child", "exec", NULL };
	posix_spawnattr_t attr;
	sigset_t all;
	pid_t pid;
	int status;

	NEEDS_SHIM();
	sigfillset(&all);
	ASSERT_EQ(0, posix_spawnattr_init(&attr));
	ASSERT_EQ(0, posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK));
	ASSERT_EQ(0, posix_spawnattr_setsigmask(&attr, &all));
	ASSERT_EQ(0, posix_spawn(&pid, "/proc/self/exe", NULL, &attr, argv, environ));
	posix_spawnattr_destroy(&attr);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_CHILD_OK(status);
}

/* System V's sighold(), sigset(), sigignore() leave the shim's SIGSYS be. */
TEST_F(window, system_v_signal_calls)
{
	sighandler_t old;

	ASSERT_EQ(0, sighold(SIGSYS));
	ASSERT_EQ(0, reverse(self->w, raw_rfp));
	ASSERT_TRUE(reversed(self->w));
	ASSERT_EQ(0, sigrelse(SIGSYS));

	old = sigset(SIGSYS, count_sigsys);
	ASSERT_NE(SIG_ERR, old);
	program_sigsys_calls = 0;
	ASSERT_EQ(0, reverse(self->w, raw_rfp));
	EXPECT_EQ(0, program_sigsys_calls);
	ASSERT_EQ(0, raise(SIGSYS));
	EXPECT_EQ(1, program_sigsys_calls);
	EXPECT_TRUE(sigset(SIGSYS, SIG_HOLD) == count_sigsys);
	ASSERT_EQ(0, reverse(self->w, raw_rfp));
	ASSERT_TRUE(reversed(self->w));
	ASSERT_EQ(0, sigignore(SIGSYS));
	ASSERT_EQ(0, raise(SIGSYS));
	EXPECT_EQ(1, program_sigsys_calls);
	signal(SIGSYS, SIG_DFL);
	ASSERT_EMULATED(3 * PAGES);
}

/* A filter of the program's own for system call NR, ACTION. */
static int program_filter_of(unsigned int nr, unsigned int action)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, action),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = 4, .filter = insns };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

static int program_filter(unsigned int action)
{
	return program_filter_of(SYS_remap_file_pages, action);
}

/*
 * The program's filter traps remap_file_pages into its own handler: the
 * handler sees each call, raw or through glibc, and nothing is remapped.
 */
static int program_filter_traps(void)
{
	struct sigaction sa = { .sa_handler = count_sigsys };
	char *w = make_window(SHARED_ANON);

	if (w == MAP_FAILED || sigaction(SIGSYS, &sa, NULL) ||
	    program_filter(SECCOMP_RET_TRAP | 7))
		return 2;
	raw_rfp(w, 1, 1, 0);
	glibc_rfp(w, 1, 1, 0);
	if (program_sigsys_calls != 2)
		return 3;
	return shows(w, 0) == 0 ? 0 : 4;
}

/* Its filter answers EPERM: so does every call. */
static int program_filter_errno(void)
{
	char *w = make_window(SHARED_ANON);

	if (w == MAP_FAILED || program_filter(SECCOMP_RET_ERRNO | EPERM))
		return 2;
	if (raw_rfp(w, 1, 1, 0) != -1 || errno != EPERM)
		return 3;
	if (glibc_rfp(w, 1, 1, 0) != -1 || errno != EPERM)
		return 4;
	return shows(w, 0) == 0 ? 0 : 5;
}

TEST(program_seccomp_filter)
{
	NEEDS_SHIM();
	ASSERT_CHILD_OK(in_child_within(program_filter_traps, 30));
	ASSERT_CHILD_OK(in_child_within(program_filter_errno, 30));
}

static volatile int stop_thread;

/* Maps and unmaps shared anonymous memory until told to stop. */
static void *map_unmap_loop(void *arg)
{
	while (!stop_thread) {
		void *p = mmap(NULL, page, PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

		if (p != MAP_FAILED)
			munmap(p, page);
	}
	return NULL;
}

static int map_unmap_once(void)
{
	char *w = make_window(SHARED_ANON);

	if (w == MAP_FAILED || raw_rfp(w, 1, 1, 0) || shows(w, 0) != 1)
		return 1;
	return munmap(w, PAGES * page) ? 1 : 0;
}

/*
 * fork() while another thread is inside the shim's mmap() or munmap():
 * the child maps, remaps and unmaps (it would hang on a lock taken in the
 * parent).
 */
TEST(fork_while_another_thread_maps)
{
	pthread_t t;
	int i;

	NEEDS_SHIM();
	stop_thread = 0;
	ASSERT_EQ(0, pthread_create(&t, NULL, map_unmap_loop, NULL));
	for (i = 0; i < 200; i++) {
		int status = in_child_within(map_unmap_once, 30);

		if (!WIFEXITED(status) || WEXITSTATUS(status))
			break;
	}
	stop_thread = 1;
	pthread_join(t, NULL);
	ASSERT_EQ(200, i) TH_LOG("fork %d: a child failed or hung", i);
}

#define HANDLER_WINDOWS 64

static char *handler_window[HANDLER_WINDOWS];
static char handler_path[HANDLER_WINDOWS][32];
static volatile sig_atomic_t handler_calls, handler_failed;

/* Remaps the next window, of a file the shim has not seen: by its path. */
static void remap_in_handler(int sig)
{
	int i = handler_calls;

	if (i < HANDLER_WINDOWS && (raw_rfp(handler_window[i], 1, 1, 0) ||
				    shows(handler_window[i], 0) != 1))
		handler_failed = 1;
	handler_calls = i + 1;
}

static void *signal_loop(void *arg)
{
	pthread_t main_thread = *(pthread_t *)arg;

	while (handler_calls < HANDLER_WINDOWS) {
		pthread_kill(main_thread, SIGUSR1);
		usleep(1000);
	}
	stop_thread = 1;
	return NULL;
}

/*
 * Each signal remaps a file the shim finds (and keeps) then, while the
 * interrupted thread is inside munmap() of memory the shim keeps a memfd
 * for.
 */
static int handler_remaps_inside_munmap(void)
{
	struct sigaction sa = { .sa_handler = remap_in_handler };
	pthread_t self_thread = pthread_self(), t;
	int i;

	for (i = 0; i < HANDLER_WINDOWS; i++) {
		char path[] = "/dev/shm/rfp-compat-XXXXXX";
		int fd = mkstemp(path);

		if (fd < 0 || ftruncate(fd, 2 * page))
			return 2;
		handler_window[i] = raw_mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
					     MAP_SHARED, fd);
		close(fd);
		if (handler_window[i] == MAP_FAILED)
			return 2;
		sprintf(handler_window[i] + page, "page 1");
		strcpy(handler_path[i], path);
	}
	if (sigaction(SIGUSR1, &sa, NULL))
		return 2;
	stop_thread = 0;
	if (pthread_create(&t, NULL, signal_loop, &self_thread))
		return 2;
	map_unmap_loop(NULL);
	pthread_join(t, NULL);
	for (i = 0; i < HANDLER_WINDOWS; i++)
		unlink(handler_path[i]);
	return handler_failed ? 3 : 0;
}

TEST(signal_handler_remaps_inside_munmap)
{
	NEEDS_SHIM();
	ASSERT_CHILD_OK(in_child_within(handler_remaps_inside_munmap, 20));
}

/*
 * The program closes every descriptor but its own three (closefrom(),
 * close_range(), or close() of each), opens a log, then unmaps memory the
 * shim kept descriptors for: the log stays open.
 */
static int closes_all(void (*close_all)(void))
{
	char path[] = "/dev/shm/rfp-compat-XXXXXX";
	char *a = make_window(SHARED_ANON), *b = make_window(MEMFD_CLOSED);
	int log[64], i, fd;
	struct stat st;

	if (a == MAP_FAILED || b == MAP_FAILED || raw_rfp(a, 1, 1, 0) ||
	    raw_rfp(b, 1, 1, 0))
		return 2;
	close_all();
	/* The log, open 64 times: the numbers the shim had are among them. */
	fd = mkstemp(path);
	if (fd < 0)
		return 2;
	log[0] = fd;
	for (i = 1; i < 64; i++) {
		log[i] = open(path, O_WRONLY | O_APPEND);
		if (log[i] < 0)
			return 2;
	}
	unlink(path);
	munmap(a, PAGES * page);
	munmap(b, PAGES * page);
	for (i = 0; i < 64; i++)
		if (write(log[i], "x", 1) != 1)
			return 3;
	return fstat(fd, &st) || st.st_size != 64 ? 4 : 0;
}

static void by_closefrom(void)
{
	closefrom(3);
}

static void by_close_range(void)
{
	close_range(3, ~0U, 0);
}

static void by_close(void)
{
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
}

static int closes_all_closefrom(void)
{
	return closes_all(by_closefrom);
}

static int closes_all_close_range(void)
{
	return closes_all(by_close_range);
}

static int closes_all_close(void)
{
	return closes_all(by_close);
}

TEST(program_closes_every_descriptor)
{
	NEEDS_SHIM();
	ASSERT_CHILD_OK(in_child_within(closes_all_closefrom, 30));
	ASSERT_CHILD_OK(in_child_within(closes_all_close_range, 30));
	ASSERT_CHILD_OK(in_child_within(closes_all_close, 30));
}

static volatile int race_fd, race_a, race_b;

/* Points the program's descriptor number at the other file, and back. */
static void *swap_loop(void *arg)
{
	while (!stop_thread) {
		dup2(race_b, race_fd);
		dup2(race_a, race_fd);
	}
	return NULL;
}

/*
 * The program's only descriptors for a window's file: one whose number
 * another thread points at another file and back, and a steady one.  The
 * window, mapped anew each time behind the shim's back (so that the shim
 * looks among the program's descriptors at every remap), shows its own
 * file after the remap.
 */
static int descriptor_number_race(void)
{
	char a_path[] = "/dev/shm/rfp-compat-XXXXXX";
	char b_path[] = "/dev/shm/rfp-compat-XXXXXX";
	pthread_t t;
	char *w;
	int i, bad = 0;

	race_fd = open("/dev/null", O_RDONLY);	/* a low number, seen first */
	race_a = mkstemp(a_path);
	race_b = mkstemp(b_path);
	if (race_fd < 0 || race_a < 0 || race_b < 0 ||
	    ftruncate(race_a, 2 * page) || ftruncate(race_b, 2 * page))
		return 2;
	unlink(a_path);
	unlink(b_path);
	w = raw_mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, race_a);
	if (w == MAP_FAILED)
		return 2;
	sprintf(w + page, "page 1");
	munmap(w, 2 * page);
	dup2(race_a, race_fd);
	stop_thread = 0;
	if (pthread_create(&t, NULL, swap_loop, NULL))
		return 2;
	for (i = 0; i < 2000 && !bad; i++) {
		w = raw_mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED,
			     race_a);
		if (w == MAP_FAILED || raw_rfp(w, 1, 1, 0) || shows(w, 0) != 1)
			bad = 1;
		munmap(w, 2 * page);
	}
	stop_thread = 1;
	pthread_join(t, NULL);
	return bad ? 3 : 0;
}

/* Without privileges, where map_files is closed (root drops to 65534). */
TEST(descriptor_number_reused_during_a_remap)
{
	NEEDS_SHIM();
	ASSERT_EQ(0, in_child(descriptor_number_race, getuid() == 0))
		TH_LOG("3: the window showed another file, or a remap failed");
}

/*
 * Root maps a file of mode 0600, remaps it (the shim finds and keeps a
 * descriptor), closes its own and drops to uid 65534: no descriptor of
 * the file is left in the process.  The same for a file the shim keeps
 * from the start (unlinked).
 */
static int drops_privileges(int unlinked)
{
	char path[] = "/dev/shm/rfp-compat-XXXXXX";
	int fd = mkstemp(path);
	struct stat st;
	char *w;

	if (fd < 0 || fchmod(fd, 0600) || ftruncate(fd, 2 * page) || fstat(fd, &st))
		return 2;
	if (unlinked)
		unlink(path);
	w = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (w == MAP_FAILED)
		return 2;
	sprintf(w + page, "page 1");
	close(fd);
	if (raw_rfp(w, 1, 1, 0) || shows(w, 0) != 1)
		return 3;
	if (!unlinked)
		unlink(path);
	if (fds_of(st.st_dev, st.st_ino) != 1)
		return 4;	/* the premise: the shim kept one */
	if (setgid(65534) || setuid(65534))
		return 2;
	if (fds_of(st.st_dev, st.st_ino) != 0)
		return 5;
	return strcmp(w + 0, "page 1") ? 6 : 0;
}

static int drops_privileges_linked(void)
{
	return drops_privileges(0);
}

static int drops_privileges_unlinked(void)
{
	return drops_privileges(1);
}

TEST(privileges_dropped_with_the_descriptors)
{
	NEEDS_SHIM();
	if (getuid() != 0)
		SKIP(return, "runs as root, to drop to uid 65534");
	EXPECT_EQ(0, in_child(drops_privileges_linked, 0)) TH_LOG("4: no kept descriptor, 5: one left");
	EXPECT_EQ(0, in_child(drops_privileges_unlinked, 0)) TH_LOG("4: no kept descriptor, 5: one left");
}

/*
 * A file written through a remapped shared mapping, unmapped and closed,
 * has no writer left: a read lease is granted (it fails with EAGAIN while
 * any descriptor is open for writing), and no descriptor is left.
 */
TEST(no_descriptor_left_after_unmap)
{
	char path[] = "/dev/shm/rfp-compat-XXXXXX";
	int fd, ret;
	struct stat st;
	char *w;

	NEEDS_SHIM();
	fd = mkstemp(path);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, 2 * page));
	ASSERT_EQ(0, fstat(fd, &st));
	w = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, w);
	close(fd);
	sprintf(w + page, "page 1");
	ASSERT_EQ(0, raw_rfp(w, 1, 1, 0));
	ASSERT_EQ(1, shows(w, 0));
	ASSERT_EQ(0, munmap(w, 2 * page));
	EXPECT_EQ(0, fds_of(st.st_dev, st.st_ino));
	fd = open(path, O_RDONLY);
	unlink(path);
	ASSERT_LE(0, fd);
	ret = fcntl(fd, F_SETLEASE, F_RDLCK);
	if (ret && errno == EINVAL)
		TH_LOG("no leases on this kernel (CONFIG_FILE_LOCKING): the descriptor count above is the test");
	else
		EXPECT_EQ(0, ret) TH_LOG("F_SETLEASE: %s", strerror(errno));
	close(fd);
}

/*
 * The lock on PATH that another process sees this one hold: F_RDLCK or
 * F_WRLCK; F_UNLCK when none; -1 when it could not ask.
 */
static int lock_held(const char *path)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct flock q = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
		int other = open(path, O_RDWR);

		if (other < 0 || fcntl(other, F_GETLK, &q))
			_exit(255);
		_exit(q.l_type != F_UNLCK && q.l_pid != getppid() ? 254 : q.l_type);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) >= 254)
		return -1;
	return WEXITSTATUS(status);
}

/*
 * The program holds a POSIX lock on a file it maps, remaps and unmaps:
 * the lock is still held (closing any descriptor of a file drops the
 * process's POSIX locks on it, so the shim keeps the one it used).
 */
TEST(posix_lock_kept)
{
	char path[] = "/dev/shm/rfp-compat-XXXXXX";
	struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int fd, held;
	char *w;

	NEEDS_SHIM();
	fd = mkstemp(path);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, 2 * page));
	ASSERT_EQ(0, fcntl(fd, F_SETLK, &lock));
	w = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, w);
	sprintf(w + page, "page 1");
	ASSERT_EQ(0, raw_rfp(w, 1, 1, 0));
	ASSERT_EQ(1, shows(w, 0));
	ASSERT_EQ(0, munmap(w, 2 * page));
	held = lock_held(path);
	unlink(path);
	close(fd);
	ASSERT_EQ(F_WRLCK, held) TH_LOG("%s", held == F_UNLCK ? "the lock is gone" : "");
}

/*
 * Shared anonymous memory, unmapped or replaced, leaves no memfd behind:
 * 1100 mappings at once (more than one table of kept descriptors), then
 * 200 replaced by mmap(MAP_FIXED).
 */
TEST(no_memfd_left_behind)
{
	static char *p[1100];
	int i, vmas, fds, vmas_before, fds_before;

	NEEDS_SHIM();
	/* The harness's own shared memory has its memfds too. */
	fds_before = shim_memfds(&vmas_before);
	for (i = 0; i < 1100; i++) {
		p[i] = mmap(NULL, page, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, p[i]);
	}
	for (i = 0; i < 1100; i++)
		ASSERT_EQ(0, munmap(p[i], page));
	fds = shim_memfds(&vmas);
	EXPECT_EQ(fds_before, fds);
	EXPECT_EQ(vmas_before, vmas);
	for (i = 0; i < 200; i++) {
		p[i] = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, p[i]);
		ASSERT_EQ(p[i], mmap(p[i], 4 * page, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	}
	fds = shim_memfds(&vmas);
	EXPECT_EQ(fds_before, fds);
	EXPECT_EQ(vmas_before, vmas);
	for (i = 0; i < 200; i++)
		munmap(p[i], 4 * page);
}

/*
 * A daemon closes its standard descriptors and maps shared memory: its
 * next open() still gets 0, the lowest free number (the shim's own
 * descriptors live at high numbers).
 */
static int standard_descriptors_closed(void)
{
	char *a, *b;
	int fd;

	close(0);
	close(1);
	close(2);
	a = make_window(SHARED_ANON);
	b = make_window(SHARED_ANON);
	if (a == MAP_FAILED || b == MAP_FAILED || raw_rfp(a, 1, 1, 0) ||
	    raw_rfp(b, 1, 1, 0))
		return 2;
	fd = open("/dev/null", O_RDONLY);
	return fd == 0 ? 0 : 3;
}

TEST(standard_descriptors_left_to_the_program)
{
	NEEDS_SHIM();
	ASSERT_CHILD_OK(in_child_within(standard_descriptors_closed, 30));
}

/*
 * A file open read-only and read-write, locked, mapped through the
 * read-write one, remapped: the lock is still held (the shim closes no
 * copy of a descriptor of a locked file).
 */
TEST(posix_lock_kept_with_two_descriptors)
{
	char path[] = "/dev/shm/rfp-compat-XXXXXX";
	struct flock lock = { .l_type = F_RDLCK, .l_whence = SEEK_SET };
	int rw, ro, held;
	char *w;

	NEEDS_SHIM();
	rw = mkstemp(path);
	ASSERT_LE(0, rw);
	ro = open(path, O_RDONLY);
	ASSERT_LE(0, ro);
	/* The read-only descriptor is seen first. */
	if (ro > rw) {
		int t = dup(rw);

		ASSERT_EQ(rw, dup2(ro, rw));
		ro = rw;
		rw = t;
	}
	ASSERT_EQ(0, ftruncate(rw, 2 * page));
	ASSERT_EQ(0, fcntl(ro, F_SETLK, &lock));
	w = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, rw, 0);
	ASSERT_NE(MAP_FAILED, w);
	sprintf(w + page, "page 1");
	ASSERT_EQ(0, raw_rfp(w, 1, 1, 0));
	ASSERT_EQ(1, shows(w, 0));
	held = lock_held(path);
	munmap(w, 2 * page);
	unlink(path);
	ASSERT_EQ(F_RDLCK, held) TH_LOG("%s", held == F_UNLCK ? "the lock is gone" : "");
}

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	alarms++;
}

/* siginterrupt() is kept: a read interrupted by a signal fails with EINTR. */
static int interrupted_read(void)
{
	char c;
	int p[2];

	if (pipe(p) || siginterrupt(SIGALRM, 1) ||
	    signal(SIGALRM, on_alarm) == SIG_ERR)
		return 2;
	alarm(1);
	if (read(p[0], &c, 1) != -1 || errno != EINTR)
		return 3;
	return alarms == 1 ? 0 : 4;
}

TEST(siginterrupt_kept)
{
	NEEDS_SHIM();
	ASSERT_CHILD_OK(in_child_within(interrupted_read, 20));
}

/* Declared for _XOPEN_SOURCE up to 600 only. */
extern sighandler_t bsd_signal(int sig, sighandler_t handler);

static volatile sig_atomic_t sysv_calls;

static void on_sysv_sigsys(int sig)
{
	sysv_calls++;
}

/*
 * System V's and BSD's signal() for SIGSYS (what -std=c11 makes of
 * signal()): the shim's SIGSYS stays, the program's handler runs for its
 * own SIGSYS, with System V's reset.
 */
TEST_F(window, sysv_and_bsd_signal)
{
	ASSERT_NE(SIG_ERR, sysv_signal(SIGSYS, on_sysv_sigsys));
	ASSERT_EQ(0, reverse(self->w, raw_rfp));
	EXPECT_EQ(0, sysv_calls);
	ASSERT_EQ(0, raise(SIGSYS));
	EXPECT_EQ(1, sysv_calls);
	/* SA_RESETHAND: back to SIG_DFL after one. */
	EXPECT_TRUE(signal(SIGSYS, SIG_IGN) == SIG_DFL);
	ASSERT_NE(SIG_ERR, bsd_signal(SIGSYS, on_sysv_sigsys));
	ASSERT_EQ(0, raise(SIGSYS));
	ASSERT_EQ(0, raise(SIGSYS));
	EXPECT_EQ(3, sysv_calls);
	ASSERT_EQ(0, reverse(self->w, raw_rfp));
	ASSERT_TRUE(reversed(self->w));
	signal(SIGSYS, SIG_DFL);
	ASSERT_EMULATED(2 * PAGES);
}

static void *remap_in_thread(void *w)
{
	return (void *)(long)reverse(w, raw_rfp);
}

static volatile sig_atomic_t usr1_remapped = -1;
static char *usr1_window;

static void remap_on_usr1(int sig)
{
	usr1_remapped = reverse(usr1_window, raw_rfp);
}

/*
 * SIGSYS blocked by the calls that take a mask of their own: a thread
 * made with every signal blocked (pthread_attr_setsigmask_np()), and a
 * handler run inside sigsuspend(), ppoll(), pselect(), epoll_pwait() and
 * epoll_pwait2() with every other signal blocked.
 */
static int masks_of_their_own(void)
{
	struct sigaction sa = { .sa_handler = remap_on_usr1 };
	struct epoll_event ev;
	pthread_attr_t attr;
	sigset_t all, usr1;
	int ep;
	pthread_t t;
	void *ret;
	char *w = make_window(SHARED_ANON);

	sigfillset(&all);
	if (w == MAP_FAILED || pthread_attr_init(&attr) ||
	    pthread_attr_setsigmask_np(&attr, &all) ||
	    pthread_create(&t, &attr, remap_in_thread, w) ||
	    pthread_join(t, &ret) || ret || !reversed(w))
		return 2;
	usr1_window = make_window(SHARED_ANON);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigdelset(&all, SIGUSR1);
	if (usr1_window == MAP_FAILED || sigaction(SIGUSR1, &sa, NULL) ||
	    sigprocmask(SIG_BLOCK, &usr1, NULL))
		return 3;
	kill(getpid(), SIGUSR1);
	sigsuspend(&all);
	if (usr1_remapped || !reversed(usr1_window))
		return 4;
	/* The same inside ppoll() and pselect(). */
	usr1_remapped = -1;
	kill(getpid(), SIGUSR1);
	if (ppoll(NULL, 0, NULL, &all) != -1 || errno != EINTR ||
	    usr1_remapped)
		return 5;
	usr1_remapped = -1;
	kill(getpid(), SIGUSR1);
	if (pselect(0, NULL, NULL, NULL, NULL, &all) != -1 || errno != EINTR ||
	    usr1_remapped)
		return 6;
	/* And inside epoll_pwait() and epoll_pwait2(), on an empty set. */
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		return 7;
	usr1_remapped = -1;
	kill(getpid(), SIGUSR1);
	if (epoll_pwait(ep, &ev, 1, -1, &all) != -1 || errno != EINTR ||
	    usr1_remapped)
		return 8;
	usr1_remapped = -1;
	kill(getpid(), SIGUSR1);
	if (epoll_pwait2(ep, &ev, 1, NULL, &all) != -1 || errno != EINTR ||
	    usr1_remapped)
		return 9;
	close(ep);
	return 0;
}

TEST(sigsys_unblocked_in_masks_of_their_own)
{
	NEEDS_SHIM();
	ASSERT_CHILD_OK(in_child_within(masks_of_their_own, 30));
}

static int nr_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

/*
 * A vfork() child that closes every descriptor before exec() leaves its
 * parent's remaps working and its descriptors as they were; a fork()
 * child keeps no descriptor for memory it did not inherit (MADV_DONTFORK).
 */
static int vfork_and_dontfork(void)
{
	struct stat st;
	char path[64];
	int i, before = -1, fd, found = 0;
	char *w;
	pid_t pid;

	for (i = 0; i < 20; i++) {
		w = make_window(SHARED_ANON);
		if (w == MAP_FAILED || raw_rfp(w, 1, 1, 0) || shows(w, 0) != 1)
			return 2;
		pid = vfork();
		if (pid == 0) {
			closefrom(3);
			_exit(0);
		}
		waitpid(pid, NULL, 0);
		if (raw_rfp(w, 1, 2, 0) || shows(w, 0) != 2)
			return 3;
		munmap(w, PAGES * page);
		if (i == 0)
			before = nr_fds();
	}
	if (nr_fds() != before)
		return 4;
	w = make_window(SHARED_ANON);
	if (w == MAP_FAILED || raw_rfp(w, 1, 1, 0) ||
	    madvise(w, PAGES * page, MADV_DONTFORK))
		return 2;
	/* The memfd behind it: the descriptor whose file backs W. */
	snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx",
		 (unsigned long)w, (unsigned long)w + page);
	if (stat(path, &st))
		return 0;	/* no map_files to tell by (not root) */
	pid = fork();
	if (pid == 0)
		_exit(fds_of(st.st_dev, st.st_ino));
	waitpid(pid, &fd, 0);
	found = WEXITSTATUS(fd);
	return found ? 5 : 0;
}

TEST(vfork_and_madv_dontfork)
{
	NEEDS_SHIM();
	ASSERT_CHILD_OK(in_child_within(vfork_and_dontfork, 30));
}

/*
 * Shared memory that the shim must find without privileges: a shared
 * mapping of /dev/zero, the same pages mapped again by mremap() with an
 * old size of 0 (its first view unmapped), and memory a worker process
 * inherited after it closed every descriptor.
 */
static int more_shared_memory(void)
{
	int zero = open("/dev/zero", O_RDWR);
	char *w, *again;
	pid_t pid;
	int status;

	w = mmap(NULL, PAGES * page, PROT_READ | PROT_WRITE, MAP_SHARED, zero, 0);
	close(zero);
	if (w == MAP_FAILED)
		return 2;
	sprintf(w + 3 * page, "page 3");
	if (raw_rfp(w, 1, 3, 0) || shows(w, 0) != 3)
		return 3;
	again = mremap(w, 0, PAGES * page, MREMAP_MAYMOVE);
	if (again == MAP_FAILED)
		return 2;
	munmap(w, PAGES * page);
	if (raw_rfp(again, 1, 3, 0) || shows(again, 0) != 3)
		return 4;
	w = make_window(SHARED_ANON);
	pid = fork();
	if (pid == 0) {
		closefrom(3);
		_exit(raw_rfp(w, 1, 2, 0) || shows(w, 0) != 2 ? 1 : 0);
	}
	waitpid(pid, &status, 0);
	return WEXITSTATUS(status) ? 5 : 0;
}

/*
 * A vfork() child that dies inside the shim (here killed by a filter of
 * its own at the memfd_create() of its shared mmap()) leaves its pid in
 * the thread's slot that it shared with its parent: the parent's locks
 * are still followed.
 */
static int vfork_child_dies_inside(void)
{
	char *w = make_window(SHARED_ANON);
	int status;
	pid_t pid;

	if (w == MAP_FAILED)
		return 2;
	/* A lock set and cleared: the table of locked ranges is not blank. */
	if (mlock(w + 3 * page, page) || munlock(w + 3 * page, page))
		return 10;
	pid = vfork();
	if (pid == 0) {
		if (!program_filter_of(SYS_memfd_create, SECCOMP_RET_KILL_PROCESS))
			mmap(NULL, page, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		_exit(3);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 2;
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSYS)
		return 4;	/* not killed inside the shim's mmap() */
	if (mlock(w + page, page))
		return 10;
	if (raw_rfp(w + page, 1, 0, 0) || shows(w + page, 0) != 0)
		return 5;
	return vmflag(w + page, " lo") == 1 ? 0 : 6;
}

TEST(vfork_child_dies_inside_the_shim)
{
	int status;

	NEEDS_SHIM();
	status = in_child_within(vfork_child_dies_inside, 30);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 10)
		SKIP(return, "mlock() refused");
	/* 6: the parent's locked page came out of its remap unlocked. */
	ASSERT_CHILD_OK(status);
}

/*
 * Shared anonymous memory is not a file: RLIMIT_FSIZE does not limit it
 * (the shim's memfd would raise SIGXFSZ at its ftruncate()).
 */
static int shared_memory_past_fsize(void)
{
	struct rlimit lim = { page, page };
	char *p;

	if (setrlimit(RLIMIT_FSIZE, &lim))
		return 2;
	p = mmap(NULL, 256 * page, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 3;
	p[255 * page] = 1;
	return 0;
}

TEST(shared_memory_past_the_file_size_limit)
{
	NEEDS_SHIM();
	ASSERT_CHILD_OK(in_child_within(shared_memory_past_fsize, 30));
}

TEST(shared_memory_found_without_privileges)
{
	NEEDS_SHIM();
	ASSERT_EQ(0, in_child(more_shared_memory, getuid() == 0))
		TH_LOG("3: /dev/zero, 4: mremap() old size 0, 5: after closefrom()");
}

/* The Seccomp_filters: line (Linux 5.9); -1 without one. */
static int seccomp_filters(void)
{
	return status_number("Seccomp_filters:");
}

/* A chain of exec()s keeps one filter, not one an exec. */
TEST(exec_chain_keeps_one_filter)
{
	char out[4096], env[64];
	char *argv[] = { "rfp-compat-test", "--child", "exec-chain-5", NULL };

	NEEDS_SHIM();
	if (seccomp_filters() < 0)
		SKIP(return, "no Seccomp_filters in /proc/self/status (Linux 5.9)");
	if (seccomp_mode() != 2)
		SKIP(return, "no seccomp filter (rfp-compat --glibc-only)");
	snprintf(env, sizeof(env), "RFP_TEST_FILTERS=%d", seccomp_filters());
	ASSERT_EQ(0, run_self(argv, env, out, sizeof(out))) TH_LOG("%s", out);
}

static int shm_nattch(int id)
{
	struct shmid_ds ds;

	return shmctl(id, IPC_STAT, &ds) ? -1 : (int)ds.shm_nattch;
}

/*
 * A SysV shared memory segment, remapped: the range is an attachment of
 * it, as the kernel's remap makes it (two attachments, one left after
 * shmdt() of the first), without privileges too.  -1: no SysV IPC.
 */
static int remap_sysv_segment(void)
{
	int id = shmget(IPC_PRIVATE, 4 * page, IPC_CREAT | 0600), i, ret = 0;
	char *w;

	if (id < 0)
		return errno == ENOSYS ? 254 : 2;
	w = shmat(id, NULL, 0);
	if (w == (void *)-1)
		ret = 2;
	for (i = 0; !ret && i < 4; i++)
		sprintf(w + i * page, "page %d", i);
	if (!ret && (raw_rfp(w, 1, 3, 0) || shows(w, 0) != 3))
		ret = 3;
	if (!ret && shm_nattch(id) != 2)
		ret = 4;
	if (!ret && (shmdt(w) || shm_nattch(id) != 1 || shows(w, 0) != 3))
		ret = 5;
	shmctl(id, IPC_RMID, NULL);
	return ret;
}

TEST(sysv_shared_memory)
{
	int drop, ret;

	NEEDS_SHIM();
	for (drop = 0; drop < 2 && (!drop || getuid() == 0); drop++) {
		ret = in_child(remap_sysv_segment, drop);
		if (ret == 254)
			SKIP(return, "no SysV IPC in this kernel (CONFIG_SYSVIPC)");
		EXPECT_EQ(0, ret) TH_LOG("%s; 3: remap, 4: not an attachment, 5: shmdt()",
					 drop ? "as uid 65534" : "as this process is");
	}
}

/* ---- what a program that never remaps can count ---- */

/* VmSize, in kB: what VMAs cannot tell apart when they merge. */
static long vm_size(void)
{
	return status_number("VmSize:");
}

static int nr_vmas(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0, c;

	while (f && (c = getc(f)) != EOF)
		n += c == '\n';
	if (f)
		fclose(f);
	return n;
}

/*
 * 100,000 shared anonymous mappings made and unmapped one after the
 * other: after each munmap() the process has the descriptors and the
 * VMAs it had before (no /proc/self/maps kept open, no memfd), and while
 * one is mapped, the shim holds its memfd and /proc/self/maps at most.
 */
static int map_unmap_pairs(void)
{
	int fds = nr_fds(), vmas = nr_vmas(), i;
	long size = vm_size();
	char *q;

	for (i = 1; i <= 100000; i++) {
		q = mmap(NULL, page, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (q == MAP_FAILED)
			return 2;
		*q = 1;
		if (i % 10000 == 0 && nr_fds() > fds + 2)
			return 3;
		if (munmap(q, page))
			return 2;
		if ((i % 10000 == 0 || i < 3) && nr_fds() != fds)
			return 4;
		if ((i % 10000 == 0 || i < 3) &&
		    (nr_vmas() != vmas || vm_size() != size))
			return 5;
	}
	return 0;
}

/*
 * More descriptors kept at once than the table's first chunk holds (300
 * unlinked files mapped shared), then all unmapped: the table's memory
 * is returned, and every descriptor closed.
 */
static int table_memory_returned(void)
{
	static char *w[300];
	char name[64], line[512];
	unsigned long lo, hi;
	FILE *f = fopen("/proc/self/maps", "r");
	int fds, vmas, i = 0, fd;
	long size;

	/*
	 * The harness's shared memory, which a child does not use: unmapped,
	 * so that the shim keeps nothing else and its table empties.  Where
	 * it took more than the table's first chunk, the others go too.
	 */
	size = vm_size();
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "memfd:rfp-compat") &&
		    sscanf(line, "%lx-%lx", &lo, &hi) == 2) {
			munmap((void *)lo, hi - lo);
			size -= (hi - lo) >> 10;
			i++;
		}
	if (f)
		fclose(f);
	if (i > 255 && vm_size() >= size)
		return 6;
	fds = nr_fds();
	vmas = nr_vmas();
	size = vm_size();

	for (i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "rfp-table-%d", i);
		fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || ftruncate(fd, page) || unlink(name))
			return 2;
		w[i] = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (w[i] == MAP_FAILED || close(fd))
			return 2;
	}
	for (i = 0; i < 300; i++)
		if (munmap(w[i], page))
			return 2;
	return nr_fds() != fds ? 4 : nr_vmas() != vmas || vm_size() != size ? 5 : 0;
}

/*
 * 10,000 remaps across 100 files, each window scrambled and unmapped:
 * every page shows what was asked of it, and the process is left with
 * the descriptors and VMAs it had.
 */
static int remaps_across_files(void)
{
	static char *w[100];
	static unsigned long shown[100][4];
	uint64_t x = 88172645463325252ull;
	int fds = nr_fds(), vmas = nr_vmas(), i, f, fd;
	long before, size = vm_size();
	char name[64];

	for (f = 0; f < 100; f++) {
		snprintf(name, sizeof(name), "rfp-files-%d", f);
		fd = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || ftruncate(fd, 4 * page))
			return 2;
		w[f] = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (w[f] == MAP_FAILED || close(fd))
			return 2;
		for (i = 0; i < 4; i++) {
			sprintf(w[f] + i * page, "%d", i);
			shown[f][i] = i;
		}
	}
	before = emulated();
	for (i = 0; i < 10000; i++) {
		unsigned long pg, off;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		f = x % 100;
		pg = (x >> 8) % 4;
		off = (x >> 16) % 4;
		if (raw_rfp(w[f] + pg * page, 1, off, 0))
			return 7;
		shown[f][pg] = off;
	}
	if (emulated() != before + 10000)
		return 7;
	for (f = 0; f < 100; f++) {
		for (i = 0; i < 4; i++)
			if (shown[f][i] != (unsigned long)atoi(w[f] + i * page))
				return 8;
		if (munmap(w[f], 4 * page))
			return 2;
		snprintf(name, sizeof(name), "rfp-files-%d", f);
		unlink(name);
	}
	return nr_fds() != fds ? 4 : nr_vmas() != vmas || vm_size() != size ? 5 : 0;
}

/* Each in a process of its own, which nothing mapped before. */
static const struct long_run_fn long_runs[3] = {
	{ "map-unmap-pairs", map_unmap_pairs },
	{ "table-memory-returned", table_memory_returned },
	{ "remaps-across-files", remaps_across_files },
};

FIXTURE(long_run) {};
FIXTURE_VARIANT(long_run) { int run; };
FIXTURE_VARIANT_ADD(long_run, map_unmap_pairs) { .run = 0 };
FIXTURE_VARIANT_ADD(long_run, table_memory_returned) { .run = 1 };
FIXTURE_VARIANT_ADD(long_run, remaps_across_files) { .run = 2 };
FIXTURE_SETUP(long_run) {}
FIXTURE_TEARDOWN(long_run) {}

TEST_F_TIMEOUT(long_run, nothing_left_behind, 300)
{
	char out[4096], what[64];
	char *argv[] = { "rfp-compat-test", "--child", what, NULL };
	int status;

	NEEDS_SHIM();
	snprintf(what, sizeof(what), "%s", long_runs[variant->run].name);
	status = run_self(argv, NULL, out, sizeof(out));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("%s: exit status %d (2: a call failed, 3: more than two descriptors while mapped, 4: a descriptor left, 5: a VMA left, 6: the table's memory kept, 7-8: a remap); %s",
		       what, WIFEXITED(status) ? WEXITSTATUS(status) : -1, out);
}

/*
 * Under a descriptor limit of LIM, shared anonymous memory mapped first:
 * the program's next open() gets the lowest free number all the same.
 */
static int next_number_at_limit(int lim, int lower_after)
{
	struct rlimit r;
	char *q;
	int fd;

	if (getrlimit(RLIMIT_NOFILE, &r))
		return 10;
	r.rlim_cur = lim;
	if (setrlimit(RLIMIT_NOFILE, &r))
		return 11;
	closefrom(3);
	q = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (q == MAP_FAILED)
		return 12;
	if (lower_after) {
		r.rlim_cur = lower_after;
		if (setrlimit(RLIMIT_NOFILE, &r))
			return 11;
		q = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (q == MAP_FAILED)
			return 12;
	}
	fd = open("/dev/null", O_RDONLY);
	if (fd != 3)
		return fd < 0 ? 13 : 100 + fd;
	strcpy(q, "page 0");
	return 0;
}

static int limit_4(void) { return next_number_at_limit(4, 0); }
static int limit_5(void) { return next_number_at_limit(5, 0); }
static int limit_16(void) { return next_number_at_limit(16, 0); }
static int limit_64(void) { return next_number_at_limit(64, 0); }
static int limit_256(void) { return next_number_at_limit(256, 0); }
static int limit_1024_then_256(void) { return next_number_at_limit(1024, 256); }
static int limit_256_then_1024(void) { return next_number_at_limit(256, 1024); }

TEST(descriptor_numbers_as_the_program_expects)
{
	static const struct { int (*fn)(void); const char *what; } at[] = {
		{ limit_4, "limit 4" }, { limit_5, "limit 5" },
		{ limit_16, "limit 16" }, { limit_64, "limit 64" },
		{ limit_256, "limit 256" },
		{ limit_1024_then_256, "limit 1024, then 256" },
		{ limit_256_then_1024, "limit 256, then 1024" },
	};
	struct rlimit r;
	unsigned int i;
	int ret;

	NEEDS_SHIM();
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &r));
	if (r.rlim_max < 1024)
		SKIP(return, "the hard descriptor limit is %lu, below 1024",
		     (unsigned long)r.rlim_max);
	for (i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		ret = in_child(at[i].fn, 0);
		EXPECT_EQ(0, ret) TH_LOG("%s: %s%d", at[i].what,
					 ret >= 100 ? "open() gave " : "step ",
					 ret >= 100 ? ret - 100 : ret);
	}
}

/* MemTotal + SwapTotal, in bytes. */
static unsigned long long ram_and_swap(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	unsigned long long kb, sum = 0;
	char key[64];

	while (f && fscanf(f, "%63s %llu kB\n", key, &kb) == 2)
		if (!strcmp(key, "MemTotal:") || !strcmp(key, "SwapTotal:"))
			sum += kb << 10;
	if (f)
		fclose(f);
	return sum;
}

/*
 * Shared anonymous memory is charged against overcommit: a size the
 * kernel refuses (twice RAM and swap, one page, with and without
 * MAP_NORESERVE) gets its ENOMEM under the shim too, whatever
 * vm.overcommit_memory says.
 */
TEST(overcommit_like_the_kernel)
{
	unsigned long long big = 2 * ram_and_swap();
	const struct { unsigned long long len; int flags; } c[] = {
		{ page, 0 }, { big, 0 }, { big, MAP_NORESERVE },
		{ big / 4, 0 }, { big / 4, MAP_NORESERVE },
	};
	int mode = -1, i, kernel_errno, shim_errno;
	FILE *f;
	void *k, *s;

	NEEDS_SHIM();
	if (sizeof(long) == 4 && big > 0xc0000000ull)
		big = 0xc0000000ull;
	f = fopen("/proc/sys/vm/overcommit_memory", "r");
	if (f && fscanf(f, "%d", &mode) != 1)
		mode = -1;
	if (f)
		fclose(f);
	for (i = 0; i < (int)(sizeof(c) / sizeof(c[0])); i++) {
		size_t len = i == 1 || i == 2 ? big : i > 2 ? big / 4 : c[i].len;

		k = raw_mmap(NULL, len, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS | c[i].flags, -1);
		kernel_errno = k == MAP_FAILED ? errno : 0;
		if (k != MAP_FAILED)
			syscall(SYS_munmap, k, len);
		s = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS | c[i].flags, -1, 0);
		shim_errno = s == MAP_FAILED ? errno : 0;
		if (s != MAP_FAILED)
			munmap(s, len);
		EXPECT_EQ(kernel_errno, shim_errno)
			TH_LOG("vm.overcommit_memory %d, %zu bytes%s: the kernel says %s, the shim %s",
			       mode, len, c[i].flags ? ", MAP_NORESERVE" : "",
			       strerror(kernel_errno), strerror(shim_errno));
	}
}

/* ---- the launcher ---- */

/* Copy FROM to TO, with its mode. */
static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	struct stat st;
	int in = open(from, O_RDONLY), out;
	ssize_t n;

	if (in < 0 || fstat(in, &st))
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, st.st_mode & 0777);
	if (out < 0)
		return -1;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			return -1;
	close(in);
	return close(out);
}

/*
 * The directory of the shim loaded into this program, where rfp-compat
 * and its libraries are installed (shim/Makefile): its path as ld.so
 * loaded it, links kept.
 */
static const char *own_dir(void)
{
	static char dir[PATH_MAX - 64];
	void *sym = dlsym(RTLD_DEFAULT, "rfp_compat_emulated");
	Dl_info info;

	if (!sym || !dladdr(sym, &info) || !info.dli_fname ||
	    strlen(info.dli_fname) >= sizeof(dir))
		return NULL;
	strcpy(dir, info.dli_fname);
	*strrchr(dir, '/') = '\0';
	return dir;
}

/*
 * rfp-compat copied into DIR, with LIB as its librfp-compat.so (a copy,
 * or a link to it if LINK), runs this program's remapping child: its
 * wait status, and what it said in OUT.
 */
static int launch_from(const char *dir, const char *lib, bool link,
		       char *out, size_t size)
{
	char launcher[PATH_MAX + 64], to[PATH_MAX + 64], self[PATH_MAX];
	char *argv[] = { launcher, "-q", self, "--child", "launched", NULL };
	ssize_t n;

	snprintf(launcher, sizeof(launcher), "%.3900s/rfp-compat", own_dir());
	snprintf(to, sizeof(to), "%.3900s/rfp-compat", dir);
	if (copy_file(launcher, to))
		return -1;
	snprintf(to, sizeof(to), "%.3900s/librfp-compat.so", dir);
	if (link ? symlink(lib, to) : copy_file(lib, to))
		return -1;
	snprintf(launcher, sizeof(launcher), "%.3900s/rfp-compat", dir);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -1;
	self[n] = '\0';
	/* As from a shell that has no shim: rfp-compat gives one. */
	return run_program(launcher, argv, "-LD_PRELOAD", out, size);
}

/* Either the program ran with the shim (0), or it did not run: 126 and why. */
#define EXPECT_SHIM_OR_REFUSED(status, out, where) do {			\
	int _s = (status);						\
	EXPECT_TRUE(WIFEXITED(_s) && (WEXITSTATUS(_s) == 0 ||		\
		    (WEXITSTATUS(_s) == 126 && strstr(out, "rfp-compat:"))))	\
		TH_LOG("%s: exit status %d, said: %s", where,		\
		       WIFEXITED(_s) ? WEXITSTATUS(_s) : -1, out);	\
} while (0)

static void remove_launcher(const char *dir)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%.3900s/rfp-compat", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%.3900s/librfp-compat.so", dir);
	unlink(path);
	rmdir(dir);
}

/*
 * ld.so splits LD_PRELOAD at spaces and colons: a launcher in such a
 * directory either preloads the shim all the same or refuses to run.
 */
TEST(launcher_path_with_space_or_colon)
{
	const char *names[] = { "rfp compat.XXXXXX", "rfp:compat.XXXXXX",
				"rfp\tcompat.XXXXXX" };
	char dir[PATH_MAX + 64], lib[PATH_MAX + 64], out[4096], cwd[PATH_MAX];
	unsigned int i;
	int status;

	NEEDS_SHIM();
	ASSERT_NE(NULL, getcwd(cwd, sizeof(cwd)));
	snprintf(lib, sizeof(lib), "%.3900s/librfp-compat.so", own_dir());
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(dir, sizeof(dir), "%.3900s/%s", cwd, names[i]);
		ASSERT_NE(NULL, mkdtemp(dir));
		status = launch_from(dir, lib, false, out, sizeof(out));
		remove_launcher(dir);
		EXPECT_SHIM_OR_REFUSED(status, out, dir);
	}
}

/*
 * A library that ld.so cannot load (not a library of the program's
 * kind, or on a noexec mount: below): the launcher says so and runs
 * nothing.
 */
TEST(launcher_library_that_cannot_load)
{
	char dir[PATH_MAX + 64], lib[PATH_MAX + 64], out[4096], cwd[PATH_MAX];
	int status;

	NEEDS_SHIM();
	ASSERT_NE(NULL, getcwd(cwd, sizeof(cwd)));
	/* Not an ELF library at all: this source's neighbour, a text file. */
	snprintf(dir, sizeof(dir), "%.3900s/rfp-lib.XXXXXX", cwd);
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(lib, sizeof(lib), "%.3900s/rfp-compat.txt", dir);
	FILE *f = fopen(lib, "w");

	ASSERT_NE(NULL, f);
	fputs("not a library\n", f);
	fclose(f);
	status = launch_from(dir, lib, false, out, sizeof(out));
	unlink(lib);
	remove_launcher(dir);
	EXPECT_SHIM_OR_REFUSED(status, out, "a text file as the library");
	EXPECT_NE(0, WEXITSTATUS(status));
	/* The library of the other word size, where there is one. */
	snprintf(lib, sizeof(lib), "%.3900s/librfp-compat%d.so", own_dir(),
		 sizeof(long) == 8 ? 32 : 64);
	if (!access(lib, R_OK)) {
		snprintf(dir, sizeof(dir), "%.3900s/rfp-lib.XXXXXX", cwd);
		ASSERT_NE(NULL, mkdtemp(dir));
		status = launch_from(dir, lib, false, out, sizeof(out));
		remove_launcher(dir);
		EXPECT_SHIM_OR_REFUSED(status, out, lib);
		EXPECT_NE(0, WEXITSTATUS(status));
	}
}

static int noexec_launch(void)
{
	char lib[PATH_MAX + 64], out[4096], dir[] = "rfp-noexec.XXXXXX";
	int status;

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return 254;
	if (!mkdtemp(dir) || chdir(dir) || mkdir("lib", 0755))
		return 253;
	if (mount("rfp", "lib", "tmpfs", MS_NOEXEC, NULL))
		return 254;
	/* The launcher where it may run, its library a link into the mount. */
	snprintf(lib, sizeof(lib), "%.3900s/librfp-compat.so", own_dir());
	if (copy_file(lib, "lib/librfp-compat.so"))
		return 253;
	status = launch_from(".", "lib/librfp-compat.so", true, out, sizeof(out));
	umount("lib");
	rmdir("lib");
	remove_launcher(".");
	if (chdir("..") || rmdir(dir))
		return 253;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 1;	/* a noexec launcher ran? */
	return WIFEXITED(status) && WEXITSTATUS(status) == 126 &&
	       strstr(out, "rfp-compat:") ? 0 : 2;
}

TEST(launcher_on_a_noexec_mount)
{
	int ret;

	NEEDS_SHIM();
	ret = in_child(noexec_launch, 0);
	if (ret == 254)
		SKIP(return, "no mount namespace of its own to mount a noexec tmpfs in");
	EXPECT_EQ(0, ret) TH_LOG("1: it ran, 2: it said nothing or exited otherwise, 253: setting up");
}

/*
 * Under strace -f, which sees every call and signal, the program's
 * remaps are emulated all the same.
 */
TEST(traced_by_strace)
{
	char self[PATH_MAX] = "";
	char *argv[] = { "strace", "-f", "-qq", "-o", "/dev/null",
			 self, "--child", "traced", NULL };
	int status;
	pid_t pid;

	NEEDS_SHIM();
	/* In strace's child, /proc/self/exe would be strace. */
	ASSERT_LT(0, readlink("/proc/self/exe", self, sizeof(self) - 1));
	if (access("/usr/bin/strace", X_OK) && access("/compat/strace", X_OK))
		SKIP(return, "no strace here");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		execv(access("/usr/bin/strace", X_OK) ? "/compat/strace" :
		      "/usr/bin/strace", argv);
		_exit(127);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_CHILD_OK(status);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--child"))
		return child_main(argv[2]);
	return test_harness_run(argc, argv);
}
