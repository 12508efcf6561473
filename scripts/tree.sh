#!/bin/bash
# Prepare the kernel trees outside the checkout:
#   $RFP_CACHE/linux  git tree: Debian's linux-source-6.12 as commit
#                     "rfp-base", branch "rfp" = rfp-base + patches/series
#   $RFP_CACHE/stock  git worktree of rfp-base (only for KERNEL=stock)
# Usage: tree.sh [patched|stock]
. "$(dirname "$0")/lib.sh"

want=${1:-patched}

unpack_tree() {
	[ -f "$TARBALL" ] || die "$TARBALL is missing: run 'make deps' (apt-get install linux-source-6.12)"
	step "unpacking $(basename "$TARBALL") into $TREE"
	local tmp=${RFP_CACHE}/unpack.$$
	rm -rf "$tmp" && mkdir -p "$tmp"
	tar -xf "$TARBALL" -C "$tmp"
	local dir
	dir=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d | head -n 1)
	[ -f "$dir/Makefile" ] || die "no kernel tree in $TARBALL"
	rm -rf "$TREE"
	mv "$dir" "$TREE"
	rm -rf "$tmp"
	step_done

	step "making a git tree of it (commit $BASE_TAG)"
	git -C "$TREE" init -q -b "$BRANCH"
	# Kernel trees are big: keep git from doing needless work.
	git -C "$TREE" config core.preloadIndex true
	git -C "$TREE" config gc.auto 0
	# Debian's .gitignore ignores every top-level entry ("/*": the
	# packaging repository keeps only debian/); drop that block so that
	# git sees the kernel tree and the files a patch adds to it.
	sed -i '/^# Debian packaging: ignore everything/,$d' "$TREE/.gitignore"
	git -C "$TREE" add -A
	local ver
	ver=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || echo unknown)
	tree_git commit -q -m "Debian linux-source-6.12 $ver" \
		-m "Unpacked from $TARBALL; only the Debian packaging block of the
top-level .gitignore (which ignores every top-level entry) is removed."
	git -C "$TREE" tag "$BASE_TAG"
	step_done
}

series_files() {
	[ -f "$TOP/patches/series" ] || return 0
	grep -v -e '^#' -e '^[[:space:]]*$' "$TOP/patches/series" || true
}

series_hash() {
	(
		cd "$TOP/patches"
		cat series 2>/dev/null
		series_files | while read -r p; do
			[ -f "$p" ] || die "patches/series names $p, which is not in patches/"
			cat "$p"
		done
	) | sha256sum | cut -d' ' -f1
}

# The cover letter's text lives in the branch description, so that
# 'make patches' can write it back with git format-patch.
set_description_from_cover() {
	local cover=$TOP/patches/0000-cover-letter.patch
	[ -f "$cover" ] || return 0
	awk '
		/^Subject: / && !subj { sub(/^Subject: (\[[^]]*\] )?/, ""); print; print ""; subj = 1; next }
		subj && !body && /^$/ { body = 1; next }
		body && /^[^ ].* \([0-9]+\):$/ { exit }
		body { print }
	' "$cover" | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' >"$TREE/.git/rfp-description"
	git -C "$TREE" config "branch.${BRANCH}.description" "$(cat "$TREE/.git/rfp-description")"
}

apply_series() {
	local state=$TREE/.git/rfp-applied
	local want_hash head rec_hash="" rec_head=""
	want_hash=$(series_hash)
	head=$(git -C "$TREE" rev-parse HEAD)
	[ -f "$state" ] && read -r rec_hash rec_head <"$state"

	if [ "$want_hash" = "$rec_hash" ]; then
		if [ "$head" != "$rec_head" ] || ! git -C "$TREE" diff --quiet HEAD; then
			note "the tree has changes not exported to patches/: building them as they are ('make patches' exports them)"
		fi
		return 0
	fi

	if [ -n "$rec_head" ] && [ "$FORCE" != 1 ]; then
		if [ "$head" != "$rec_head" ] || ! git -C "$TREE" diff --quiet HEAD; then
			die "patches/ changed, and $TREE has commits or edits not exported with 'make patches'.
       Export them first ('make patches'), or throw them away with FORCE=1."
		fi
	fi

	local n
	n=$(series_files | wc -l)
	step "applying patches/series ($n patches) to $TREE with git am"
	git -C "$TREE" am --abort >/dev/null 2>&1 || true
	git -C "$TREE" checkout -q -f -B "$BRANCH" "$BASE_TAG"
	local p out
	for p in $(series_files); do
		note "$p"
		if ! out=$(tree_git am -q --keep-cr "$TOP/patches/$p" 2>&1); then
			git -C "$TREE" am --abort >/dev/null 2>&1 || true
			echo "$out" >&2
			die "patches/$p does not apply to $BASE_TAG (see above); the tree is left at the patches before it"
		fi
	done
	set_description_from_cover
	echo "$want_hash $(git -C "$TREE" rev-parse HEAD)" >"$state"
	step_done
}

if [ "$want" = --series-hash ]; then
	series_hash
	exit 0
fi

mkdir -p "$RFP_CACHE"
[ -d "$TREE/.git" ] && git -C "$TREE" rev-parse -q --verify "$BASE_TAG" >/dev/null || unpack_tree

case "$want" in
patched)
	apply_series
	;;
stock)
	if [ ! -f "$STOCK/Makefile" ]; then
		step "checking out $BASE_TAG as a worktree in $STOCK"
		rm -rf "$STOCK"
		git -C "$TREE" worktree prune
		git -C "$TREE" worktree add -q --detach "$STOCK" "$BASE_TAG"
		step_done
	fi
	;;
*)
	die "tree.sh: unknown tree '$want'"
	;;
esac
