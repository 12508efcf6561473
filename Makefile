# The remap_file_pages() decommission for Linux 7.3 and 6.12: harness.
#
# Everything big (kernel tree, objects, images, logs) lives in $(RFP_CACHE),
# outside this checkout.  'make help' lists the targets and variables.

# The settings: everything a user may set, with its default, in this one
# place (README, "Settings", says what each does).  The scripts get them
# from here, through make or ./rfp; 'make help' prints their values.
RFP_CACHE ?= $(HOME)/.cache/rfp
# 7.3 (the series' home) or 6.12 (its backport): config/tree/$(TREE).sh
# names the Debian source package, patches/$(TREE)/ holds the series
# (fixes/, then decommission/).
TREE ?= 7.3
# x86_64, i386 or arm64: config/arch/$(ARCH).sh says how to build and boot.
ARCH ?= x86_64
KERNEL ?= patched
CONFIG ?= base
# make check and make compat: all, or one (only the kernel KERNEL and
# CONFIG name: no CONFIG_REMAP_FILE_PAGES=n kernel, no stock one).
KERNELS ?= all
ACCEL ?= auto
ICOUNT ?= 0
TIMEOUT ?= 900
MEM ?= 2G
SMP ?= 2
BOOTARGS ?=
FORCE ?= 0
JOBS ?= $(shell nproc)
REPEATS ?= 5
# make profile: the rfp-bench scenario, and how many calls deep to trace.
SCENARIO ?= whole
DEPTH ?= 6
BENCH_OUT ?= $(RFP_CACHE)/$(TREE)/bench/$(ARCH)
STRESS_PROCS ?= 3
STRESS_THREADS ?= 3
FUZZ_CALLS ?= 20000
FUZZ_SECONDS ?= 120
SEEDS ?= 1 2 3 4 5 6
STEPS ?= 500
# Its default is the mode's: 10 in make check, 120 in make stress.
STRESS_SECONDS ?=
# make install, make uninstall: rfp-compat under DESTDIR/PREFIX.
PREFIX ?= /usr/local
DESTDIR ?=
# make deb: where rfp-compat_VERSION_ARCH.deb is left (built in DEB_OUT/build).
DEB_OUT ?= $(RFP_CACHE)/deb
SETTINGS := TREE ARCH RFP_CACHE KERNEL CONFIG KERNELS ACCEL ICOUNT TIMEOUT MEM SMP BOOTARGS \
	FORCE JOBS REPEATS SCENARIO DEPTH BENCH_OUT STRESS_PROCS STRESS_THREADS FUZZ_CALLS \
	FUZZ_SECONDS SEEDS STEPS STRESS_SECONDS PREFIX DESTDIR DEB_OUT
export $(SETTINGS)
# The list itself, for the scripts (scripts/lib.sh checks each is set).
export RFP_SETTINGS := $(SETTINGS)
# The command, as a lock's holder names it to a command that waits for it
# (scripts/lib.sh, lock).
RFP_WHO ?= make $(or $(MAKECMDGOALS),help)
export RFP_WHO

S := scripts
MODES := $(sort $(basename $(notdir $(wildcard modes/*.sh))))

.PHONY: help env deps tree kernel run shell $(MODES) patches checkpatch configs bisect \
	bisect-boot install uninstall deb clean distclean

help:
	@echo "make run         build (what changed), boot, run the demo"
	@echo "make run PROG=/abs/static-binary ARGS='...'"
	@echo "                 run that program in the guest (./rfp run PROG ARGS...:"
	@echo "                 the same, exiting with the program's exit status)"
	@echo "make shell       an interactive busybox shell in the guest"
	@$(foreach m,$(MODES),sed -n 's/^# help: //p' modes/$(m).sh | \
		awk -v m='$(m)' 'NR == 1 { printf "make %-11s %s\n", m, $$0; next } \
			{ printf "                 %s\n", $$0 }';)
	@echo "make tree        the kernel git tree with patches/TREE/ applied"
	@echo "make patches     export the tree's commits back into patches/TREE/"
	@echo "make checkpatch  scripts/checkpatch.pl --strict on every patch"
	@echo "make configs     the series' objects under the configurations the kernel"
	@echo "                 test robot tries (W=1, sparse, 32-bit, arm64, no MMU)"
	@echo "make bisect      apply the series patch by patch, build each"
	@echo "make bisect-boot the same, and boot each and run the tests it has (slow)"
	@echo "make kernel      only build the kernel"
	@echo "make deps        only install the Debian packages, of every target"
	@echo "make install     rfp-compat (launcher, libraries, man page) under DESTDIR/PREFIX"
	@echo "make uninstall   remove what make install installed there"
	@echo "make deb         rfp-compat's Debian package, checked by lintian, into DEB_OUT"
	@echo "make clean       remove the runs and the user space of TREE (none while in use)"
	@echo "make distclean   remove the whole cache (RFP_CACHE)"
	@echo
	@echo "Every target takes TREE=7.3 (default) or 6.12 (config/tree/), and"
	@echo "ARCH=x86_64 (default), arm64 or i386 (config/arch/)."
	@echo
	@echo "Settings (make X VAR=value; README, \"Settings\"), as they are now:"
	@$(foreach v,$(SETTINGS),printf '  %s=%s\n' '$(v)' '$(subst ','\'',$($(v)))';)

# The settings, one NAME=value a line, as they are, for ./rfp.
env:
	@$(foreach v,$(SETTINGS),printf '%s=%s\n' '$(v)' '$(subst ','\'',$($(v)))';)
	@echo 'RFP_SETTINGS=$(SETTINGS)'

deps:
	@bash $(S)/deps.sh all

tree:
	@bash $(S)/deps.sh
	@bash $(S)/tree.sh $(if $(filter stock,$(KERNEL)),stock,patched)
	@echo "kernel tree: $(RFP_CACHE)/$(TREE)/$(if $(filter stock,$(KERNEL)),stock,linux)"

kernel:
	@bash $(S)/deps.sh
	@bash $(S)/build.sh $(KERNEL) $(CONFIG)

# ARGS is split into words by the shell, as typed.  make cannot give back
# the program's exit status (a failing recipe makes make exit 2): ./rfp run
# does.
run:
	@bash $(S)/run.sh run $(PROG) $(ARGS)

# The modes: one file each, modes/NAME.sh is make NAME (its "# help:"
# lines are make help's).
$(MODES) shell:
	@bash $(S)/run.sh $@

patches:
	@bash $(S)/patches.sh export

checkpatch:
	@bash $(S)/deps.sh checkpatch
	@bash $(S)/patches.sh checkpatch

configs:
	@bash $(S)/deps.sh configs
	@bash $(S)/configs.sh

bisect:
	@bash $(S)/deps.sh checkpatch
	@bash $(S)/patches.sh bisect

bisect-boot:
	@bash $(S)/deps.sh checkpatch
	@bash $(S)/patches.sh bisect --boot

# rfp-compat where its users are (shim/Makefile; debian/).  Built on and
# for this machine, in the cache: the checkout stays clean.
SHIM_BUILD = $(RFP_CACHE)/rfp-compat/build
install:
	@$(MAKE) -s -C shim O=$(SHIM_BUILD) install

uninstall:
	@$(MAKE) -s -C shim O=$(SHIM_BUILD) uninstall

deb:
	@bash $(S)/deps.sh deb
	@bash $(S)/deb.sh

clean:
	@bash $(S)/clean.sh

distclean:
	rm -rf $(RFP_CACHE)
