/* SPDX-License-Identifier: GPL-2.0 */
/*
 * librfp-compat.so's parts, in a line from the bottom up: each file uses
 * only the files listed before it, and offers what it declares below to
 * the files after it.
 *
 *   shim-sys.c    the raw system calls (glibc's syscall(), past the
 *                 shim's), the page size
 *   shim-util.c   messages, numbers, a line reader, the calling process,
 *                 whether the fork() handler is wanted
 *   shim-fds.c    the shim's descriptor numbers, out of the program's
 *                 way; POSIX locks held on a file
 *   shim-lock.c   the locked ranges, from the mlock() family
 *   shim-vma.c    the VMAs over a range, from /proc/self/{maps,smaps}
 *   shim-files.c  the file behind a VMA, the descriptors the shim keeps,
 *                 the fork() handler
 *   shim-map.c    the emulation, and the mmap()/munmap() family
 *   shim-trap.c   the seccomp filter, SIGSYS, the signal functions and
 *                 the constructor
 *
 * Nothing here needs a constructor to have run: a library whose
 * constructor runs before the shim's may call any interposed function.
 * Nothing the SIGSYS handler reaches takes a lock or allocates.
 */
#ifndef RFP_SHIM_H
#define RFP_SHIM_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 0x0001U
#endif
#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif

/*
 * libc's own function NAME, the next after the shim's (dlfcn.h): glibc's
 * close() is a cancellation point, its set*id() change every thread's
 * credentials, its signal() knows siginterrupt().
 */
#define REAL(name) ({						\
	static __typeof__(name) *_fn;				\
	if (!_fn)						\
		_fn = dlsym(RTLD_NEXT, #name);			\
	_fn;							\
})

/* shim-sys.c */
void syscall_lookup(void);
void sys_args(long a[6], va_list ap);
long sys6(long nr, const long a[6]);
long sys(long nr, ...);
void *sys_mmap(unsigned long addr, unsigned long len, int prot, int flags,
	       int fd, unsigned long pgoff);
long sys_close(int fd);
unsigned long shim_page_size(void);

/* shim-util.c */
void say(const char *first, ...);
const char *ul(char *buf, unsigned long v, int base);	/* BUF: 24 bytes */
char *join(char *buf, size_t size, ...);
pid_t self_pid(void);
pid_t call_begin(void);
void call_end(pid_t outer);
void call_after_fork(void);
void fork_handler_wanted(void);
bool fork_handler_due(void);

struct reader {
	int fd;
	char buf[4096];
	size_t len, pos;
};

char *next_line(struct reader *r);
unsigned long parse_hex(const char **p);
unsigned long parse_dec(const char **p);
void skip_spaces(const char **p);

/* shim-fds.c */
int fd_limit(void);
bool holds_posix_lock(dev_t dev, ino_t ino);
int shim_fd(int fd, bool fresh, bool *low);

/* shim-lock.c */
void locked_remove(unsigned long addr, unsigned long len);
void locked_mapped(unsigned long addr, unsigned long len, bool locked);
bool locked_at(unsigned long addr);
int locked_state(unsigned long start, unsigned long end);
void locks_after_fork(void);

/* shim-vma.c */
struct vma {
	unsigned long start, end;
	char perms[5];
	unsigned int major, minor;
	unsigned long ino;
	char path[256];
	char flags[160];	/* VmFlags */
};

int lookup(unsigned long start, unsigned long end, struct vma *v, bool *locked);
int query_vma(unsigned long addr, struct vma *v, bool name);
bool file_mapped_in(dev_t dev, ino_t ino, unsigned long lo, unsigned long hi);
int maps_hold(void);
void maps_release(void);
void maps_after_fork(void);
int maps_fd_now(void);
void maps_forget(unsigned int first, unsigned int last);

/* shim-files.c */
int kept_file(const struct vma *v);
int find_file(struct vma *v, bool *once);
void done_once(int fd, unsigned long addr, unsigned long len);
bool room_for_memfd(void);
void files_after_fork(void);
int keep_mapped(int fd, unsigned long addr, unsigned long len);
bool keep_memfd(int fd, unsigned long addr, unsigned long len);
void drop_unmapped(unsigned long addr, unsigned long len, int mapped);
void moved(unsigned long old, unsigned long old_len, unsigned long new,
	   unsigned long new_len);
void fork_handler_now(void);

/* shim-map.c */
extern bool always, quiet;	/* the knobs, set by the constructor */
long rfp_call(unsigned long start, unsigned long size, unsigned long prot,
	      unsigned long pgoff, unsigned long flags);

#endif
