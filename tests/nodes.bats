#!/usr/bin/env bats
# The node table: inode numbers, which backup tools keep from one run to the
# next, are the ones odbfs has always given (the values below were recorded
# with odbfs 0.1.0 before its nodes were made smaller, and must not change
# with any later version); the object each kind of node stands for; and
# thousands of nodes, many of them forgotten as soon as they are used, so
# the table grows and shrinks under the lookups; and thousands of objects,
# whose nodes are kept small (cells), forgotten by the kernel and made
# again with the same attributes.

load lib

# make_repo REPO [git init options...]: two commits of a file, an
# executable, a symlink, a subdirectory and a submodule entry, an annotated
# tag; at lib.bash's fixed dates, so every id is the same at every run.
make_repo() {
	local repo=$1
	shift
	(
		set -e
		git init -q -b main "$@" "$repo"
		cd "$repo"
		echo one >README
		git add README
		git commit -q -m first
		echo two >>README
		printf '#!/bin/sh\necho tool\n' >tool.sh
		chmod 755 tool.sh
		ln -s README link
		mkdir sub
		echo inner >sub/f
		git add -A
		git update-index --add --cacheinfo \
			"160000,$(git rev-parse HEAD),mod"
		git commit -q -m second
		git tag -a -m "version one" v1
	)
}

setup() {
	REPO=$BATS_TEST_TMPDIR/repo
	MNT=$BATS_TEST_TMPDIR/mnt
}

teardown() {
	unmount_odbfs "$MNT"
}

# enoent PATH: PATH does not exist.
enoent() {
	! LC_ALL=C stat -- "$1" >/dev/null 2>&1 &&
		[[ $(LC_ALL=C stat -- "$1" 2>&1) == *"No such file or directory"* ]]
}

# inodes PATHS...: "ino path" for each path under $MNT, links not followed.
inodes() {
	local p
	for p in "$@"; do
		echo "$(stat -c %i -- "$MNT/$p") $p"
	done
}

# The numbers of a tree's entries changed once, when they became one per
# path and ascending in the tree's order (a tree's README, then link, mod,
# sub, tool.sh); refs/tags/v1's when a ref to a tag came to link to tags/
# (a symlink's number follows its target); an abbreviated id's when it
# came to follow its target too (a prefix can come to name another
# object); commits/<id>'s and trees/<id>'s when they became links to
# by-id/, where their directories kept theirs; all others are as the
# first versions gave them.
@test "inode numbers are the ones earlier versions gave" {
	make_repo "$REPO"
	head=$(git -C "$REPO" rev-parse HEAD)
	tree=$(git -C "$REPO" rev-parse 'HEAD^{tree}')
	blob=$(git -C "$REPO" rev-parse HEAD:README)
	tag=$(git -C "$REPO" rev-parse v1)
	# The ids are fixed by the dates; the numbers below are for these.
	[ "$head" = 3dc9ed34c6962c71e3d5c69bb3f047db227f00a9 ]
	mount_odbfs "$REPO" "$MNT"
	inodes . objects "objects/${blob:0:2}" "objects/$blob" \
		"objects/${blob:0:6}" commits "commits/$head" "commits/$head/" \
		"commits/$head/tree" "commits/$head/tree/README" \
		"commits/$head/tree/tool.sh" "commits/$head/tree/link" \
		"commits/$head/tree/sub" "commits/$head/tree/sub/f" \
		"commits/$head/tree/mod" "commits/$head/message" \
		"commits/$head/parent" "commits/$head/parents" \
		"commits/$head/raw" "commits/$head/author" \
		"commits/$head/committer" trees "trees/$tree" "trees/$tree/" \
		"trees/$tree/README" "trees/$tree/link" HEAD refs refs/heads \
		refs/heads/main refs/tags refs/tags/v1 .odbfs .odbfs/stats \
		.odbfs/format .odbfs/repository tags "tags/$tag" \
		"tags/$tag/object" "tags/$tag/tree" "tags/$tag/message" \
		>"$BATS_TEST_TMPDIR/got"
	diff - "$BATS_TEST_TMPDIR/got" <<-EOF
		1 .
		10908126975852831906 objects
		10981372076923776841 objects/${blob:0:2}
		8348056603799678701 objects/$blob
		279197407070325197 objects/${blob:0:6}
		14645420171508091005 commits
		187907043908505429 commits/$head
		4546203322693553443 commits/$head/
		4141925132422482242 commits/$head/tree
		9393597773146750977 commits/$head/tree/README
		9393597773146750981 commits/$head/tree/tool.sh
		9393597773146750978 commits/$head/tree/link
		9393597773146750980 commits/$head/tree/sub
		14151844734960664577 commits/$head/tree/sub/f
		9393597773146750979 commits/$head/tree/mod
		14317476279114871923 commits/$head/message
		14378553896986315836 commits/$head/parent
		15407884690251100270 commits/$head/parents
		8299715578622767156 commits/$head/raw
		2902872404434792322 commits/$head/author
		3727916888106717266 commits/$head/committer
		5995126492410496094 trees
		5569534972952431211 trees/$tree
		8313073348018391874 trees/$tree/
		9174593622666903553 trees/$tree/README
		9174593622666903554 trees/$tree/link
		13205245697640743426 HEAD
		18155404151659646588 refs
		6063245614046897421 refs/heads
		8166408986913024785 refs/heads/main
		16133025412981471280 refs/tags
		11227272672622592317 refs/tags/v1
		5902231682969670951 .odbfs
		14277479593205793534 .odbfs/stats
		10578229444419463240 .odbfs/format
		7135336161566447929 .odbfs/repository
		4211018564806364181 tags
		2723827920731173368 tags/$tag
		930994126667760293 tags/$tag/object
		7232880565970161246 tags/$tag/tree
		10521908675820962288 tags/$tag/message
	EOF
}

