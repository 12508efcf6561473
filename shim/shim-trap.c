// SPDX-License-Identifier: GPL-2.0
/*
 * librfp-compat.so: the calls that go through neither glibc's wrapper nor
 * its syscall() (shim-map.c).
 *
 * A seccomp filter traps remap_file_pages alone (SECCOMP_RET_TRAP, with
 * RFP_TRAP_DATA as its data) into a SIGSYS handler, which answers in the
 * interrupted syscall's return register.  The shim's own call carries a
 * marker in the unused sixth argument, which the filter lets through.
 *
 * SIGSYS belongs to the shim.  The program's handler for it is kept aside
 * and called for every SIGSYS that is not the shim's filter's: the data
 * of a trap tells the filters apart, because the kernel delivers the data
 * of the newest filter among those that trap, so a filter the program
 * installs itself is heard first, for the shim's own call too.  SIGSYS is
 * never blocked, because a blocked SIGSYS from seccomp kills the process:
 * the constructor unblocks it (a posix_spawn()ed program may start with
 * every signal blocked), and every function that blocks signals or sets
 * a disposition leaves it alone.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include "shim.h"

/* Programs still call sigset(), sighold() and the like: so does the shim. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1
#endif

/* Per architecture: the audit arch, and the trapped call's registers. */
#if defined(__x86_64__)
#define RFP_AUDIT_ARCH	AUDIT_ARCH_X86_64
#define UC_ARG(uc, n)	((unsigned long)(uc)->uc_mcontext.gregs[(int[]){ \
		REG_RDI, REG_RSI, REG_RDX, REG_R10, REG_R8 }[n]])
#define UC_RET(uc)	((uc)->uc_mcontext.gregs[REG_RAX])
#elif defined(__i386__)
#define RFP_AUDIT_ARCH	AUDIT_ARCH_I386
#define UC_ARG(uc, n)	((unsigned long)(uc)->uc_mcontext.gregs[(int[]){ \
		REG_EBX, REG_ECX, REG_EDX, REG_ESI, REG_EDI }[n]])
#define UC_RET(uc)	((uc)->uc_mcontext.gregs[REG_EAX])
#elif defined(__aarch64__)
#define RFP_AUDIT_ARCH	AUDIT_ARCH_AARCH64
#define UC_ARG(uc, n)	((unsigned long)(uc)->uc_mcontext.regs[n])
#define UC_RET(uc)	((uc)->uc_mcontext.regs[0])
#elif defined(__arm__) && defined(__ARM_EABI__)
#define RFP_AUDIT_ARCH	AUDIT_ARCH_ARM
/* arm_r0 to arm_r10 follow one another in struct sigcontext. */
#define UC_ARG(uc, n)	((&(uc)->uc_mcontext.arm_r0)[n])
#define UC_RET(uc)	((uc)->uc_mcontext.arm_r0)
#else
#error "rfp-compat: add the audit arch and the syscall registers of this architecture"
#endif

/* The marker the shim's own call carries (shim-map.c), as the filter reads it. */
#define RFP_MARKER_HALF	0x52667043U
/* The data of the shim's trap, "Rf": si_errno of its SIGSYS. */
#define RFP_TRAP_DATA	0x5266

/* What the program set for SIGSYS, while the shim's handler is in. */
static struct sigaction program_sigsys;
static _Atomic bool own_sigsys;

/*
 * libc's own signal functions, looked up by the constructor (the SIGSYS
 * handler calls them, and dlsym() is not async-signal-safe), or at first
 * use by a constructor that runs before the shim's.
 */
static int (*libc_sigaction)(int, const struct sigaction *, struct sigaction *);
static int (*libc_sigprocmask)(int, const sigset_t *, sigset_t *);
static int (*libc_pthread_sigmask)(int, const sigset_t *, sigset_t *);

static bool signal_lookup(void)
{
	if (!libc_sigaction)
		libc_sigaction = dlsym(RTLD_NEXT, "sigaction");
	if (!libc_sigprocmask)
		libc_sigprocmask = dlsym(RTLD_NEXT, "sigprocmask");
	if (!libc_pthread_sigmask)
		libc_pthread_sigmask = dlsym(RTLD_NEXT, "pthread_sigmask");
	return libc_sigaction && libc_sigprocmask && libc_pthread_sigmask;
}

