// SPDX-License-Identifier: GPL-2.0
/*
 * rfp-checks: what a remap does to a mapping beyond the syscall's own
 * promises, checked against mmap(MAP_FIXED | MAP_SHARED) of the same
 * range in the same process, and the series' reporting.  The tree's
 * kselftest (tools/testing/selftests/mm/remap_file_pages.c) pins the
 * syscall's ABI; these are the cases that left it because they are facts
 * about mmap() (README.md, "make check"; RESULTS.md says where each v3
 * case went):
 *
 *  - data written through a remapped window reaches the object after exit
 *    and on disk; a fork child's layout is its own; SIGBUS past a
 *    truncation; ENOMEM at vm.max_map_count, as mmap() meets it;
 *  - the protections under READ_IMPLIES_EXEC, also on a noexec mount;
 *    the VMA's name for an unlinked file; the file's access time; the
 *    memory policy; RLIMIT_AS at the usage; a PMD-mapped THP split;
 *  - the log naming a process at most once, and the tracepoint's record
 *    of every call (in the trace instance the harness names in
 *    REMAP_FILE_PAGES_TRACE).
 *
 * Like the kselftest it writes no machine-wide setting: the THP case
 * needs shmem THP, which the harness turns on around it and puts back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/magic.h>
#include <linux/userfaultfd.h>
#include <sys/fanotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <sys/wait.h>

#include "kselftest_harness.h"

/* Pages in the backing object, and in the window mapped over its start. */
#define OBJ_PAGES	16
#define WIN_PAGES	8

#ifndef MAP_NONBLOCK
#define MAP_NONBLOCK	0x10000
#endif

static unsigned long page_size;

static long sys_remap_file_pages(void *start, unsigned long size,
				 unsigned long prot, unsigned long pgoff,
				 unsigned long flags)
{
	return syscall(__NR_remap_file_pages, start, size, prot, pgoff, flags);
}

/*
 * The errno of a system call the kernel does not have.  A kernel without
 * remap_file_pages() fails it exactly like an unknown syscall number.
 */
static int no_syscall_errno(void)
{
	errno = 0;
	syscall(-1L);
	return errno;
}

/*
 * Is the syscall off (the sysctl at 0, or a kernel without it)?  A call
 * with no VMA fails with EINVAL where it runs.
 */
static bool remap_is_off(void)
{
	int err;

	if (!sys_remap_file_pages(NULL, 0, 0, 0, 0))
		return false;
	err = errno;
	return err == no_syscall_errno();
}

enum backing {
	BACKING_TMPFS,
	BACKING_SHMEM_ANON,
	BACKING_MEMFD,
	BACKING_DISK,
};

static long read_sysctl(const char *path)
{
	long val = -1;
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &val) != 1)
		val = -1;
	fclose(f);
	return val;
}

#define MAX_MAP_COUNT "/proc/sys/vm/max_map_count"

FIXTURE(remap)
{
	int fd;			/* -1 for a shared anonymous mapping */
	char path[256];
	char *win;		/* WIN_PAGES pages, MAP_SHARED, RW */
};

FIXTURE_VARIANT(remap)
{
	enum backing backing;
	const char *dir;	/* where the file is created, if any */
};

FIXTURE_VARIANT_ADD(remap, tmpfs)
{
	.backing = BACKING_TMPFS,
	.dir = "/dev/shm",
};

FIXTURE_VARIANT_ADD(remap, shmem_anon)
{
	.backing = BACKING_SHMEM_ANON,
};

FIXTURE_VARIANT_ADD(remap, memfd)
{
	.backing = BACKING_MEMFD,
};

FIXTURE_VARIANT_ADD(remap, disk)
{
	.backing = BACKING_DISK,
	.dir = ".",
};

/* Every byte of a page tells which page of the object it is, and of what. */
static char page_byte(unsigned long pgoff, unsigned long i, int gen)
{
	return (char)(pgoff * 7 + i * 13 + gen * 101 + 1);
}

static void fill_page(char *p, unsigned long pgoff, int gen)
{
	unsigned long i;

	for (i = 0; i < page_size; i++)
		p[i] = page_byte(pgoff, i, gen);
}

static bool page_is(const char *p, unsigned long pgoff, int gen)
{
	unsigned long i;

	for (i = 0; i < page_size; i++)
		if (p[i] != page_byte(pgoff, i, gen))
			return false;
	return true;
}

/*
 * In @path (/proc/self/maps or smaps), the entry of the VMA that covers
 * @addr: copy into @buf its first line, or with @field ("Locked:"...) the
 * rest of its line that starts with that.
 */
static bool vma_entry(const char *path, unsigned long addr, const char *field,
		      char *buf, size_t len)
{
	unsigned long start, end;
	bool in = false, found = false;
	char line[512];
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2) {
			if (start > addr)
				break;
			in = addr < end;
			found = in && !field;
		} else {
			found = in && field &&
				!strncmp(line, field, strlen(field));
		}
		if (found)
			snprintf(buf, len, "%s", line + (field ? strlen(field) : 0));
	}
	fclose(f);
	return found;
}

/*
 * The offset into the object (in pages) that the page at @addr maps, and
 * its permissions, as /proc/self/maps shows them; false if no VMA covers it.
 */
static bool maps_lookup(unsigned long addr, unsigned long *pgoff,
			char perms[5])
{
	unsigned long long off;	/* a 32-bit kernel's reach 16 TiB */
	unsigned long start, end;
	char line[512];

	if (!vma_entry("/proc/self/maps", addr, NULL, line, sizeof(line)) ||
	    sscanf(line, "%lx-%lx %4s %llx", &start, &end, perms, &off) != 4)
		return false;
	*pgoff = off / page_size + (addr - start) / page_size;
	return true;
}

