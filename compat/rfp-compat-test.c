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
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "rfp-tool.h"

#define PAGES 8

static long page;

/* How many calls the shim has emulated; -1 when it is not loaded. */
static long emulated(void)
{
	unsigned long (*fn)(void) = dlsym(RTLD_DEFAULT, "rfp_compat_emulated");

	return fn ? (long)fn() : -1;
}

/* The raw syscall, as PyPy-STM makes it (the seccomp filter's case). */
static int raw_rfp(void *addr, unsigned long npages, unsigned long pgoff,
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

/* The kernel's refusals, with the mapping unchanged (SPEC 2). */
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
TEST_F(window, raw_mlock_is_lost)
{
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
static int run_self(char *const argv[], const char *env, char *out, size_t size)
{
	int p[2], status;
	ssize_t n, len = 0;
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 2);
		if (env)
			putenv((char *)env);
		execv("/proc/self/exe", argv);
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

/* The child programs run_self() starts: a remap of a new window each. */
static int child_main(const char *what)
{
	char *w;
	long before = emulated();

	page = sysconf(_SC_PAGESIZE);
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

static long vmstat(const char *name)
{
	char line[128];
	FILE *f = fopen("/proc/vmstat", "r");
	long v = -1;
	size_t n = strlen(name);

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n) && line[n] == ' ')
			v = atol(line + n + 1);
	if (f)
		fclose(f);
	return v;
}

/*
 * The kernel still sees each process's first call (and names it in its
 * log, rate-limited); the shim asks it no more after its -ENOSYS.
 */
TEST_F(window, kernel_sees_the_first_call)
{
	char out[4096];
	char *argv[] = { "rfp-compat-test", "--child", "fork", NULL };
	long before = vmstat("remap_file_pages_refused");

	if (before < 0)
		SKIP(return, "no remap_file_pages_refused in /proc/vmstat: a kernel without the syscall counts nothing");
	ASSERT_EQ(0, run_self(argv, NULL, out, sizeof(out)));
	/* The child and its forked child: one refused call each. */
	EXPECT_EQ(before + 2, vmstat("remap_file_pages_refused"));
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
 * FN's answer (0, or an errno) from a child that first drops to uid
 * 65534 if DROP; -1 when it did not exit.
 */
static int in_child(int (*fn)(void), int drop)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (drop && (setgid(65534) || setuid(65534)))
			_exit(254);
		_exit(fn() & 0xff);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
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

/* The Seccomp: line of /proc/self/status: 0 none, 2 a filter. */
static int seccomp_mode(void)
{
	char line[128];
	FILE *f = fopen("/proc/self/status", "r");
	int mode = -1;

	while (f && fgets(line, sizeof(line), f))
		sscanf(line, "Seccomp: %d", &mode);
	if (f)
		fclose(f);
	return mode;
}

/*
 * rfp-compat --glibc-only (RFP_COMPAT_SECCOMP=0) installs no filter:
 * glibc's wrapper is emulated, a raw call is not.  make compat runs this
 * case so; under the filter, which nothing removes, it skips.
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
	raw_rfp(w, 1, 0, 0);
	ASSERT_EQ(before + PAGES, emulated());
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

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--child"))
		return child_main(argv[2]);
	return test_harness_run(argc, argv);
}