@test "sha256: inode numbers are the ones earlier versions gave" {
	make_repo "$REPO" --object-format=sha256
	head=$(git -C "$REPO" rev-parse HEAD)
	blob=$(git -C "$REPO" rev-parse HEAD:README)
	[ "$head" = c37205a8fe49f63003c9e4c4a0562b3bb642f583742e9251cda0993aea51ede0 ]
	mount_odbfs "$REPO" "$MNT"
	inodes "objects/$blob" "commits/$head/tree/README" \
		"commits/$head/tree/link" >"$BATS_TEST_TMPDIR/got"
	diff - "$BATS_TEST_TMPDIR/got" <<-EOF
		6356254821315768589 objects/$blob
		17562830954829971457 commits/$head/tree/README
		17562830954829971458 commits/$head/tree/link
	EOF
}

# check_ids: user.git.id of each kind of node that has one is git's.
check_ids() {
	local head tree tag t path want
	head=$(git -C "$REPO" rev-parse HEAD)
	tag=$(git -C "$REPO" rev-parse v1)
	tree=$(git -C "$REPO" rev-parse 'HEAD^{tree}')
	t=commits/$head/tree
	while read -r path want; do
		echo "# $path" >&2
		[ "$(getfattr --only-values -n user.git.id "$MNT/$path")" = \
			"$(git -C "$REPO" rev-parse "$want")" ]
	done <<-EOF
		objects/$(git -C "$REPO" rev-parse HEAD:README) HEAD:README
		commits/$head HEAD
		$t HEAD^{tree}
		trees/$tree HEAD^{tree}
		$t/README HEAD:README
		$t/tool.sh HEAD:tool.sh
		$t/sub HEAD:sub
		$t/sub/f HEAD:sub/f
		$t/mod HEAD~1
	EOF
	# Nodes that stand for no object have no id.
	for path in "commits/$head/message" .odbfs/format objects refs; do
		! getfattr --only-values -n user.git.id "$MNT/$path" 2>/dev/null
	done
	[ "$(getfattr --only-values -n user.git.id "$MNT/tags/$tag")" = "$tag" ]
	[ "$(getfattr --only-values -n user.git.type "$MNT/tags/$tag")" = tag ]
	# Symlinks carry no user.* attributes; their targets name the id.
	[ "$(readlink "$MNT/commits/$head/raw")" = "../../objects/$head" ]
	[ "$(readlink "$MNT/refs/tags/v1")" = "../../tags/$tag" ]
	[ "$(readlink "$MNT/tags/$tag/object")" = "../../commits/$head" ]
}

@test "each kind of node stands for its object" {
	make_repo "$REPO"
	mount_odbfs "$REPO" "$MNT"
	check_ids
}

@test "sha256: each kind of node stands for its object" {
	make_repo "$REPO" --object-format=sha256
	mount_odbfs "$REPO" "$MNT"
	check_ids
}

# objects_inodes: "ino name" of objects/<id> for every id in ids.
objects_inodes() {
	(cd "$MNT/objects" && xargs stat -c '%i %n' --) <"$BATS_TEST_TMPDIR/ids"
}