/*
 * Number of VMAs that cover [addr, addr + len), as vm.max_map_count counts
 * them: the vsyscall page is in /proc/self/maps, but it is no VMA.
 */
static int maps_count(unsigned long addr, unsigned long len)
{
	unsigned long start, end;
	char line[512];
	int n = 0;
	FILE *f;

	f = fopen("/proc/self/maps", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx", &start, &end) != 2 ||
		    strstr(line, "[vsyscall]"))
			continue;
		if (end > addr && start < addr + len)
			n++;
	}
	fclose(f);
	return n;
}

/*
 * A new file in @dir, on tmpfs or on a disk filesystem as @tmpfs says;
 * -ENOENT if @dir is not such a directory.  ramfs (an initramfs) is
 * neither.
 */
static int open_file_in(const char *dir, bool tmpfs, char *path, size_t len)
{
	struct statfs sfs;
	bool on_tmpfs;
	int fd;

	if (!dir || statfs(dir, &sfs) || sfs.f_type == RAMFS_MAGIC)
		return -ENOENT;
	on_tmpfs = sfs.f_type == TMPFS_MAGIC;
	if (on_tmpfs != tmpfs)
		return -ENOENT;
	snprintf(path, len, "%s/remap_file_pages.XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	return fd;
}

/*
 * Map the window: the first WIN_PAGES pages of an OBJ_PAGES object on
 * @backing, page i filled for object page i.  The file, if any, is
 * created in @dir.
 */
static void setup_window(struct __test_metadata *_metadata,
			 enum backing backing, const char *dir, int *fd,
			 char *path, size_t path_len, char **win)
{
	unsigned long obj_len, i;
	char *obj;
	int ret;

	page_size = sysconf(_SC_PAGESIZE);
	obj_len = OBJ_PAGES * page_size;

	switch (backing) {
	case BACKING_TMPFS:
	case BACKING_DISK:
		ret = open_file_in(dir, backing == BACKING_TMPFS, path,
				   path_len);
		if (ret == -ENOENT && backing == BACKING_TMPFS)
			SKIP(return, "no tmpfs at %s", dir);
		if (ret == -ENOENT)
			SKIP(return, "run from a directory on a disk filesystem");
		if (ret == -EROFS || ret == -EACCES || ret == -EPERM)
			SKIP(return, "cannot create a file in %s: %s", dir,
			     strerror(-ret));
		ASSERT_GE(ret, 0);
		*fd = ret;
		break;
	case BACKING_MEMFD:
		*fd = memfd_create("remap_file_pages", 0);
		ASSERT_GE(*fd, 0);
		break;
	case BACKING_SHMEM_ANON:
		break;
	}

	if (*fd >= 0) {
		ASSERT_EQ(ftruncate(*fd, obj_len), 0);
		obj = mmap(NULL, obj_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			   *fd, 0);
	} else {
		obj = mmap(NULL, obj_len, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	}
	ASSERT_TRUE(obj != MAP_FAILED);
	for (i = 0; i < OBJ_PAGES; i++)
		fill_page(obj + i * page_size, i, 0);

	/*
	 * The window is the first WIN_PAGES pages of that mapping; for the
	 * shared anonymous backing the rest stays reachable by remapping,
	 * since the shmem object keeps its size.
	 */
	ASSERT_EQ(munmap(obj + WIN_PAGES * page_size,
			 (OBJ_PAGES - WIN_PAGES) * page_size), 0);
	*win = obj;

	ret = sys_remap_file_pages(*win, page_size, 0, 0, 0);
	if (ret && errno == no_syscall_errno())
		SKIP(return, "remap_file_pages() is off: ENOSYS");
	ASSERT_EQ(ret, 0);
}

static void teardown_window(int fd, const char *path, char *win)
{
	if (win)
		munmap(win, WIN_PAGES * page_size);
	if (fd >= 0)
		close(fd);
	if (path[0])
		unlink(path);
}

FIXTURE_SETUP(remap)
{
	self->win = NULL;
	self->fd = -1;
	self->path[0] = '\0';
	setup_window(_metadata, variant->backing, variant->dir, &self->fd,
		     self->path, sizeof(self->path), &self->win);
}

FIXTURE_TEARDOWN(remap)
{
	teardown_window(self->fd, self->path, self->win);
}

static char *page_at(char *base, unsigned long i)
{
	return base + i * page_size;
}

/*
 * The first window page that does not show object page pgoff[i],
 * generation gen[pgoff[i]] (0 if @gen is NULL), by its content or by
 * /proc/self/maps, with what is wrong in @why; -1 if all of them do.
 */
static long window_mismatch(char *win, const unsigned long *pgoff,
			    const int *gen, char *why, size_t len)
{
	unsigned long i, off;
	char perms[5];

	for (i = 0; i < WIN_PAGES; i++) {
		if (!page_is(page_at(win, i), pgoff[i],
			     gen ? gen[pgoff[i]] : 0)) {
			snprintf(why, len, "does not show object page %lu",
				 pgoff[i]);
			return i;
		}
		if (!maps_lookup((unsigned long)page_at(win, i), &off, perms)) {
			snprintf(why, len, "is in no VMA");
			return i;
		}
		if (off != pgoff[i] || strcmp(perms, "rw-s")) {
			snprintf(why, len, "is at offset %lu, %s in maps",
				 off, perms);
			return i;
		}
	}
	return -1;
}

static void check_window(struct __test_metadata *_metadata, char *win,
			 const unsigned long *pgoff, const int *gen)
{
	char why[80];
	long i;

	i = window_mismatch(win, pgoff, gen, why, sizeof(why));
	ASSERT_EQ(i, -1) {
		TH_LOG("window page %ld %s", i, why);
	}
}

/* For a forked child: true if the window shows what check_window() wants. */
static bool window_is(char *win, const unsigned long *pgoff, const int *gen)
{
	char why[80];

	return window_mismatch(win, pgoff, gen, why, sizeof(why)) < 0;
}

/*
 * Remap window page i to object page pgoff[i], one call a page; the errno
 * of the first call that fails, or 0.
 */
static int remap_each_page(char *win, const unsigned long *pgoff,
			   unsigned long flags)
{
	unsigned long i;

	for (i = 0; i < WIN_PAGES; i++)
		if (sys_remap_file_pages(page_at(win, i), page_size, 0,
					 pgoff[i], flags))
			return errno;
	return 0;
}

static void linear(unsigned long *pgoff)
{
	unsigned long i;

	for (i = 0; i < WIN_PAGES; i++)
		pgoff[i] = i;
}

/* The layout where window page 0 shows object page @first, 1 @first - 1... */
static void reversed(unsigned long *pgoff, unsigned long first)
{
	unsigned long i;

	for (i = 0; i < WIN_PAGES; i++)
		pgoff[i] = first - i;
}

/*
 * Remap window page i to object page 15 - i and write generation @gen
 * through it, a page at a time, so that each write goes through a VMA
 * that the next remaps split or replace; record in @obj_gen what the
 * object must now hold.
 */
static bool reverse_and_write(char *win, int gen, unsigned long *pgoff,
			      int *obj_gen)
{
	unsigned long i;

	reversed(pgoff, OBJ_PAGES - 1);
	for (i = 0; i < WIN_PAGES; i++) {
		if (sys_remap_file_pages(page_at(win, i), page_size, 0,
					 pgoff[i], 0))
			return false;
		fill_page(page_at(win, i), pgoff[i], gen);
		obj_gen[pgoff[i]] = gen;
	}
	return true;
}

/* Object page i must hold generation gen[i]. */
static void check_object(struct __test_metadata *_metadata, int fd,
			 const int *gen)
{
	unsigned long i;
	char *buf;

	buf = mmap(NULL, page_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(buf != MAP_FAILED);
	for (i = 0; i < OBJ_PAGES; i++) {
		ASSERT_EQ(pread(fd, buf, page_size, i * page_size), page_size);
		EXPECT_TRUE(page_is(buf, i, gen[i])) {
			TH_LOG("object page %lu does not hold generation %d",
			       i, gen[i]);
		}
	}
	munmap(buf, page_size);
}

TEST_F(remap, data_survives_exit)
{
	int obj_gen[OBJ_PAGES] = { 0 };
	unsigned long pgoff[WIN_PAGES], i;
	pid_t pid;
	int status;
	char *win;

	if (self->fd < 0)
		SKIP(return, "a shared anonymous mapping has no file");

	/* A child writes through its own remapped window, and exits. */
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		win = mmap(NULL, WIN_PAGES * page_size, PROT_READ | PROT_WRITE,
			   MAP_SHARED, self->fd, 0);
		_exit(win == MAP_FAILED ||
		      !reverse_and_write(win, 3, pgoff, obj_gen));
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* What the child wrote, as its reverse_and_write() recorded it. */
	reversed(pgoff, OBJ_PAGES - 1);
	for (i = 0; i < WIN_PAGES; i++)
		obj_gen[pgoff[i]] = 3;
	check_object(_metadata, self->fd, obj_gen);
}

/*
 * On a disk filesystem the data reaches the disk at the remapped offsets:
 * read back with O_DIRECT, which goes to the disk, not the page cache.
 */
TEST_F(remap, data_reaches_disk)
{
	int obj_gen[OBJ_PAGES] = { 0 };
	unsigned long pgoff[WIN_PAGES];
	int fd;

	if (variant->backing != BACKING_DISK)
		SKIP(return, "only for a disk filesystem");
	ASSERT_TRUE(reverse_and_write(self->win, 4, pgoff, obj_gen));
	ASSERT_EQ(munmap(self->win, WIN_PAGES * page_size), 0);
	self->win = NULL;
	ASSERT_EQ(fsync(self->fd), 0);

	fd = open(self->path, O_RDONLY | O_DIRECT);
	if (fd < 0 && errno == EINVAL)
		SKIP(return, "this filesystem has no O_DIRECT");
	ASSERT_GE(fd, 0);
	check_object(_metadata, fd, obj_gen);
	close(fd);
}

TEST_F(remap, fork_keeps_layouts_apart)
{
	unsigned long parent[WIN_PAGES], child[WIN_PAGES];
	int to_child[2], to_parent[2], status;
	char c = 0;
	pid_t pid;

	reversed(parent, WIN_PAGES - 1);
	ASSERT_EQ(remap_each_page(self->win, parent, 0), 0);
	linear(child);
	ASSERT_EQ(pipe(to_child), 0);
	ASSERT_EQ(pipe(to_parent), 0);

	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		/* The child starts with the parent's layout... */
		if (!window_is(self->win, parent, NULL))
			_exit(1);
		/* ...and its own remap changes only its own. */
		if (sys_remap_file_pages(self->win, WIN_PAGES * page_size, 0,
					 0, 0) ||
		    !window_is(self->win, child, NULL))
			_exit(2);
		if (write(to_parent[1], &c, 1) != 1 ||
		    read(to_child[0], &c, 1) != 1)
			_exit(3);
		/* The parent has remapped its page 0 meanwhile. */
		_exit(window_is(self->win, child, NULL) ? 0 : 4);
	}

	ASSERT_EQ(read(to_parent[0], &c, 1), 1);
	check_window(_metadata, self->win, parent, NULL);
	parent[0] = 9;
	ASSERT_EQ(sys_remap_file_pages(self->win, page_size, 0, 9, 0), 0);
	ASSERT_EQ(write(to_child[1], &c, 1), 1);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(WEXITSTATUS(status), 0);
	check_window(_metadata, self->win, parent, NULL);
}

static sigjmp_buf sigbus_jmp;

static void sigbus_handler(int sig __attribute__((unused)))
{
	siglongjmp(sigbus_jmp, 1);
}

/* Read a byte at @p; false if that raised SIGBUS. */
static bool read_ok(char *p)
{
	struct sigaction sa = { .sa_handler = sigbus_handler }, old;
	bool ok = true;

	sigaction(SIGBUS, &sa, &old);
	if (sigsetjmp(sigbus_jmp, 1))
		ok = false;
	else
		(void)__atomic_load_n(p, __ATOMIC_RELAXED);
	sigaction(SIGBUS, &old, NULL);
	return ok;
}

TEST_F(remap, truncate_raises_sigbus)
{
	unsigned long i;

	if (self->fd < 0)
		SKIP(return, "a shared anonymous mapping has no file");

	/* Page 0 shows object page 12, page 1 object page 2. */
	ASSERT_EQ(sys_remap_file_pages(self->win, page_size, 0, 12,
				       MAP_NONBLOCK), 0);
	ASSERT_EQ(sys_remap_file_pages(page_at(self->win, 1), page_size, 0, 2,
				       0), 0);
	ASSERT_TRUE(page_is(self->win, 12, 0));

	ASSERT_EQ(ftruncate(self->fd, WIN_PAGES * page_size), 0);
	EXPECT_FALSE(read_ok(self->win));
	ASSERT_TRUE(page_is(page_at(self->win, 1), 2, 0));
	for (i = 2; i < WIN_PAGES; i++)
		ASSERT_TRUE(page_is(page_at(self->win, i), i, 0));
}

/*
 * The value of @sym in this kernel's config (/boot/config-$(uname -r)):
 * 'y', 'm', 'n' ("is not set"), '?' (not in the file), or 0 when there is
 * no config to read.
 */
static char kernel_config(const char *sym)
{
	char path[128], line[256];
	size_t len = strlen(sym);
	struct utsname u;
	char val = '?';
	FILE *f;

	if (uname(&u))
		return 0;
	snprintf(path, sizeof(path), "/boot/config-%s", u.release);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, sym, len) && line[len] == '=') {
			val = line[len + 1];
			break;
		}
		if (!strncmp(line, "# ", 2) && !strncmp(line + 2, sym, len) &&
		    !strcmp(line + 2 + len, " is not set\n")) {
			val = 'n';
			break;
		}
	}
	fclose(f);
	return val;
}

