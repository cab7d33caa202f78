#!/usr/bin/env bats
# Scale: what make bench measures at git.git's size (bench/scale.sh), at a
# size that fits make check, so that a listing or a walk that grows past
# its bound fails here. Repositories from bench/genscale.sh at SCALE 0.1
# (20 000 commits with merges, a tree of 5 000 entries, 100 tags, with and
# without a commit-graph) and bench/gencontent.sh.
#
# Bounds: a listing of commits/, trees/ or tags/ adds at most 24 MiB to
# the daemon's anonymous memory (it held a node for each entry, 991 MiB
# for ls trees at SCALE 1); a walk of the root meets the objects and a
# few entries per commit, root tree and tag, not history times tree; a
# walk of every commit's tree stays under 128 MiB and under 40 MiB once
# the kernel forgets; a backup of a forge's root reads its objects' bytes
# about once. The suite drops the kernel's caches: tests/run runs it
# alone.

load lib

setup_file() {
	export S=$BATS_FILE_TMPDIR/s
	"$TOP/bench/genscale.sh" "$S" 0.1 >/dev/null 2>&1
}

setup() {
	MNT=$BATS_TEST_TMPDIR/mnt
}

teardown() {
	sample_stop >/dev/null 2>&1 || :
	unmount_odbfs "$MNT"
}

# rss_anon: the daemon's anonymous resident memory, in KiB.
rss_anon() {
	awk '$1 == "RssAnon:" { print $2 }' "/proc/$ODBFS_PID/status"
}

# sample_start / sample_stop: RssAnon every 50 ms meanwhile; sample_stop
# prints the peak in KiB.
sample_start() {
	(
		while kill -0 "$ODBFS_PID" 2>/dev/null; do
			rss_anon
			sleep 0.05
		done
	) >"$BATS_TEST_TMPDIR/samples" 2>/dev/null &
	SAMPLER=$!
}
sample_stop() {
	[ -n "${SAMPLER:-}" ] || return 1
	kill "$SAMPLER" 2>/dev/null
	wait "$SAMPLER" 2>/dev/null || :
	SAMPLER=
	rss_anon >>"$BATS_TEST_TMPDIR/samples"
	sort -n "$BATS_TEST_TMPDIR/samples" | tail -1
}

# at_most KIB WHAT VALUE: VALUE (KiB) is at most KIB; says both.
at_most() {
	echo "# $2: $3 KiB (bound $1 KiB)" >&3
	[ "$3" -le "$1" ] || { echo "$2: $3 KiB, over $1 KiB" >&2; return 1; }
}

# nodes: the kernel's nodes, from .odbfs/stats.
nodes() {
	awk '$1 == "nodes" { print $2 }' "$MNT/.odbfs/stats"
}
few_nodes() {
	[ "$(nodes)" -lt 100 ]
}
rss_at_most() {
	[ "$(rss_anon)" -le "$1" ]
}

@test "commits/, trees/ and tags/ list what git lists, with and without a commit-graph, in bounded memory" {
	local r idle peak
	for r in "$S" "$S-cg"; do
		mount_odbfs "$r" "$MNT"
		idle=$(rss_anon)
		sample_start
		diff <(ls "$MNT/commits") <(git -C "$r" rev-list --all | LC_ALL=C sort)
		diff <(ls "$MNT/trees") \
			<(git -C "$r" log --all --format=%T | LC_ALL=C sort -u)
		diff <(ls "$MNT/tags") <(git -C "$r" for-each-ref \
			--format='%(objecttype) %(objectname)' refs/tags |
			awk '$1 == "tag" { print $2 }' | LC_ALL=C sort)
		peak=$(sample_stop)
		at_most $((idle + 24 * 1024)) "$(basename "$r"): listings' peak" "$peak"
		unmount_odbfs "$MNT"
	done
	# Each entry is a link to by-id/, whose directory a lookup finds.
	mount_odbfs "$S-cg" "$MNT"
	r=$(git -C "$S" rev-parse main)
	link_is "$MNT/commits/$r" "../by-id/$r"
	[ "$(cat "$MNT/commits/$r/parents")" = "$(git -C "$S" rev-parse "$r^@")" ]
	[ "$(ls "$MNT/by-id")" = "" ]
}

