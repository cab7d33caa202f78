#!/usr/bin/env bats
# Reading ahead of walks (fs/ahead.c): once a second file of one listing is
# read, odbfs rebuilds the files after it and stores them in the kernel's
# page cache, so a walk reads them with no request. Every byte is compared
# with git; the counters of .odbfs/stats say which reads reached odbfs.

bats_require_minimum_version 1.5.0

load lib

setup_file() {
	local repo=$BATS_FILE_TMPDIR/repo i
	git init -q "$repo"
	git -C "$repo" config gc.auto 0
	mkdir -p "$repo/many" "$repo/few"
	# More files than one window (256), each a delta of the last commit's.
	for i in $(seq 1 300); do
		seq "$i" $((i * 13)) >"$repo/many/f$(printf %03d "$i")"
	done
	seq 1 100 >"$repo/few/a-small"
	seq 1 2000 | head -c 4095 >"$repo/few/b-page-less-one"
	seq 1 2000 | head -c 4096 >"$repo/few/c-page"
	seq 1 2000 | head -c 4097 >"$repo/few/d-page-and-one"
	: >"$repo/few/e-empty"
	# Over the 1 MiB that is pushed: left to the kernel's readahead.
	seq 1 400000 >"$repo/few/f-large"
	seq 7 700 >"$repo/few/g-small"
	git -C "$repo" add -A
	git -C "$repo" commit -qm one
	for i in $(seq 1 300); do
		echo "and $i more" >>"$repo/many/f$(printf %03d "$i")"
	done
	git -C "$repo" commit -qam two
	git -C "$repo" repack -adq --depth=50
	mkdir "$BATS_FILE_TMPDIR/want"
	git -C "$repo" archive HEAD | tar -x -C "$BATS_FILE_TMPDIR/want"

	# A tree as walkers meet them: 1 200 files in 48 directories of two
	# levels, more listings than a walker reads at once, half of the
	# files deltas of the first commit's.
	repo=$BATS_FILE_TMPDIR/wide
	git init -q "$repo"
	git -C "$repo" config gc.auto 0
	awk -v top="$repo" 'BEGIN {
		for (d = 0; d < 48; d++)
			for (f = 0; f < 25; f++) {
				p = sprintf("%s/d%02d/s%d/f%02d.c", top, d % 12,
				    int(d / 12), f)
				if (f == 0)
					system("mkdir -p " substr(p, 1,
					    length(p) - 6))
				for (l = 0; l < 40 + f; l++)
					printf "file %d line %d %s\n", d * 25 + f,
					    l, "lorem ipsum dolor sit amet" > p
				close(p)
			}
	}'
	git -C "$repo" add -A
	git -C "$repo" commit -qm one
	find "$repo" -name '*[02468].c' -exec sh -c 'echo more >>"$1"' _ {} \;
	git -C "$repo" commit -qam two
	git -C "$repo" repack -adq --depth=50
}

setup() {
	REPO=$BATS_FILE_TMPDIR/repo
	MNT=$BATS_TEST_TMPDIR/mnt
	HEAD=$(git -C "$REPO" rev-parse HEAD)
}

teardown() {
	unmount_odbfs "$MNT"
}

# begin_walk DIR F1 F2: mount, list DIR with attributes, and read two of
# its files, which makes a walk of it.
begin_walk() {
	mount_odbfs "$REPO" "$MNT"
	ls -l "$1" >/dev/null
	cat "$1/$2" "$1/$3" >/dev/null
}

# settle MNT NAME N: wait (5 s at most) until counter NAME reaches N, as
# the thread that pushes works on.
settle() {
	for _ in $(seq 1 100); do
		[ "$(stat_of "$1" "$2")" -ge "$3" ] && return 0
		sleep 0.05
	done
}

# walk DIR PATH: list DIR as a walk does, then read its files in one cat,
# in the order listed, and compare that with git's blobs HEAD:PATH/*.
# Prints how many files were read.
walk() {
	local dir=$1 path=$2 names
	names=$(ls -U "$dir")
	(cd "$dir" && cat $names) >"$BATS_TEST_TMPDIR/got"
	(cd "$BATS_FILE_TMPDIR/want/$path" && cat $names) |
		cmp - "$BATS_TEST_TMPDIR/got" >&2 || return 1
	echo $names | wc -w
}

@test "a walk reads every file as git has it" {
	mount_odbfs "$REPO" "$MNT"
	run -0 walk "$MNT/commits/$HEAD/tree/many" many
	[ "$output" -eq 300 ]
	echo "# 300 files: $(stat_of "$MNT" reads) reads," \
		"$(stat_of "$MNT" pushes) pushes" >&3
	[ "$(stat_of "$MNT" errors)" -eq 0 ]
}