/* A memfd of @pages pages, page i filled for object page i, mapped. */
static char *map_memfd(int pages, int *fdp)
{
	char *win;
	int fd, i;

	fd = memfd_create("remap_file_pages", 0);
	if (fd < 0 || ftruncate(fd, pages * page_size))
		return MAP_FAILED;
	win = mmap(NULL, pages * page_size, PROT_READ | PROT_WRITE,
		   MAP_SHARED, fd, 0);
	if (win == MAP_FAILED)
		return MAP_FAILED;
	for (i = 0; i < pages; i++)
		fill_page(page_at(win, i), i, 0);
	*fdp = fd;
	return win;
}

/* Beyond this, making the VMAs would take the test too long. */
#define MAP_COUNT_FILL_MAX	262144

/*
 * A remap that would take the process past vm.max_map_count fails with
 * -ENOMEM and changes nothing.  The limit is the machine's, and the test
 * leaves it alone: it takes its own process up to it instead, with a
 * PROT_NONE reservation split into a VMA a page by mprotect().
 */
TEST(map_count_enomem)
{
	long max = read_sysctl(MAX_MAP_COUNT), calls, i, j;
	unsigned long pgoff[WIN_PAGES], len;
	char *win, *res;
	long ret = 0;
	int fd, err = 0;

	page_size = sysconf(_SC_PAGESIZE);
	if (max < 0)
		SKIP(return, "cannot read %s", MAX_MAP_COUNT);
	if (max > MAP_COUNT_FILL_MAX)
		SKIP(return, "vm.max_map_count is %ld: too many VMAs to make",
		     max);
	/* It checks the whole tree at each split: hours, not seconds. */
	if (kernel_config("CONFIG_DEBUG_VM_MAPLE_TREE") == 'y')
		SKIP(return, "CONFIG_DEBUG_VM_MAPLE_TREE: too slow to make %ld VMAs",
		     max);
	win = map_memfd(OBJ_PAGES, &fd);
	ASSERT_TRUE(win != MAP_FAILED);
	if (sys_remap_file_pages(win, page_size, 0, 0, 0))
		SKIP(return, "remap_file_pages() refused: %s", strerror(errno));

	/* The reservation is one VMA, and each call makes two more. */
	calls = (max - 2 - maps_count(0, -1UL)) / 2;
	ASSERT_GE(calls, 0);
	len = (2 * calls + 1) * page_size;
	res = mmap(NULL, len, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_TRUE(res != MAP_FAILED);
	for (i = 0; i < calls; i++)
		ASSERT_EQ(mprotect(page_at(res, 2 * i + 1), page_size,
				   PROT_READ), 0);

	/* One or two VMAs left: remapping every other page soon fails. */
	linear(pgoff);
	for (i = 1; i < WIN_PAGES; i += 2) {
		ret = sys_remap_file_pages(page_at(win, i), page_size, 0,
					   WIN_PAGES + i, 0);
		if (ret) {
			err = errno;
			break;
		}
		pgoff[i] = WIN_PAGES + i;
	}
	ASSERT_EQ(ret, -1);
	ASSERT_EQ(err, ENOMEM);
	/* As mmap(MAP_FIXED) of that page fails. */
	EXPECT_TRUE(mmap(page_at(win, i), page_size, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, fd,
			 (WIN_PAGES + i) * page_size) == MAP_FAILED);
	EXPECT_EQ(errno, ENOMEM);
	/* Every page as before (its /proc/self/maps is long: read later). */
	for (j = 0; j < WIN_PAGES; j++)
		ASSERT_TRUE(page_is(page_at(win, j), pgoff[j], 0));

	/* With room again, the same call succeeds. */
	ASSERT_EQ(munmap(res, len), 0);
	check_window(_metadata, win, pgoff, NULL);
	ASSERT_EQ(sys_remap_file_pages(page_at(win, i), page_size, 0,
				       WIN_PAGES + i, 0), 0);
	pgoff[i] = WIN_PAGES + i;
	check_window(_metadata, win, pgoff, NULL);
	munmap(win, OBJ_PAGES * page_size);
	close(fd);
}

static void perms_at(void *addr, char perms[5])
{
	unsigned long off;

	if (!maps_lookup((unsigned long)addr, &off, perms))
		snprintf(perms, 5, "none");
}

/*
 * Under READ_IMPLIES_EXEC the emulation maps with the protections that a
 * new mmap() of the same file would get, and it does not get them past
 * the checks mmap() makes: the LSM hook sees them (CVE-2024-47745), and a
 * noexec mount never gives PROT_EXEC.
 */
TEST_F(remap, read_implies_exec_like_mmap)
{
	char mmap_perms[5], remap_perms[5];
	char *fresh;
	int old;

	old = personality(0xffffffff);
	ASSERT_NE(personality(old | READ_IMPLIES_EXEC), -1);
	fresh = mmap(NULL, page_size, PROT_READ | PROT_WRITE, MAP_SHARED |
		     (self->fd < 0 ? MAP_ANONYMOUS : 0), self->fd, 0);
	ASSERT_EQ(sys_remap_file_pages(page_at(self->win, 3), page_size, 0,
				       11, 0), 0);
	personality(old);
	ASSERT_TRUE(fresh != MAP_FAILED);
	perms_at(fresh, mmap_perms);
	perms_at(page_at(self->win, 3), remap_perms);
	munmap(fresh, page_size);
	EXPECT_EQ(strcmp(remap_perms, mmap_perms), 0) {
		TH_LOG("under READ_IMPLIES_EXEC: mmap gives %s, a remap %s",
		       mmap_perms, remap_perms);
	}
	ASSERT_TRUE(page_is(page_at(self->win, 3), 11, 0));
}

/* The reporting, as the sysctl's current value makes it. */
#define SYSCTL_RFP	"/proc/sys/vm/remap_file_pages"

#define WARN_TEXT	") uses deprecated remap_file_pages() syscall"
#define REFUSED_TEXT	") was refused remap_file_pages()"

/*
 * How many records that /dev/kmsg (@fd) gives from where it is now say
 * "@comm (pid)@text".
 */
static int kmsg_lines(int fd, const char *comm, const char *text)
{
	size_t clen = strlen(comm);
	char rec[8192], *p, *q;
	ssize_t len;
	int n = 0;

	for (;;) {
		len = read(fd, rec, sizeof(rec) - 1);
		if (len < 0 && errno == EPIPE)	/* overwritten: go on */
			continue;
		if (len <= 0)
			break;
		rec[len] = '\0';
		for (p = strstr(rec, comm); p; p = strstr(p + 1, comm)) {
			if (p[-1] != ';' && p[-1] != ' ')
				continue;
			if (strncmp(p + clen, " (", 2))
				continue;
			q = p + clen + 2;
			while (*q >= '0' && *q <= '9')
				q++;
			if (!strncmp(q, text, strlen(text)))
				n++;
		}
	}
	return n;
}

/*
 * A process is named in the log at most once, however often it calls,
 * and so is a refused one, and its child at most once more.  Whether a
 * line comes at all depends on the log's rate limit, which other
 * processes share: the tracepoint is what records every call, and this
 * case checks only the "at most".
 */
TEST(named_at_most_once)
{
	long knob = read_sysctl(SYSCTL_RFP);
	const char *text = knob == 0 ? REFUSED_TEXT : WARN_TEXT;
	int fd, kmsg, i, status;
	char comm[16], *win;
	pid_t pid;

	page_size = sysconf(_SC_PAGESIZE);
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (kmsg < 0)
		SKIP(return, "cannot read /dev/kmsg: %s", strerror(errno));
	ASSERT_EQ(lseek(kmsg, 0, SEEK_END), 0);
	win = map_memfd(2, &fd);
	ASSERT_TRUE(win != MAP_FAILED);

	snprintf(comm, sizeof(comm), "rfp_named_%u",
		 (unsigned int)getpid() % 100000);
	ASSERT_EQ(prctl(PR_SET_NAME, comm), 0);
	for (i = 0; i < 20; i++) {
		if (i == 10) {
			pid = fork();
			ASSERT_GE(pid, 0);
			if (pid == 0) {
				for (; i < 20; i++)
					sys_remap_file_pages(win, page_size, 0,
							     i & 1, 0);
				_exit(0);
			}
			ASSERT_EQ(waitpid(pid, &status, 0), pid);
		}
		sys_remap_file_pages(win, page_size, 0, i & 1, 0);
	}
	/* The parent's ten calls and the child's: a line each at most. */
	EXPECT_LE(kmsg_lines(kmsg, comm, text), 2);
	close(kmsg);
	munmap(win, 2 * page_size);
	close(fd);
}

#define TRACE_ENV	"REMAP_FILE_PAGES_TRACE"

/* The mmap:remap_file_pages event's TP_printk(), for sscanf(). */
#define TRACE_RECORD_FORMAT \
	"remap_file_pages: start=%lx size=%lx prot=%lx pgoff=%lx flags=%lx dev=%u:%u ino=%llu ret=%ld"

struct trace_record {
	unsigned long start, size, prot, pgoff, flags;
	unsigned int major, minor;
	unsigned long long ino;
	long ret;
};

/* The mmap:remap_file_pages records in the trace of @instance. */
static int read_trace_records(const char *instance, struct trace_record *rec,
			      int max)
{
	char line[512], path[256], *p;
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/trace", instance);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (n < max && fgets(line, sizeof(line), f)) {
		p = strstr(line, "remap_file_pages: ");
		if (p && sscanf(p, TRACE_RECORD_FORMAT, &rec[n].start,
				&rec[n].size, &rec[n].prot, &rec[n].pgoff,
				&rec[n].flags, &rec[n].major, &rec[n].minor,
				&rec[n].ino, &rec[n].ret) == 9)
			n++;
	}
	fclose(f);
	return n;
}