static int real_sigaction(int sig, const struct sigaction *act,
			  struct sigaction *old)
{
	if (!libc_sigaction)
		signal_lookup();
	return libc_sigaction(sig, act, old);
}

static int real_sigmask(bool thread, int how, const sigset_t *set,
			sigset_t *old)
{
	if (!libc_sigprocmask || !libc_pthread_sigmask)
		signal_lookup();
	return (thread ? libc_pthread_sigmask : libc_sigprocmask)(how, set, old);
}

/*
 * A SIGSYS that is not the shim's: the program's handler runs as the
 * kernel would run it, with its sa_mask blocked (but SIGSYS), and reset
 * first if SA_RESETHAND.
 */
static void chain_sigsys(int sig, siginfo_t *info, void *uc)
{
	struct sigaction sa = program_sigsys;
	sigset_t old;

	if (sa.sa_handler != SIG_IGN && sa.sa_handler != SIG_DFL) {
		if (sa.sa_flags & SA_RESETHAND)
			program_sigsys.sa_handler = SIG_DFL;
		sigdelset(&sa.sa_mask, SIGSYS);
		real_sigmask(true, SIG_BLOCK, &sa.sa_mask, &old);
		if (sa.sa_flags & SA_SIGINFO)
			sa.sa_sigaction(sig, info, uc);
		else
			sa.sa_handler(sig);
		real_sigmask(true, SIG_SETMASK, &old, NULL);
	} else if (sa.sa_handler == SIG_IGN) {
		return;
	} else {
		/* The default action: die of it, as without the shim. */
		sa.sa_flags = 0;
		sigemptyset(&sa.sa_mask);
		real_sigaction(SIGSYS, &sa, NULL);
		raise(SIGSYS);
	}
}

static void on_sigsys(int sig, siginfo_t *info, void *ctx)
{
	ucontext_t *uc = ctx;
	int saved = errno;

	if (info->si_code != SYS_SECCOMP || info->si_errno != RFP_TRAP_DATA ||
	    info->si_syscall != SYS_remap_file_pages ||
	    info->si_arch != RFP_AUDIT_ARCH) {
		chain_sigsys(sig, info, ctx);
		return;
	}
	UC_RET(uc) = rfp_call(UC_ARG(uc, 0), UC_ARG(uc, 1), UC_ARG(uc, 2),
			      UC_ARG(uc, 3), UC_ARG(uc, 4));
	errno = saved;
}

/* ---- the signal functions: SIGSYS's disposition is kept aside ---- */

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction copy;

	if (sig == SIGSYS && atomic_load(&own_sigsys)) {
		if (old)
			*old = program_sigsys;
		if (act)
			program_sigsys = *act;
		return 0;
	}
	if (act && atomic_load(&own_sigsys)) {
		copy = *act;
		sigdelset(&copy.sa_mask, SIGSYS);
		act = &copy;
	}
	return real_sigaction(sig, act, old);
}

/*
 * The System V and BSD calls: SIGSYS's through the shim's sigaction(),
 * anything else libc's own (its signal() knows siginterrupt()).
 */
static bool ours(int sig)
{
	return sig == SIGSYS && atomic_load(&own_sigsys);
}

static sighandler_t set_sigsys(sighandler_t handler, int flags)
{
	struct sigaction sa = { .sa_handler = handler, .sa_flags = flags }, old;

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, &old))
		return SIG_ERR;
	return old.sa_handler;
}

static bool sigsys_interrupts;	/* siginterrupt(SIGSYS, 1) */

sighandler_t signal(int sig, sighandler_t handler)
{
	/* glibc's: BSD semantics, restarting unless siginterrupt(). */
	if (ours(sig))
		return set_sigsys(handler, sigsys_interrupts ? 0 : SA_RESTART);
	return REAL(signal)(sig, handler);
}

sighandler_t bsd_signal(int sig, sighandler_t handler)
{
	if (ours(sig))
		return set_sigsys(handler, SA_RESTART);
	return REAL(bsd_signal)(sig, handler);
}

/* System V: reset to SIG_DFL when it runs, not blocked while it runs. */
sighandler_t sysv_signal(int sig, sighandler_t handler)
{
	if (ours(sig))
		return set_sigsys(handler, SA_RESETHAND | SA_NODEFER);
	return REAL(sysv_signal)(sig, handler);
}

