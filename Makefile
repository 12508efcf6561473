# The remap_file_pages() decommission for Linux 6.12: harness.
#
# Everything big (kernel tree, objects, images, logs) lives in $(RFP_CACHE),
# outside this checkout.  'make help' lists the targets and variables.

RFP_CACHE ?= $(HOME)/.cache/rfp
KERNEL ?= patched
CONFIG ?= base
export RFP_CACHE KERNEL CONFIG ACCEL ICOUNT TIMEOUT MEM SMP \
	BOOTARGS FORCE JOBS REPEATS BENCH_OUT STRESS_SECONDS STRESS_PROCS \
	STRESS_THREADS FUZZ_CALLS FUZZ_SECONDS SEEDS STEPS

S := scripts

.PHONY: help deps tree kernel run check shell bench stress faults fuzz \
	diff mm-selftests patches checkpatch bisect bisect-boot clean distclean

help:
	@echo "make run         build (what changed), boot, run the demo"
	@echo "make run PROG=/abs/static-binary ARGS='...'"
	@echo "                 run that program in the guest (./rfp run PROG ARGS...:"
	@echo "                 the same, exiting with the program's exit status)"
	@echo "make check       the test suite; last line: N passed, N failed"
	@echo "make shell       an interactive busybox shell in the guest"
	@echo "make bench       stock against patched, in guest instructions per call"
	@echo "make stress      rfp-stress on tmpfs and ext4 (STRESS_SECONDS=120 each)"
	@echo "make faults      rfp-faults: remaps failed at every allocation (CONFIG=debug)"
	@echo "make fuzz        rfp-fuzz against the model, then trinity (CONFIG=debug)"
	@echo "make diff        rfp-diff traces, stock against patched: must be identical"
	@echo "                 (SEEDS='1 2 3 4 5 6', STEPS=500 a trace; make check runs it too)"
	@echo "make mm-selftests the tree's mm selftests, stock against patched"
	@echo "make tree        the kernel git tree with patches/ applied"
	@echo "make patches     export the tree's commits back into patches/"
	@echo "make checkpatch  scripts/checkpatch.pl --strict on every patch"
	@echo "make bisect      apply the series patch by patch, build each"
	@echo "make bisect-boot the same, and boot each and run the tests it has (slow)"
	@echo "make kernel      only build the kernel"
	@echo "make deps        only install the Debian packages"
	@echo
	@echo "KERNEL=patched|stock  CONFIG=base|debug  RFP_CACHE=$(RFP_CACHE)"
	@echo "ACCEL=kvm|tcg (default: probed)  ICOUNT=1  TIMEOUT=s  MEM=2G  SMP=2"
	@echo "REPEATS=5 (make bench)  BENCH_OUT=$(RFP_CACHE)/bench"

deps:
	@bash $(S)/deps.sh

tree: deps
	@bash $(S)/tree.sh $(if $(filter stock,$(KERNEL)),stock,patched)
	@echo "kernel tree: $(RFP_CACHE)/$(if $(filter stock,$(KERNEL)),stock,linux)"

kernel: deps
	@bash $(S)/build.sh

# ARGS is split into words by the shell, as typed.  make cannot give back
# the program's exit status (a failing recipe makes make exit 2): ./rfp run
# does.
run:
	@bash $(S)/run.sh run $(PROG) $(ARGS)

# The modes: declared in modes/*.sh (fault injection and fuzzing on the
# debug kernel).
check shell stress diff faults fuzz:
	@bash $(S)/run.sh $@

bench:
	@bash $(S)/bench.sh

mm-selftests:
	@bash $(S)/mm-selftests.sh

patches:
	@bash $(S)/patches.sh export

checkpatch: deps
	@bash $(S)/patches.sh checkpatch

bisect: deps
	@bash $(S)/patches.sh bisect

bisect-boot: deps
	@bash $(S)/patches.sh bisect --boot

clean:
	rm -rf $(RFP_CACHE)/runs $(RFP_CACHE)/userspace

distclean:
	rm -rf $(RFP_CACHE)