/* Write @val into @file of the trace instance @instance, truncated. */
static int write_trace_file(const char *instance, const char *file,
			    const char *val)
{
	char path[256];
	int fd, ret;

	snprintf(path, sizeof(path), "%s/%s", instance, file);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	ret = write(fd, val, strlen(val)) == (ssize_t)strlen(val) ? 0 : -errno;
	close(fd);
	return ret;
}

#define EVENT_DIR	"events/mmap/remap_file_pages/"

/*
 * The event records every call, in the trace instance that
 * the harness makes for the test: the arguments, the file's
 * device and inode once the call has found it (0:0 and 0 when it failed
 * before), and what the call returned.
 */
TEST(tracepoint_records_every_call)
{
	const char *instance = getenv(TRACE_ENV);
	long knob = read_sysctl(SYSCTL_RFP);
	struct trace_record rec[4];
	long ok = knob ? 0 : -no_syscall_errno();
	char filter[64], *win;
	struct stat st;
	int fd, n;

	page_size = sysconf(_SC_PAGESIZE);
	if (!instance)
		SKIP(return, "no trace instance in $%s", TRACE_ENV);
	/* It truncates the trace: never the top-level buffer. */
	ASSERT_TRUE(strstr(instance, "/instances/") != NULL);
	if (knob < 0)
		SKIP(return, "no vm.remap_file_pages sysctl");
	win = map_memfd(4, &fd);
	ASSERT_TRUE(win != MAP_FAILED);
	ASSERT_EQ(fstat(fd, &st), 0);
	snprintf(filter, sizeof(filter), "common_pid == %d\n", getpid());
	ASSERT_EQ(write_trace_file(instance, "trace", ""), 0);
	ASSERT_EQ(write_trace_file(instance, EVENT_DIR "filter", filter), 0);
	ASSERT_EQ(write_trace_file(instance, EVENT_DIR "enable", "1\n"), 0);
	EXPECT_EQ(sys_remap_file_pages(page_at(win, 1), page_size, 0, 2,
				       MAP_NONBLOCK), ok ? -1 : 0);
	EXPECT_EQ(sys_remap_file_pages(page_at(win, 1), page_size, PROT_READ,
				       3, 0), -1);
	ASSERT_EQ(write_trace_file(instance, EVENT_DIR "enable", "0\n"), 0);

	n = read_trace_records(instance, rec, ARRAY_SIZE(rec));
	ASSERT_EQ(n, 2);
	for (n = 0; n < 2; n++) {
		EXPECT_EQ(rec[n].start, (unsigned long)page_at(win, 1));
		EXPECT_EQ(rec[n].size, page_size);
		EXPECT_EQ(rec[n].pgoff, 2 + n);
	}
	EXPECT_EQ(rec[0].prot, 0);
	EXPECT_EQ(rec[0].flags, MAP_NONBLOCK);
	EXPECT_EQ(rec[0].ret, ok);
	EXPECT_EQ(rec[0].major, ok ? 0 : major(st.st_dev));
	EXPECT_EQ(rec[0].minor, ok ? 0 : minor(st.st_dev));
	EXPECT_EQ(rec[0].ino, ok ? 0 : st.st_ino);
	EXPECT_EQ(rec[1].prot, PROT_READ);
	EXPECT_EQ(rec[1].ret, knob ? -EINVAL : ok);
	EXPECT_EQ(rec[1].ino, 0);
	munmap(win, 4 * page_size);
	close(fd);
}