/* What -std=c11 and the like make of signal(). */
sighandler_t __sysv_signal(int sig, sighandler_t handler)
{
	if (ours(sig))
		return set_sigsys(handler, SA_RESETHAND | SA_NODEFER);
	return REAL(__sysv_signal)(sig, handler);
}

int siginterrupt(int sig, int flag)
{
	if (!ours(sig))
		return REAL(siginterrupt)(sig, flag);
	sigsys_interrupts = flag;
	if (flag)
		program_sigsys.sa_flags &= ~SA_RESTART;
	else
		program_sigsys.sa_flags |= SA_RESTART;
	return 0;
}

/* System V: SIG_HOLD would block SIGSYS, which the shim never does. */
sighandler_t sigset(int sig, sighandler_t disp)
{
	if (!ours(sig))
		return REAL(sigset)(sig, disp);
	if (disp == SIG_HOLD)
		return program_sigsys.sa_handler;
	return set_sigsys(disp, 0);
}

int sighold(int sig)
{
	return ours(sig) ? 0 : REAL(sighold)(sig);
}

int sigignore(int sig)
{
	return ours(sig) ? (set_sigsys(SIG_IGN, 0) == SIG_ERR ? -1 : 0) :
		REAL(sigignore)(sig);
}

static const sigset_t *without_sigsys(int how, const sigset_t *set,
				      sigset_t *copy)
{
	if (!set || how == SIG_UNBLOCK || !atomic_load(&own_sigsys))
		return set;
	*copy = *set;
	sigdelset(copy, SIGSYS);
	return copy;
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;

	return real_sigmask(false, how, without_sigsys(how, set, &copy), old);
}

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;

	return real_sigmask(true, how, without_sigsys(how, set, &copy), old);
}

/* BSD's masks, one bit a signal. */
int sigblock(int mask)
{
	return REAL(sigblock)(atomic_load(&own_sigsys) ? mask & ~(1 << (SIGSYS - 1)) : mask);
}

int sigsetmask(int mask)
{
	return REAL(sigsetmask)(atomic_load(&own_sigsys) ? mask & ~(1 << (SIGSYS - 1)) : mask);
}

/* The calls that block signals while they wait, or for a new thread. */
#define MASK(set, copy) without_sigsys(SIG_SETMASK, set, copy)

int sigsuspend(const sigset_t *set)
{
	sigset_t copy;

	return REAL(sigsuspend)(MASK(set, &copy));
}

int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *t,
	  const sigset_t *set)
{
	sigset_t copy;

	return REAL(ppoll)(fds, n, t, MASK(set, &copy));
}

int pselect(int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *t,
	    const sigset_t *set)
{
	sigset_t copy;

	return REAL(pselect)(n, r, w, e, t, MASK(set, &copy));
}

int epoll_pwait(int ep, struct epoll_event *ev, int max, int t,
		const sigset_t *set)
{
	sigset_t copy;

	return REAL(epoll_pwait)(ep, ev, max, t, MASK(set, &copy));
}

int epoll_pwait2(int ep, struct epoll_event *ev, int max,
		 const struct timespec *t, const sigset_t *set)
{
	sigset_t copy;

	return REAL(epoll_pwait2)(ep, ev, max, t, MASK(set, &copy));
}

int pthread_attr_setsigmask_np(pthread_attr_t *attr, const sigset_t *set)
{
	sigset_t copy;

	return REAL(pthread_attr_setsigmask_np)(attr, MASK(set, &copy));
}

/* ---- setup ---- */

/* args[5]'s halves, little-endian; a 32-bit call's high half is 0. */
#define ARG5_LO		offsetof(struct seccomp_data, args[5])
#define ARG5_HI		(ARG5_LO + 4)
#ifdef __LP64__
#define ARG5_HI_MARKER	RFP_MARKER_HALF
#else
#define ARG5_HI_MARKER	0
#endif

static int install_filter(void)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, RFP_AUDIT_ARCH, 0, 7),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_remap_file_pages, 0, 5),
		/* The shim's own call, marked in args[5], goes through. */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG5_LO),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, RFP_MARKER_HALF, 0, 2),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG5_HI),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARG5_HI_MARKER, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP | RFP_TRAP_DATA),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = sizeof(insns) / sizeof(insns[0]),
		.filter = insns,
	};

	/* Without CAP_SYS_ADMIN a filter needs no_new_privs (inherited). */
	if (!sys(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		     SECCOMP_FILTER_FLAG_TSYNC, &prog))
		return 0;
	if (errno != EACCES || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return sys(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		       SECCOMP_FILTER_FLAG_TSYNC, &prog) ? -1 : 0;
}

