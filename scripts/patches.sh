#!/bin/bash
# The series in patches/TREE/ (fixes/, then decommission/: SERIES_NAMES in
# scripts/lib.sh) and the kernel tree of TREE:
#   patches.sh export      git format-patch each series' range of branches
#                          (rfp-base..rfp-fixes, rfp-fixes..rfp) into its
#                          directory, its cover letter from its branch's
#                          description
#   patches.sh checkpatch  scripts/checkpatch.pl --strict on every patch
#   patches.sh bisect      apply one patch at a time, the series in order,
#                          to a scratch tree, build and checkpatch each step
#   patches.sh bisect --boot
#                          also boot each step and run the tests it has:
#                          the remap_file_pages kselftest in the guest
. "$(dirname "$0")/lib.sh"

do_export() {
	[ -d "$KTREE/.git" ] || die "no kernel tree at $KTREE: run 'make tree' first"
	[ "$(git -C "$KTREE" symbolic-ref --short HEAD 2>/dev/null)" = "$BRANCH" ] ||
		die "$KTREE is not on branch $BRANCH"
	git -C "$KTREE" diff --quiet HEAD ||
		die "$KTREE has uncommitted changes: commit them (git commit --amend, rebase -i) first"
	# Each series is the commits from where the one before it ends to its
	# own branch: that branch must hold the one before it.
	local s br base n
	for s in $SERIES_NAMES; do
		br=$(series_branch "$s") base=$(series_base "$s")
		git -C "$KTREE" rev-parse -q --verify "refs/heads/$br" >/dev/null ||
			die "no branch $br in $KTREE: make it at the last commit of the $s series ('git -C $KTREE branch $br COMMIT')"
		git -C "$KTREE" merge-base --is-ancestor "$base" "$br" ||
			die "$base is not an ancestor of $br: $base..$br is not the $s series.
       Rebase $br onto it ('git -C $KTREE rebase --onto $base OLD $br', OLD where $base was),
       or move $base back to a commit of $br ('git -C $KTREE branch -f $base COMMIT').
       'git rebase -i --update-refs $BASE_TAG' on $BRANCH edits every series and moves their branches along."
		n=$(git -C "$KTREE" rev-list --count "$base..$br")
		[ "$n" -gt 0 ] || die "no commits on $br above $base: the $s series is empty"
		if [ -z "$(git -C "$KTREE" config "branch.$br.description" || true)" ]; then
			note "no cover letter text for the $s series yet: set it with 'git -C $KTREE branch --edit-description $br'"
		fi
	done

	# No --base: rfp-base is a local import nobody else can resolve; the
	# cover letters name the tree instead.
	local tmp
	tmp=$(mktemp -d)
	for s in $SERIES_NAMES; do
		br=$(series_branch "$s") base=$(series_base "$s")
		git -C "$KTREE" format-patch -q --zero-commit --cover-letter \
			--cover-from-description=subject --subject-prefix="$SUBJECT_PREFIX" \
			-o "$tmp/$s" "$base..$br"
	done
	for s in $SERIES_NAMES; do
		mkdir -p "$PATCHES/$s"
		rm -f "$PATCHES/$s"/*.patch
		mv "$tmp/$s"/*.patch "$PATCHES/$s/"
		rmdir "$tmp/$s"
		(cd "$PATCHES/$s" && ls 0*.patch | grep -v '^0000-cover-letter' >series)
	done
	rmdir "$tmp"
	# The tree now is what patches/TREE/ says: nothing to apply next time.
	bash "$TOP/scripts/tree.sh" --record
	for s in $SERIES_NAMES; do
		echo "patches/$TREE/$s/: cover letter and $(series_patches "$s" | wc -l) patches ($(series_base "$s")..$(series_branch "$s"))"
		sed 's/^/    /' "$PATCHES/$s/series"
	done
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
	echo "1..$(all_patches | wc -l)"
	for p in $(all_patches); do
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
	n=$(all_patches | wc -l)
	if [ ! -f "$dir/Makefile" ]; then
		rm -rf "$dir"
		git -C "$KTREE" worktree prune
		git -C "$KTREE" worktree add -q --detach "$dir" "$BASE_TAG"
	fi
	git -C "$dir" am --abort >/dev/null 2>&1 || true
	git -C "$dir" checkout -q -f --detach "$BASE_TAG"
	CHECKPATCH_TREE=$dir
	# Every series in order, one patch at a time (p: NAME/FILE).
	for p in $(all_patches); do
		i=$((i + 1))
		echo "==> [$i/$n] $p"
		tree_git -C "$dir" am -q "$PATCHES/$p" ||
			{ git -C "$dir" am --abort; die "patches/$TREE/$p does not apply"; }
		bash "$TOP/scripts/build.sh" --bisect "$dir" ||
			die "the kernel does not build after $p"
		local types
		types=$(accepted "$PATCHES/$p" | cut -f1)
		# shellcheck disable=SC2086 # one word a type
		out=$(checkpatch_one "$PATCHES/$p" $types 2>&1) && [ -z "$out" ] ||
			{ echo "$out"; die "checkpatch --strict complains about $p"; }
		[ $boot = 0 ] || bisect_test "$dir" "$p"
	done
	local of="of ${SERIES_NAMES// /, then }"
	if [ $boot = 1 ]; then
		echo "all $n patches ($of) apply, build, pass checkpatch, boot and pass their tests one by one"
	else
		echo "all $n patches ($of) apply, build and pass checkpatch one by one"
	fi
}

case "${1:-}" in
export) do_export ;;
checkpatch) do_checkpatch ;;
bisect) shift; do_bisect "$@" ;;
*) die "usage: patches.sh export|checkpatch|bisect [--boot]" ;;
esac