/*
 * The fields of /proc/self/maps after the offset (perms, device, inode,
 * name) of the VMA at @addr: a remapped page and a page mmap()ed from the
 * same file must show the same.
 */
static bool maps_tail(void *addr, char *buf, size_t len)
{
	char line[512], perms[5], dev[16];
	unsigned long long off, ino;
	unsigned long start, end;
	int name = 0;

	if (!vma_entry("/proc/self/maps", (unsigned long)addr, NULL, line,
		       sizeof(line)) ||
	    sscanf(line, "%lx-%lx %4s %llx %15s %llu %n", &start, &end, perms,
		   &off, dev, &ino, &name) < 6)
		return false;
	line[strcspn(line, "\n")] = '\0';
	snprintf(buf, len, "%s %s %llu %s", perms, dev, ino,
		 name ? line + name : "");
	return true;
}

/* A file unlinked while mapped: "(deleted)" in both names. */
TEST_F(remap, unlinked_file_named_like_mmap)
{
	char by_remap[400], by_mmap[400];

	if (self->fd < 0)
		SKIP(return, "a shared anonymous mapping has no file");

	if (self->path[0]) {
		ASSERT_EQ(unlink(self->path), 0);
		self->path[0] = '\0';
	}
	ASSERT_EQ(sys_remap_file_pages(page_at(self->win, 3), page_size, 0,
				       11, 0), 0);
	ASSERT_TRUE(mmap(page_at(self->win, 5), page_size,
			 PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
			 self->fd, 12 * page_size) == page_at(self->win, 5));
	ASSERT_TRUE(maps_tail(page_at(self->win, 3), by_remap,
			      sizeof(by_remap)));
	ASSERT_TRUE(maps_tail(page_at(self->win, 5), by_mmap,
			      sizeof(by_mmap)));
	EXPECT_STREQ(by_remap, by_mmap);
	EXPECT_TRUE(page_is(page_at(self->win, 3), 11, 0));
	EXPECT_TRUE(page_is(page_at(self->win, 5), 12, 0));
}