@test "-o noahead: the same walk asks for every file" {
	mount_odbfs "$REPO" "$MNT" -o noahead
	run -0 walk "$MNT/commits/$HEAD/tree/many" many
	[ "$output" -eq 300 ]
	[ "$(stat_of "$MNT" pushes)" -eq 0 ]
	[ "$(stat_of "$MNT" reads)" -ge 300 ]
}

@test "one file read from each of two listings pushes nothing" {
	mount_odbfs "$REPO" "$MNT"
	ls -l "$MNT/commits/$HEAD/tree/many" "$MNT/commits/$HEAD/tree/few" \
		>/dev/null
	cat "$MNT/commits/$HEAD/tree/many/f100" >/dev/null
	cat "$MNT/commits/$HEAD/tree/few/a-small" >/dev/null
	sleep 0.2
	[ "$(stat_of "$MNT" pushes)" -eq 0 ]
}

@test "pushed files are read with no request, as git has them" {
	dir=$MNT/commits/$HEAD/tree/many
	begin_walk "$dir" f001 f002
	# Two reads make a walk: f003 to f258 are pushed, one window.
	settle "$MNT" pushes 256
	[ "$(stat_of "$MNT" pushes)" -eq 256 ]
	# Each look at the counters is itself one read, counted after.
	reads=$(stat_of "$MNT" reads)
	names=$(seq -f 'f%03g' 3 258)
	(cd "$dir" && cat $names) >"$BATS_TEST_TMPDIR/got"
	(cd "$BATS_FILE_TMPDIR/want/many" && cat $names) |
		cmp - "$BATS_TEST_TMPDIR/got"
	after=$(stat_of "$MNT" reads)
	echo "# 256 pushed files read: $((after - reads - 1)) requests" >&3
	# None, where pages stay. This machine's DAMON pages out cold
	# physical regions, and now and then a few of the pages just stored
	# with them (18 of 256 at worst, in 24 rounds; none with DAMON off).
	[ "$after" -le $((reads + 1 + 32)) ]
	# Past the window: a request, and the next window.
	cmp "$BATS_FILE_TMPDIR/want/many/f259" "$dir/f259"
	[ "$(stat_of "$MNT" reads)" -eq $((after + 2)) ]
}

@test "page edges, an empty and a large file: as git has them, each rebuilt once" {
	dir=$MNT/commits/$HEAD/tree/few
	begin_walk "$dir" a-small b-page-less-one
	# The other five: three pushed; the empty one and the large one
	# rebuilt, the large one kept for the reads to come.
	settle "$MNT" rebuilds 7
	[ "$(stat_of "$MNT" rebuilds)" -eq 7 ]
	[ "$(stat_of "$MNT" pushes)" -eq 3 ]
	cmp "$BATS_FILE_TMPDIR/want/few/f-large" "$dir/f-large"
	[ "$(stat_of "$MNT" rebuilds)" -eq 7 ]
	run -0 walk "$dir" few
	[ "$output" -eq 7 ]
}

@test "objects/xx/ listed again (nodes the kernel holds) is pushed too" {
	mount_odbfs "$REPO" "$MNT"
	# The fan-out directory with the most objects.
	xx=$(all_ids "$REPO" | cut -c1-2 | sort | uniq -c | sort -rn |
		awk 'NR == 1 { print $2 }')
	ls -l "$MNT/objects/$xx" >/dev/null
	ls -l "$MNT/objects/$xx" >/dev/null
	n=0
	for id in $(ls -U "$MNT/objects/$xx"); do
		n=$((n + 1))
		type=$(git -C "$REPO" cat-file -t "$id")
		git -C "$REPO" cat-file "$type" "$id" |
			cmp - "$MNT/objects/$xx/$id"
		# As slow as a walker that does more with each file.
		sleep 0.05
	done
	echo "# objects/$xx: $n objects, $(stat_of "$MNT" pushes) pushes" >&3
	[ "$n" -ge 4 ]
	[ "$(stat_of "$MNT" pushes)" -ge $((n - 3)) ]
}

@test "the kernel dropping nodes during walks: every byte still right" {
	mount_odbfs "$REPO" "$MNT"
	(
		while :; do
			echo 2 >/proc/sys/vm/drop_caches
			sleep 0.05
		done
	) 3>&- &
	dropper=$!
	for _ in 1 2 3 4 5; do
		run -0 walk "$MNT/commits/$HEAD/tree/many" many
	done
	kill "$dropper"
	wait "$dropper" || :
	[ "$(stat_of "$MNT" errors)" -eq 0 ]
	kill -0 "$ODBFS_PID"
}