@test "a walk of the root meets each object once and a few entries per commit, root tree and tag" {
	local objects commits trees tags refs found
	mount_odbfs "$S" "$MNT" -o nometa
	objects=$(all_ids "$S" | wc -l)
	commits=$(git -C "$S" rev-list --all | wc -l)
	trees=$(git -C "$S" log --all --format=%T | sort -u | wc -l)
	tags=$(ls "$MNT/tags" | wc -l)
	refs=$(git -C "$S" for-each-ref | wc -l)
	[ "$tags" -gt 0 ]
	find "$MNT" >"$BATS_TEST_TMPDIR/all"
	found=$(wc -l <"$BATS_TEST_TMPDIR/all")
	echo "# find: $found entries for $objects objects, $commits commits, $trees trees, $tags tags, $refs refs" >&3
	[ "$(grep -c "^$MNT/objects/../[0-9a-f]\{40\}\$" "$BATS_TEST_TMPDIR/all")" -eq "$objects" ]
	# Every entry outside objects/: a commit's or a tree's link, a tag's
	# directory and its eight members at most, a ref and its directories.
	[ "$found" -le $((objects + 257 + commits + trees + 9 * tags + 2 * refs + 16)) ]
	du -s "$MNT" >/dev/null
}

@test "a walk of every commit's tree stays under 128 MiB, and under 40 MiB once the kernel forgets" {
	local r=$BATS_TEST_TMPDIR/h c peak most n idle
	"$TOP/bench/gencontent.sh" "$r" 500 300 >/dev/null 2>&1
	mount_odbfs "$r" "$MNT"
	idle=$(rss_anon)
	sample_start
	for c in $(ls "$MNT/commits"); do
		find "$MNT/commits/$c/tree/"
	done | wc -l >"$BATS_TEST_TMPDIR/n"
	n=$(cat "$BATS_TEST_TMPDIR/n")
	most=$(nodes)
	peak=$(sample_stop)
	echo "# $n entries walked, $most nodes held: $(((peak - idle) * 1024 / most)) bytes a node at the peak" >&3
	[ "$n" -ge 150000 ]
	at_most $((128 * 1024)) "walk's peak" "$peak"
	sync
	echo 2 >/proc/sys/vm/drop_caches
	# The kernel forgets; the daemon sheds its caches and trims.
	within_seconds 5 few_nodes
	within_seconds 5 rss_at_most $((40 * 1024)) || :
	at_most $((40 * 1024)) "after the kernel forgot" "$(rss_anon)"
}

@test "restic over a forge's root reads each repository's objects about once" {
	command -v restic >/dev/null || skip "no restic"
	local root=$BATS_TEST_TMPDIR/forge i bytes=0 got
	"$TOP/bench/gencontent.sh" "$BATS_TEST_TMPDIR/base" 300 300 >/dev/null 2>&1
	for i in 0 1 2; do
		git clone -q --bare "$BATS_TEST_TMPDIR/base" "$root/r$i.git"
		bytes=$((bytes + $(git -C "$root/r$i.git" cat-file --batch-all-objects \
			--batch-check='%(objectsize)' | awk '{ s += $1 } END { print s }')))
	done
	mkdir -p "$MNT"
	"$ODBFS" -f --root "$root" -o nometa "$MNT" 2>"$MNT.log" 3>&- &
	ODBFS_PID=$!
	within_seconds 5 mountpoint -q "$MNT"
	export RESTIC_REPOSITORY=$BATS_TEST_TMPDIR/restic RESTIC_PASSWORD=odbfs
	export RESTIC_CACHE_DIR=$BATS_TEST_TMPDIR/restic-cache
	restic init -q
	restic backup --json "$MNT" >"$BATS_TEST_TMPDIR/out"
	got=$(summary total_bytes_processed)
	echo "# restic read $got bytes of files for $bytes bytes of objects" >&3
	[ "$got" -ge "$bytes" ]
	[ "$got" -le $((bytes * 13 / 10)) ]
	# Again after a remount: every file unmodified, so none read.
	fusermount3 -u "$MNT"
	wait "$ODBFS_PID" || :
	"$ODBFS" -f --root "$root" -o nometa "$MNT" 2>"$MNT.log" 3>&- &
	ODBFS_PID=$!
	within_seconds 5 mountpoint -q "$MNT"
	restic backup --json "$MNT" >"$BATS_TEST_TMPDIR/out"
	echo "# again: $(summary files_new) new, $(summary files_changed) changed, $(summary files_unmodified) unmodified" >&3
	[ "$(summary files_new)" -eq 0 ] && [ "$(summary files_changed)" -eq 0 ]
	[ "$(summary files_unmodified)" -gt 0 ]
}

# summary FIELD: the field of restic --json's summary in $BATS_TEST_TMPDIR/out.
summary() {
	python3 -c 'import json, sys
for l in open(sys.argv[1]):
    m = json.loads(l)
    if m.get("message_type") == "summary":
        print(m[sys.argv[2]])' "$BATS_TEST_TMPDIR/out" "$1"
}