/*
 * On a noexec mount READ_IMPLIES_EXEC gives mmap() no PROT_EXEC, nor a
 * remap.  The tmpfs is mounted in a mount namespace of the test's own, so
 * that nothing outside it sees the mount, and it goes with the test.
 */
TEST(read_implies_exec_noexec_mount_like_mmap)
{
	char mmap_perms[5], remap_perms[5], path[64];
	char *win, *fresh;
	int fd, old;

	page_size = sysconf(_SC_PAGESIZE);
	if (remap_is_off())
		SKIP(return, "remap_file_pages() is off: ENOSYS");
	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("rfp-checks", "/tmp", "tmpfs", MS_NOEXEC, NULL))
		SKIP(return, "cannot mount a noexec tmpfs of its own: %s",
		     strerror(errno));
	snprintf(path, sizeof(path), "/tmp/noexec");
	fd = open(path, O_RDWR | O_CREAT, 0600);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(ftruncate(fd, OBJ_PAGES * page_size), 0);
	win = mmap(NULL, WIN_PAGES * page_size, PROT_READ | PROT_WRITE,
		   MAP_SHARED, fd, 0);
	ASSERT_TRUE(win != MAP_FAILED);

	old = personality(0xffffffff);
	ASSERT_NE(personality(old | READ_IMPLIES_EXEC), -1);
	fresh = mmap(NULL, page_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		     0);
	ASSERT_EQ(sys_remap_file_pages(page_at(win, 3), page_size, 0, 11, 0),
		  0);
	personality(old);
	ASSERT_TRUE(fresh != MAP_FAILED);
	perms_at(fresh, mmap_perms);
	perms_at(page_at(win, 3), remap_perms);
	EXPECT_STREQ(remap_perms, mmap_perms);
	EXPECT_STREQ(remap_perms, "rw-s");
}