# A blob too large to rebuild whole (over 8 MiB) is inflated as it is read;
# a thread inflates the bytes after each read before the next one asks.
@test "a large object is inflated ahead of its reads, and matches git" {
	local repo=$BATS_TEST_TMPDIR/big id i

	git init -q "$repo"
	for i in $(seq 1 12); do
		head -c 1048576 /dev/urandom
		seq "$i" 200000 | head -c 1048576
	done >"$BATS_TEST_TMPDIR/blob"
	id=$(git -C "$repo" hash-object -w "$BATS_TEST_TMPDIR/blob")
	for opts in "" "-o noahead"; do
		# shellcheck disable=SC2086 # opts is zero or two words
		mount_odbfs "$repo" "$MNT" $opts
		cmp "$MNT/objects/$id" "$BATS_TEST_TMPDIR/blob"
		echo "# ${opts:-ahead}: $(stat_of "$MNT" reads) reads," \
			"$(stat_of "$MNT" bytes_prefetched) bytes inflated ahead" >&3
		if [ -z "$opts" ]; then
			[ "$(stat_of "$MNT" bytes_prefetched)" -gt $((4 << 20)) ]
		else
			[ "$(stat_of "$MNT" bytes_prefetched)" -eq 0 ]
		fi
		[ "$(stat_of "$MNT" rebuilds)" -eq 1 ]
		unmount_odbfs "$MNT"
	done
	# Packed, and read from the end backwards in pieces of 1 MiB.
	git -C "$repo" pack-objects -q "$repo/.git/objects/pack/pack" <<<"$id"
	git -C "$repo" prune-packed
	mount_odbfs "$repo" "$MNT"
	for i in $(seq 23 -1 0) 5 6 7 20; do
		dd if="$MNT/objects/$id" bs=1M skip="$i" count=1 status=none |
			cmp - <(dd if="$BATS_TEST_TMPDIR/blob" bs=1M skip="$i" \
				count=1 status=none)
	done
	cmp "$MNT/objects/$id" <(git -C "$repo" cat-file blob "$id")
	[ "$(stat_of "$MNT" errors)" -eq 0 ]
}

# wide_walk TOOL: mount, copy the wide tree's HEAD with TOOL, compare the
# copy with git archive's, and check the counters: every file rebuilt at
# most once (a walk that caught up with the thread rebuilt the file it
# was pushing, 3-4 % of them), and most files pushed ahead of the tool.
wide_walk() {
	local repo=$BATS_FILE_TMPDIR/wide head files dst=$BATS_TEST_TMPDIR/copy
	head=$(git -C "$repo" rev-parse HEAD)
	files=$(git -C "$repo" ls-tree -r "$head" | wc -l)
	mount_odbfs "$repo" "$MNT"
	case $1 in
	rsync) rsync -a "$MNT/commits/$head/tree/" "$dst/" ;;
	tar) mkdir "$dst"
		tar -cf - -C "$MNT/commits/$head/tree" . | tar -xf - -C "$dst" ;;
	esac
	mkdir "$BATS_TEST_TMPDIR/want"
	git -C "$repo" archive "$head" | tar -xf - -C "$BATS_TEST_TMPDIR/want"
	diff -r "$BATS_TEST_TMPDIR/want" "$dst"
	echo "# $1, $files files: $(stat_of "$MNT" pushes) pushed," \
		"$(stat_of "$MNT" rebuilds) rebuilt" \
		"($(stat_of "$MNT" rebuilds_shared) shared), $(stat_of "$MNT" reads)" \
		"reads" >&3
	[ "$(stat_of "$MNT" errors)" -eq 0 ]
	[ "$(stat_of "$MNT" rebuilds)" -le "$files" ]
	# Two reads of each of the 48 listings make it a walk; the tool
	# overtakes the thread on a busy machine (half of the files at worst
	# seen, under a load of 8 on 2 cores). With eight listings
	# remembered, rsync had 161-179 pushed.
	[ "$(stat_of "$MNT" pushes)" -ge $((files / 4)) ]
}

# rsync's sender lists about a thousand files before it reads the first
# of them: with only the last eight listings remembered, 4 % of a tree's
# files were pushed.
@test "rsync -a: files pushed though listed long before, none rebuilt twice" {
	wide_walk rsync
}

@test "tar: files pushed, none rebuilt twice" {
	wide_walk tar
}