extern char **environ;

/*
 * The knobs (rfp_compat_init() says which), from one pass over the
 * environment: no getenv() and no strcmp() to look up and call at each
 * exec() of a program.
 */
#define KNOB_QUIET	1U
#define KNOB_ALWAYS	2U
#define KNOB_NO_SECCOMP	4U
#define KNOB_FILTER	8U

static bool starts(const char *s, const char *prefix, const char **rest)
{
	while (*prefix)
		if (*s++ != *prefix++)
			return false;
	*rest = s;
	return true;
}

/* As getenv() finds them: the first RFP_COMPAT_<NAME>= of each name counts. */
static unsigned int knobs(void)
{
	static const struct {
		const char *name, *on;
		unsigned int bit;
	} k[] = {
		{ "QUIET=", "1", KNOB_QUIET }, { "ALWAYS=", "1", KNOB_ALWAYS },
		{ "SECCOMP=", "0", KNOB_NO_SECCOMP }, { "FILTER=", "1", KNOB_FILTER },
	};
	const char *rest, *value, *end;
	unsigned int i, set = 0, seen = 0;
	char **e;

	for (e = environ; e && *e; e++) {
		if (!starts(*e, "RFP_COMPAT_", &rest))
			continue;
		for (i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
			if ((seen & k[i].bit) || !starts(rest, k[i].name, &value))
				continue;
			seen |= k[i].bit;
			if (starts(value, k[i].on, &end) && !*end)
				set |= k[i].bit;
		}
	}
	return set;
}

/*
 * Whether a seccomp filter is installed: PR_GET_SECCOMP says 2 (not a
 * read of /proc/self/status, which every exec() of a child would pay).
 */
static bool filtered(void)
{
	return sys(SYS_prctl, PR_GET_SECCOMP, 0, 0, 0, 0) == 2;
}

/*
 * Knobs (environment, rfp-compat sets them): RFP_COMPAT_QUIET=1 keeps the
 * one line a process prints when it first emulates a call;
 * RFP_COMPAT_SECCOMP=0 catches only glibc's wrapper and syscall() (no
 * filter);
 * RFP_COMPAT_ALWAYS=1 emulates where the kernel would do the remap.
 */
__attribute__((constructor))
static void rfp_compat_init(void)
{
	struct sigaction sa = { .sa_sigaction = on_sigsys,
				.sa_flags = SA_SIGINFO | SA_NODEFER };
	sigset_t sigsys = { 0 };
	unsigned int set = knobs();

	quiet = set & KNOB_QUIET;
	always = set & KNOB_ALWAYS;
	syscall_lookup();
	if (!signal_lookup()) {
		say("rfp-compat: cannot find libc's signal functions: not active\n", NULL);
		return;
	}
	if (set & KNOB_NO_SECCOMP)
		return;
	/* sa_mask is empty: the initializer zeroed it. */
	real_sigaction(SIGSYS, &sa, &program_sigsys);
	atomic_store(&own_sigsys, true);
	sigsys.__val[(SIGSYS - 1) / (8 * sizeof(sigsys.__val[0]))] =
		1UL << ((SIGSYS - 1) % (8 * sizeof(sigsys.__val[0])));
	real_sigmask(false, SIG_UNBLOCK, &sigsys, NULL);
	/*
	 * Filters are inherited across exec(): one is enough for a chain of
	 * exec()s, which would otherwise stack one filter each until the
	 * kernel refuses more.  RFP_COMPAT_FILTER=1 says a process before
	 * this one installed it; the process's Seccomp: mode says it is here.
	 */
	if ((set & KNOB_FILTER) && filtered())
		return;
	if (install_filter()) {
		if (!quiet)
			say("rfp-compat: cannot install the seccomp filter: only glibc's remap_file_pages() and syscall() are emulated\n",
			    NULL);
		atomic_store(&own_sigsys, false);
		real_sigaction(SIGSYS, &program_sigsys, NULL);
		return;
	}
	setenv("RFP_COMPAT_FILTER", "1", 1);
}