static int utimes_atime(int fd, time_t atime)
{
	struct timespec ts[2] = {
		{ .tv_sec = atime }, { .tv_nsec = UTIME_OMIT },
	};

	return futimens(fd, ts);
}

static time_t atime_of(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? -1 : st.st_atime;
}

/* A remap touches the file's access time as mmap() of it does. */
TEST_F(remap, access_time_like_mmap)
{
	time_t by_remap, by_mmap;

	if (self->fd < 0)
		SKIP(return, "a shared anonymous mapping has no file");

	ASSERT_EQ(utimes_atime(self->fd, 1), 0);
	ASSERT_EQ(sys_remap_file_pages(page_at(self->win, 3), page_size, 0,
				       11, 0), 0);
	by_remap = atime_of(self->fd);
	ASSERT_EQ(utimes_atime(self->fd, 1), 0);
	ASSERT_TRUE(mmap(page_at(self->win, 5), page_size,
			 PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
			 self->fd, 12 * page_size) == page_at(self->win, 5));
	by_mmap = atime_of(self->fd);
	EXPECT_EQ(by_remap > 1, by_mmap > 1) {
		TH_LOG("atime from 1: %ld after a remap, %ld after mmap()",
		       (long)by_remap, (long)by_mmap);
	}
}

#ifndef MPOL_DEFAULT
#define MPOL_DEFAULT	0
#define MPOL_PREFERRED	1
#define MPOL_F_ADDR	(1 << 1)
#endif

/* The policy at @addr; -errno if get_mempolicy() fails. */
static int policy_at(void *addr)
{
	int mode;

	if (syscall(SYS_get_mempolicy, &mode, NULL, 0, addr, MPOL_F_ADDR))
		return -errno;
	return mode;
}

/* A page mbind()ed, then remapped, has the policy mmap() would give it. */
TEST_F(remap, memory_policy_like_mmap)
{
	unsigned long node0 = 1;
	char *p3 = page_at(self->win, 3), *p5 = page_at(self->win, 5);

	if (syscall(SYS_mbind, p3, 3 * page_size, MPOL_PREFERRED, &node0,
		    sizeof(node0) * 8, 0))
		SKIP(return, "mbind() failed: %s (CONFIG_NUMA?)",
		     strerror(errno));
	ASSERT_EQ(policy_at(p3), MPOL_PREFERRED);
	ASSERT_EQ(sys_remap_file_pages(p3, page_size, 0, 11, 0), 0);
	if (self->fd >= 0) {
		ASSERT_TRUE(mmap(p5, page_size, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_FIXED, self->fd,
				 12 * page_size) == p5);
	} else {
		ASSERT_TRUE(mmap(p5, page_size, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_FIXED | MAP_ANONYMOUS, -1,
				 0) == p5);
	}
	EXPECT_EQ(policy_at(p3), policy_at(p5));
	EXPECT_EQ(policy_at(page_at(self->win, 4)), MPOL_PREFERRED);
}