# tag_targets: where every tag t<N> links to, one a line, sorted.
tag_targets() {
	(cd "$MNT/refs/tags" && ls | grep '^t' | xargs readlink --) | sort
}

# all_moved: every tag t<N> links to $commit (the test's).
all_moved() {
	[ "$(tag_targets | uniq -c)" = "$(printf '%7d ../../commits/%s' \
		"$tags" "$commit")" ]
}

# all_gone: no tag t1..t$tags is found.
all_gone() {
	[ "$(seq -f 't%.0f' 1 "$tags" | (cd "$MNT/refs/tags" &&
		LC_ALL=C xargs stat -- 2>&1 >/dev/null) |
		grep -c 'No such file or directory')" -eq "$tags" ]
}

# A client that keeps its inodes forgets nothing until memory runs short,
# which a test cannot arrange without dropping every cache of the system.
# What makes the kernel forget at once is a name looked up anew (refs
# expire at once) that turns out to be a new node or none: a ref that moved
# or was deleted. So: thousands of blobs the kernel keeps, more refs, which
# move and then go, and the table grows through several sizes and shrinks
# back under the blobs' nodes.
@test "thousands of nodes, kept and forgotten, stay what they are" {
	local blobs=1500 tags=6000 commit id
	make_repo "$REPO"
	commit=$(git -C "$REPO" rev-parse HEAD)
	for i in $(seq 1 "$tags"); do
		printf 'blob\nmark :%d\ndata <<EOF\nblob number %d\nEOF\n' "$i" "$i"
	done | git -C "$REPO" fast-import --quiet \
		--export-marks="$BATS_TEST_TMPDIR/marks"
	cut -d' ' -f2 "$BATS_TEST_TMPDIR/marks" >"$BATS_TEST_TMPDIR/tagged"
	head -n "$blobs" "$BATS_TEST_TMPDIR/tagged" >"$BATS_TEST_TMPDIR/ids"
	awk '{ printf "create refs/tags/t%d %s\n", NR, $1 }' \
		"$BATS_TEST_TMPDIR/tagged" | git -C "$REPO" update-ref --stdin
	mount_odbfs "$REPO" "$MNT"
	objects_inodes >"$BATS_TEST_TMPDIR/first"
	[ "$(awk '{ print $1 }' "$BATS_TEST_TMPDIR/first" | sort | uniq -d)" = "" ]
	# Twice: the second time, every lookup finds the node of the first.
	sed 's|^|../../objects/|' "$BATS_TEST_TMPDIR/tagged" | sort \
		>"$BATS_TEST_TMPDIR/want"
	for _ in 1 2; do
		tag_targets | diff "$BATS_TEST_TMPDIR/want" -
	done
	# The watcher reads every loose ref again for a batch of events, and
	# a transaction of 6000 makes two batches or more (the lock files,
	# then the renames): 0.25 s on an idle machine, past 1 s when two
	# other processes want the CPU. What is checked here is that each
	# node comes out right, not how soon, so the bound is generous; and
	# it is on every tag, not on the last one git renames: a reload that
	# overlaps the renames may read t6000 after its rename and an
	# earlier tag before its own.
	# Moved: each is a new node, the old one forgotten.
	awk -v c="$commit" '{ printf "update refs/tags/t%d %s\n", NR, c }' \
		"$BATS_TEST_TMPDIR/tagged" | git -C "$REPO" update-ref --stdin
	within_seconds 10 all_moved
	# Deleted: every node forgotten.
	awk '{ printf "delete refs/tags/t%d\n", NR }' \
		"$BATS_TEST_TMPDIR/tagged" | git -C "$REPO" update-ref --stdin
	within_seconds 10 all_gone
	# The blobs are the same files, by either name, and read right.
	objects_inodes | diff "$BATS_TEST_TMPDIR/first" -
	awk '{ print substr($1, 1, 2) "/" $1 }' "$BATS_TEST_TMPDIR/ids" |
		(cd "$MNT/objects" && xargs stat -c '%i %n' --) |
		sed 's| [0-9a-f]*/| |' | diff "$BATS_TEST_TMPDIR/first" -
	for id in $(shuf -n 50 "$BATS_TEST_TMPDIR/ids"); do
		git -C "$REPO" cat-file blob "$id" | cmp - "$MNT/objects/$id"
		[ "$(getfattr --only-values -n user.git.id \
			"$MNT/objects/$id")" = "$id" ]
	done
	check_ids
	kill -0 "$ODBFS_PID"
}

