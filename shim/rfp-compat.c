// SPDX-License-Identifier: GPL-2.0
/*
 * rfp-compat: run a program with librfp-compat.so preloaded, so that its
 * remap_file_pages() calls work on a kernel that refuses the syscall.
 *
 *   rfp-compat [-q] [--glibc-only] [--always] [--] PROGRAM [ARGS...]
 *
 *   -q            no line on stderr when a process first emulates a call
 *   --glibc-only  no seccomp filter: only glibc's remap_file_pages() and
 *                 syscall() are caught, not a raw syscall instruction
 *                 (nothing inherited by children)
 *   --always      emulate where the kernel would remap itself (the kernel is
 *                 still asked, with a call it refuses)
 *
 * The library is looked up next to this program, by the word size of
 * PROGRAM: librfp-compat.so (this program's own), librfp-compat32.so or
 * librfp-compat64.so.  A statically linked PROGRAM cannot load a library:
 * rfp-compat refuses to start it (README, "what it cannot do").
 *
 * Exit status: PROGRAM's; 125 for a usage error, 126 when PROGRAM cannot
 * be run with the shim, 127 when it is not found.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

static void usage(void)
{
	fprintf(stderr,
		"usage: rfp-compat [-q] [--glibc-only] [--always] [--] PROGRAM [ARGS...]\n");
	exit(125);
}

/* PROGRAM's path as execvp() would find it; NULL when it is not there. */
static char *find_program(const char *prog)
{
	static char path[PATH_MAX];
	const char *p, *dirs = getenv("PATH");

	if (strchr(prog, '/'))
		return access(prog, X_OK) ? NULL : (char *)prog;
	for (p = dirs ? dirs : "/bin:/usr/bin"; p; p = strchr(p, ':') ? strchr(p, ':') + 1 : NULL) {
		int len = strchrnul(p, ':') - p;

		snprintf(path, sizeof(path), "%.*s/%s", len, len ? p : ".", prog);
		if (!access(path, X_OK))
			return path;
	}
	return NULL;
}

/*
 * The ELF class of PATH (ELFCLASS32 or ELFCLASS64), its machine and
 * type, and whether it asks for a dynamic loader; 0 when it is no ELF
 * file (a script: its interpreter is what runs, and is dynamic on Debian).
 */
static int elf_class(const char *path, int *dynamic, int *machine, int *type)
{
	unsigned char ident[EI_NIDENT];
	Elf64_Ehdr e64;
	Elf32_Ehdr e32;
	int fd = open(path, O_RDONLY | O_CLOEXEC), cls = 0, i;

	*dynamic = 1;
	*machine = *type = -1;
	if (fd < 0 || pread(fd, ident, sizeof(ident), 0) != sizeof(ident) ||
	    memcmp(ident, ELFMAG, SELFMAG))
		goto out;
	cls = ident[EI_CLASS];
	/* e_type and e_machine are at the same place in both classes. */
	if (pread(fd, &e32, sizeof(e32), 0) == sizeof(e32)) {
		*type = e32.e_type;
		*machine = e32.e_machine;
	}
	*dynamic = 0;
	if (cls == ELFCLASS64 && pread(fd, &e64, sizeof(e64), 0) == sizeof(e64)) {
		for (i = 0; i < e64.e_phnum; i++) {
			Elf64_Phdr ph;

			if (pread(fd, &ph, sizeof(ph), e64.e_phoff + i * e64.e_phentsize) == sizeof(ph) &&
			    ph.p_type == PT_INTERP)
				*dynamic = 1;
		}
	} else if (cls == ELFCLASS32 && pread(fd, &e32, sizeof(e32), 0) == sizeof(e32)) {
		for (i = 0; i < e32.e_phnum; i++) {
			Elf32_Phdr ph;

			if (pread(fd, &ph, sizeof(ph), e32.e_phoff + i * e32.e_phentsize) == sizeof(ph) &&
			    ph.p_type == PT_INTERP)
				*dynamic = 1;
		}
	}
out:
	if (fd >= 0)
		close(fd);
	return cls;
}