/* The address space this process has, in pages (VmSize). */
static unsigned long vm_pages(void)
{
	unsigned long kb = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSize: %lu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb * 1024 / page_size;
}

/*
 * With RLIMIT_AS at what the process has, a call that replaces pages
 * without growing the address space succeeds as mmap(MAP_FIXED) does;
 * below it, both fail.  Nothing between the reading of the size and the
 * calls maps memory.
 */
TEST_F(remap, rlimit_as_at_usage_like_mmap)
{
	struct rlimit rl = { 0 };
	int below, fd = self->fd;
	void *p;

	for (below = 0; below <= 1; below++) {
		rl.rlim_cur = rl.rlim_max = (vm_pages() - below) * page_size;
		ASSERT_EQ(setrlimit(RLIMIT_AS, &rl), 0);
		EXPECT_EQ(sys_remap_file_pages(page_at(self->win, 3),
					       page_size, 0, 11, 0),
			  below ? -1 : 0);
		p = mmap(page_at(self->win, 5), page_size,
			 PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED |
			 (fd < 0 ? MAP_ANONYMOUS : 0), fd,
			 fd < 0 ? 0 : 12 * page_size);
		EXPECT_TRUE(below ? p == MAP_FAILED : p == page_at(self->win, 5));
		/* Growing fails either way. */
		EXPECT_TRUE(mmap(NULL, 2 * page_size, PROT_READ,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) ==
			    MAP_FAILED);
	}
}

#define THP_SHMEM	"/sys/kernel/mm/transparent_hugepage/shmem_enabled"
#define PMD_SIZE_	(2UL << 20)

/* FilePmdMapped + ShmemPmdMapped of every VMA in [@addr, @addr + @len). */
static long pmd_mapped_kb(char *addr, unsigned long len)
{
	unsigned long start, end, kb, sum = 0;
	char line[512];
	bool in = false;
	FILE *f;

	f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2)
			in = start < (unsigned long)addr + len &&
			     end > (unsigned long)addr;
		else if (in && (sscanf(line, "FilePmdMapped: %lu", &kb) == 1 ||
				sscanf(line, "ShmemPmdMapped: %lu", &kb) == 1))
			sum += kb;
	}
	fclose(f);
	return sum;
}

/* Two huge pages' worth of the memfd @fd, mapped PMD-aligned. */
static char *map_aligned(int fd, unsigned long len)
{
	char *res, *p;

	res = mmap(NULL, len + PMD_SIZE_, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED)
		return res;
	p = (char *)(((unsigned long)res + PMD_SIZE_ - 1) & ~(PMD_SIZE_ - 1));
	return mmap(p, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		    fd, 0);
}

/*
 * A page of a PMD-mapped shmem THP remapped to an offset that is not the
 * huge page's splits the PMD mapping exactly as mmap(MAP_FIXED) of that
 * page does: two windows on the same memfd, so that both see the same
 * folios, one changed by each.
 */
TEST(thp_pmd_split_like_mmap)
{
	unsigned long len = 2 * PMD_SIZE_, npages, i;
	char *a, *b, *mode;
	char buf[128] = "";
	int fd, sysfs;

	page_size = sysconf(_SC_PAGESIZE);
	npages = len / page_size;
	if (remap_is_off())
		SKIP(return, "remap_file_pages() is off: ENOSYS");
	sysfs = open(THP_SHMEM, O_RDONLY);
	if (sysfs >= 0) {
		if (read(sysfs, buf, sizeof(buf) - 1) < 0)
			buf[0] = '\0';
		close(sysfs);
	}
	mode = strchr(buf, '[');
	if (!mode || !strncmp(mode, "[never]", 7) || !strncmp(mode, "[deny]", 6))
		SKIP(return, "no shmem THP (%s: %s)", THP_SHMEM,
		     mode ? mode : "absent");
	fd = memfd_create("rfp-checks-thp", 0);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(ftruncate(fd, len), 0);
	a = map_aligned(fd, len);
	b = map_aligned(fd, len);
	ASSERT_TRUE(a != MAP_FAILED && b != MAP_FAILED);
	madvise(a, len, MADV_HUGEPAGE);
	madvise(b, len, MADV_HUGEPAGE);
	for (i = 0; i < npages; i++)
		fill_page(page_at(a, i), i, 0);
	for (i = 0; i < npages; i++)
		ASSERT_TRUE(page_is(page_at(b, i), i, 0));
	if (pmd_mapped_kb(a, len) < (long)(PMD_SIZE_ >> 10))
		SKIP(return, "the memfd got no PMD-mapped huge page");
	ASSERT_EQ(pmd_mapped_kb(a, len), pmd_mapped_kb(b, len));

	ASSERT_EQ(sys_remap_file_pages(page_at(a, 1), page_size, 0,
				       npages - 3, 0), 0);
	ASSERT_TRUE(mmap(page_at(b, 1), page_size, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd,
			 (npages - 3) * page_size) == page_at(b, 1));
	for (i = 0; i < npages; i++) {
		unsigned long pgoff = i == 1 ? npages - 3 : i;

		ASSERT_TRUE(page_is(page_at(a, i), pgoff, 0));
		ASSERT_TRUE(page_is(page_at(b, i), pgoff, 0));
	}
	EXPECT_EQ(pmd_mapped_kb(a, len), pmd_mapped_kb(b, len));
	EXPECT_LT(pmd_mapped_kb(a, len), (long)(len >> 10));
	EXPECT_EQ(maps_count((unsigned long)a, len),
		  maps_count((unsigned long)b, len));
}

TEST_HARNESS_MAIN