# cells_below N: fewer than N nodes are cells.
cells_below() {
	[ "$(stat_of "$MNT" cells)" -lt "$1" ]
}

# object_attrs: "ino size mtime mode name" of objects/<id> for each id.
object_attrs() {
	(cd "$MNT/objects" && xargs stat -c '%i %s %Y %f %n' --) \
		<"$BATS_TEST_TMPDIR/ids"
}

# round_trip CELLS: thousands of objects of many sizes, looked up by name
# and by listing, have git's sizes, the same inode numbers before and after
# the kernel forgets them, and git's bytes; CELLS is whether their nodes
# are cells (sha1) or not (sha256, whose ids a cell has no room for).
round_trip() {
	local cells=$1 n=3000 id before
	# One awk, not a process a blob: blob i is about i * 37 % 5000 bytes.
	awk -v n="$n" 'BEGIN { for (i = 1; i <= n; i++) {
		s = sprintf("%*s%d\n", i * 37 % 5000, "", i); gsub(/ /, "x", s)
		printf "blob\nmark :%d\ndata %d\n%s\n", i, length(s), s } }' |
		git -C "$REPO" fast-import --quiet \
		--export-marks="$BATS_TEST_TMPDIR/marks"
	cut -d' ' -f2 "$BATS_TEST_TMPDIR/marks" >"$BATS_TEST_TMPDIR/ids"
	git -C "$REPO" hash-object -w --stdin </dev/null >>"$BATS_TEST_TMPDIR/ids"
	git -C "$REPO" cat-file --batch-check='%(objectsize) %(objectname)' \
		<"$BATS_TEST_TMPDIR/ids" >"$BATS_TEST_TMPDIR/sizes"
	mount_odbfs "$REPO" "$MNT"
	object_attrs >"$BATS_TEST_TMPDIR/first"
	awk '{ print $2, $5 }' "$BATS_TEST_TMPDIR/first" |
		diff "$BATS_TEST_TMPDIR/sizes" -
	# Files of mode 0644, of the repository's birth time, each its own
	# inode.
	[ "$(awk '{ print $3, $4 }' "$BATS_TEST_TMPDIR/first" | sort -u)" = \
		"$(stat -c %W "$REPO/.git") 81a4" ]
	[ "$(awk '{ print $1 }' "$BATS_TEST_TMPDIR/first" | sort | uniq -d)" = "" ]
	if [ "$cells" = yes ]; then
		[ "$(stat_of "$MNT" cells)" -ge "$n" ]
	else
		[ "$(stat_of "$MNT" cells)" -eq 0 ]
	fi
	[ "$(stat_of "$MNT" nodes)" -ge "$n" ]
	before="$(stat_of "$MNT" nodes) nodes, $(stat_of "$MNT" cells) cells"
	if [ -w /proc/sys/vm/drop_caches ]; then
		echo 2 >/proc/sys/vm/drop_caches
		within_a_second cells_below 100
		[ "$(stat_of "$MNT" nodes)" -lt 100 ]
	fi
	echo "# $before; then $(stat_of "$MNT" nodes) and $(stat_of "$MNT" cells)" >&3
	# Again, by listing (readdirplus makes the nodes), then by name.
	(cd "$MNT/objects" && find . -mindepth 2 -type f -printf '%i %s %f\n') |
		awk 'NR == FNR { want[$1] = 1; next } $3 in want' \
		"$BATS_TEST_TMPDIR/ids" - | sort -k3 >"$BATS_TEST_TMPDIR/listed"
	awk '{ print $1, $2, $5 }' "$BATS_TEST_TMPDIR/first" | sort -k3 |
		diff - "$BATS_TEST_TMPDIR/listed"
	object_attrs | diff "$BATS_TEST_TMPDIR/first" -
	for id in $(shuf -n 50 "$BATS_TEST_TMPDIR/ids") $(tail -n 1 \
		"$BATS_TEST_TMPDIR/ids"); do
		git -C "$REPO" cat-file blob "$id" | cmp - "$MNT/objects/$id"
		[ "$(getfattr --only-values -n user.git.id \
			"$MNT/objects/$id")" = "$id" ]
		[ "$(getfattr --only-values -n user.git.type \
			"$MNT/objects/$id")" = blob ]
	done
	check_ids
	kill -0 "$ODBFS_PID"
}

@test "thousands of objects: forgotten and looked up again, the same files" {
	make_repo "$REPO"
	round_trip yes
}

@test "sha256: thousands of objects: forgotten and looked up again, the same files" {
	make_repo "$REPO" --object-format=sha256
	round_trip no
}
