#!/bin/bash
# The series in patches/TREE/ and the kernel tree of TREE:
#   patches.sh export      git format-patch rfp-base..rfp into patches/TREE/
#   patches.sh checkpatch  scripts/checkpatch.pl --strict on every patch
#   patches.sh bisect      apply one patch at a time to a scratch tree,
#                          build and checkpatch each step
#   patches.sh bisect --boot
#                          also boot each step and run the tests it has:
#                          the remap_file_pages kselftest in the guest
. "$(dirname "$0")/lib.sh"

series() {
	grep -v -e '^#' -e '^[[:space:]]*$' "$PATCHES/series" 2>/dev/null || true
}

do_export() {
	[ -d "$KTREE/.git" ] || die "no kernel tree at $KTREE: run 'make tree' first"
	[ "$(git -C "$KTREE" symbolic-ref --short HEAD 2>/dev/null)" = "$BRANCH" ] ||
		die "$KTREE is not on branch $BRANCH"
	git -C "$KTREE" diff --quiet HEAD ||
		die "$KTREE has uncommitted changes: commit them (git commit --amend, rebase -i) first"
	local n
	n=$(git -C "$KTREE" rev-list --count "$BASE_TAG..$BRANCH")
	[ "$n" -gt 0 ] || die "no commits on $BRANCH above $BASE_TAG"
	if [ -z "$(git -C "$KTREE" config "branch.$BRANCH.description" || true)" ]; then
		note "no cover letter text yet: set it with 'git -C $KTREE branch --edit-description'"
	fi

	local tmp
	tmp=$(mktemp -d)
	git -C "$KTREE" format-patch -q --zero-commit --cover-letter \
		--cover-from-description=subject --subject-prefix="$SUBJECT_PREFIX" \
		--base="$BASE_TAG" -o "$tmp" "$BASE_TAG..$BRANCH"
	mkdir -p "$PATCHES"
	rm -f "$PATCHES"/*.patch
	mv "$tmp"/*.patch "$PATCHES/"
	rmdir "$tmp"
	(cd "$PATCHES" && ls 0*.patch | grep -v '^0000-cover-letter' >series)
	# The tree now is what patches/TREE/ says: nothing to apply next time.
	echo "$(bash "$TOP/scripts/tree.sh" --series-hash) $(git -C "$KTREE" rev-parse HEAD)" \
		>"$KTREE/.git/rfp-applied"
	echo "patches/$TREE/: cover letter and $n patches"
	sed 's/^/    /' "$PATCHES/series"
}

# config/checkpatch-accepted: "subject<TAB>TYPE<TAB>why" lines, a checkpatch
# message type that one patch is allowed, and the reason, printed with it.
accepted() { # patch -> "TYPE<TAB>why" lines for its subject
	local subject
	# git mailinfo unfolds a long subject and drops its [PATCH n/m].
	subject=$(git mailinfo /dev/null /dev/null <"$1" | sed -n 's/^Subject: //p')
	grep -v '^#' "$TOP/config/checkpatch-accepted" 2>/dev/null |
		awk -F'\t' -v s="$subject" '$1 == s { print $2 "\t" $3 }'
}

checkpatch_one() { # patch [TYPE...]
	local patch=$1 ignore
	shift
	ignore=$(IFS=,; echo "$*")
	# Debian's python3 (python3-ply) for spdxcheck.py, whatever PATH says.
	(cd "$CHECKPATCH_TREE" && PATH=/usr/bin:$PATH perl scripts/checkpatch.pl --strict --quiet --no-summary ${ignore:+--ignore "$ignore"} "$patch")
}

do_checkpatch() {
	bash "$TOP/scripts/tree.sh" patched >/dev/null
	CHECKPATCH_TREE=$KTREE
	local p bad=0
	echo "1..$(series | wc -l)"
	for p in $(series); do
		local types why
		types=$(accepted "$PATCHES/$p" | cut -f1)
		why=$(accepted "$PATCHES/$p" | sed 's/\t/: /' | tr '\n' ' ')
		# shellcheck disable=SC2086 # one word a type
		if out=$(checkpatch_one "$PATCHES/$p" $types 2>&1) && [ -z "$out" ]; then
			echo "ok - checkpatch --strict $p${why:+ # accepted $why}"
		else
			echo "not ok - checkpatch --strict $p"
			echo "$out" | sed 's/^/    /'
			bad=1
		fi
	done
	return $bad
}

# The tests that exist at this step of the series, on the kernel built
# from it: the kselftest in a guest.
bisect_test() { # dir step
	local dir=$1 run=$RUNS/bisect ks
	ks=$dir/tools/testing/selftests/mm/remap_file_pages.c
	mkdir -p "$run"
	if [ -f "$ks" ]; then
		# ARCH's native kselftest: the mm Makefile's x86_64 name, or its
		# plain one elsewhere (the 32-bit build on i386).
		local opt=() sarch=$SELFTEST_ARCH t=remap_file_pages
		[ -n "$USER_CC64" ] || { opt=(--32); sarch=$SELFTEST_ARCH32; }
		[ "$sarch" != x86_64 ] || t=remap_file_pages_64
		mm_selftest_make "${opt[@]}" "$dir" "$run" "$run/$t" \
			>"$run/build.log" 2>&1 ||
			{ tail -20 "$run/build.log"; die "the kselftest does not build after $2"; }
		printf 'cd /mnt/disk\n/prog\n' >"$run/job"
		bash "$TOP/scripts/boot.sh" --obj "$TC/build/$ARCH/bisect" \
			--run "$run" \
			"$run/job" "$run/$t" >"$run/out.txt" 2>&1 ||
			{ tail -40 "$run/out.txt"; die "the kselftest fails after $2"; }
		echo "    kselftest: $(grep -E '^# Totals' "$run/out.txt" || echo 'no totals')"
	fi
}

do_bisect() {
	local boot=0
	case "${1:-}" in
	--boot) boot=1 ;;
	"") ;;
	*) die "bisect: unknown argument '$1' (use --boot or nothing)" ;;
	esac
	bash "$TOP/scripts/tree.sh" patched >/dev/null
	[ $boot = 0 ] || bash "$TOP/scripts/userspace.sh"
	local dir=$TC/bisect p i=0 n
	# One make bisect at a time: the scratch tree is its own.
	lock "$dir.lock" "running make bisect in $dir"
	n=$(series | wc -l)
	if [ ! -f "$dir/Makefile" ]; then
		rm -rf "$dir"
		git -C "$KTREE" worktree prune
		git -C "$KTREE" worktree add -q --detach "$dir" "$BASE_TAG"
	fi
	git -C "$dir" am --abort >/dev/null 2>&1 || true
	git -C "$dir" checkout -q -f --detach "$BASE_TAG"
	CHECKPATCH_TREE=$dir
	for p in $(series); do
		i=$((i + 1))
		echo "==> [$i/$n] $p"
		tree_git -C "$dir" am -q "$PATCHES/$p" ||
			{ git -C "$dir" am --abort; die "$p does not apply"; }
		bash "$TOP/scripts/build.sh" --bisect "$dir" ||
			die "the kernel does not build after $p"
		local types
		types=$(accepted "$PATCHES/$p" | cut -f1)
		# shellcheck disable=SC2086 # one word a type
		out=$(checkpatch_one "$PATCHES/$p" $types 2>&1) && [ -z "$out" ] ||
			{ echo "$out"; die "checkpatch --strict complains about $p"; }
		[ $boot = 0 ] || bisect_test "$dir" "$p"
	done
	if [ $boot = 1 ]; then
		echo "all $n patches apply, build, pass checkpatch, boot and pass their tests one by one"
	else
		echo "all $n patches apply, build and pass checkpatch one by one"
	fi
}

case "${1:-}" in
export) do_export ;;
checkpatch) do_checkpatch ;;
bisect) shift; do_bisect "$@" ;;
*) die "usage: patches.sh export|checkpatch|bisect [--boot]" ;;
esac