/*
 * Whether ld.so can preload LIB into a program of class CLS and machine
 * MACHINE (0, -1: a script, run by an interpreter of this program's
 * kind); if not, why.  ld.so skips what it cannot load, with a line on
 * stderr, and runs the program all the same: the shim would be missing
 * without anything failing.
 */
static const char *cannot_preload(const char *lib, int cls, int machine)
{
	int lib_cls, lib_machine, type, dynamic;
	struct statvfs fs;

	if (access(lib, R_OK))
		return strerror(errno);
	/* LD_PRELOAD is a list: ld.so splits it at spaces and colons. */
	if (strpbrk(lib, " :"))
		return "ld.so cannot preload a library whose path has a space or a colon (it splits LD_PRELOAD at them): install rfp-compat and its libraries in a directory whose path has none";
	if (!statvfs(lib, &fs) && (fs.f_flag & ST_NOEXEC))
		return "it is on a noexec mount, where ld.so cannot map it";
	lib_cls = elf_class(lib, &dynamic, &lib_machine, &type);
	if (!cls) {
		cls = sizeof(long) == 8 ? ELFCLASS64 : ELFCLASS32;
		machine = elf_class("/proc/self/exe", &dynamic, &machine, &type) ? machine : -1;
	}
	if (!lib_cls || type != ET_DYN)
		return "not a shared library";
	if (lib_cls != cls || lib_machine != machine)
		return "a library for another kind of program than this one";
	return NULL;
}

int main(int argc, char **argv)
{
	static char lib[PATH_MAX], preload[2 * PATH_MAX];
	const char *name = "librfp-compat.so", *old, *why;
	char *prog, *slash, *real;
	int i, cls, dynamic, machine, type;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (!strcmp(argv[i], "-q")) {
			setenv("RFP_COMPAT_QUIET", "1", 1);
		} else if (!strcmp(argv[i], "--glibc-only")) {
			setenv("RFP_COMPAT_SECCOMP", "0", 1);
		} else if (!strcmp(argv[i], "--always")) {
			setenv("RFP_COMPAT_ALWAYS", "1", 1);
		} else {
			fprintf(stderr, "rfp-compat: unknown option %s\n", argv[i]);
			usage();
		}
	}
	if (i == argc)
		usage();

	prog = find_program(argv[i]);
	if (!prog) {
		fprintf(stderr, "rfp-compat: %s: not found\n", argv[i]);
		return 127;
	}
	cls = elf_class(prog, &dynamic, &machine, &type);
	if (!dynamic) {
		fprintf(stderr,
			"rfp-compat: %s is statically linked: no library can be preloaded into it, so its remap_file_pages() calls cannot be emulated (README: \"what it cannot do\")\n",
			prog);
		return 126;
	}
	if (cls && cls != (sizeof(long) == 8 ? ELFCLASS64 : ELFCLASS32))
		name = cls == ELFCLASS32 ? "librfp-compat32.so" : "librfp-compat64.so";

	if (readlink("/proc/self/exe", lib, sizeof(lib) - 64) < 0) {
		perror("rfp-compat: /proc/self/exe");
		return 126;
	}
	slash = strrchr(lib, '/');
	strcpy(slash + 1, name);
	/* A link to it, from a path ld.so can read, is as good. */
	real = strpbrk(lib, " :") ? realpath(lib, NULL) : NULL;
	if (real && !strpbrk(real, " :") && strlen(real) < sizeof(lib))
		strcpy(lib, real);
	free(real);
	why = cannot_preload(lib, cls, machine);
	if (why) {
		fprintf(stderr, "rfp-compat: %s: %s; %s not run\n", lib, why, prog);
		return 126;
	}
	old = getenv("LD_PRELOAD");
	snprintf(preload, sizeof(preload), "%s%s%s", lib, old && *old ? ":" : "",
		 old ? old : "");
	setenv("LD_PRELOAD", preload, 1);
	execv(prog, argv + i);
	fprintf(stderr, "rfp-compat: %s: %s\n", prog, strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
