#!/usr/bin/env bash
# bench/run.sh [--objects N] [--blob-mb M] [--rounds R] [--forge N]
#               [--scale S] [--only backup|forge|scale]
#
# odbfs beside git and libgit2, every row measured in the same run, medians
# of R rounds (default 3), ratios against the reference. Repositories are
# generated with git fast-import into bench/out/ and kept for the next run.
# Prints one table (Markdown) and writes it, dated, to bench/out/table.md.
#
# Section 5 (bench/backup.sh) puts a walk of every object, tar, rsync, borg
# and restic beside a floor: floorfs serving the same directory from
# memory. --only backup runs that section alone (make bench
# BENCH_ARGS='--only backup'), a few minutes with its repositories made.
#
# Section 6 (bench/forge.sh) measures one daemon for a forge (odbfs
# --root): the scan of a forge of --forge N repositories (10 000), the
# daemon's memory as it opens and closes them, a repository's first read,
# and restic over a 1 000-repository forge with one daemon against one a
# repository. --only forge runs it alone (make bench BENCH_ARGS='--only
# forge'), some 15-25 minutes with its forges made (3 minutes).
#
# Section 7 (bench/scale.sh) measures issue 28's rows: listings, walks
# from the root and restic over a forge's root on a repository of
# git.git's size (bench/genscale.sh at --scale S, default 1), the daemon's
# anonymous memory sampled. --only scale runs it alone (or bench/scale.sh).
#
# Needs: libgit2-dev (installed if missing), strace; for section 5
# borgbackup, restic, rsync, and root to drop the page cache; for section
# 6 restic and root (the page cache, and fs.inotify.max_user_instances
# raised for the run: a daemon a repository holds an inotify instance each).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/bench/out
objects=1000000 blob_mb=1024 rounds=3 only= forge_n=10000 scale=1
while [ $# -gt 0 ]; do
	case $1 in
	--objects) objects=$2; shift 2 ;;
	--blob-mb) blob_mb=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--forge) forge_n=$2; shift 2 ;;
	--scale) scale=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	*) echo "usage: $0 [--objects N] [--blob-mb M] [--rounds R] [--forge N] [--scale S] [--only backup|forge|scale]" >&2; exit 2 ;;
	esac
done
mkdir -p "$out"
: >"$out/.run-start"
mnts=()
table=$out/table.md
: >"$table"
. "$top/bench/lib.sh"
trap cleanup EXIT

repo() {	# repo NAME OBJECTS PACKS LOOSE
	local dir=$out/$1
	if [ ! -f "$dir/.done-$2-$3-$4" ]; then
		echo "generating $1 ($2 objects, $3 packs, $4 loose)..." >&2
		"$top/bench/genrepo.sh" "$dir" "$2" "$3" "$4"
		touch "$dir/.done-$2-$3-$4"
	fi
	echo "$dir"
}

say "# odbfs benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
say ""
say "Machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(uname -r); git $(git --version | cut -d' ' -f3), libgit2 $(pkg-config --modversion libgit2 2>/dev/null || echo "not installed"). Medians of $rounds rounds; lower is better; ratio = reference / odbfs (above 1: odbfs faster) unless the row says otherwise."
say ""

finish() {
	# Did this run generate anything? (repo() runs in a subshell: ask the files.)
	if find "$out" -maxdepth 2 -name '.done*' -newer "$out/.run-start" | grep -q .; then
		say "The run took $(( (SECONDS + 30) / 60 )) minutes, generating repositories included."
	else
		say "The run took $(( (SECONDS + 30) / 60 )) minutes, with the repositories of an earlier run."
	fi
	echo
	echo "table written to $table"
}
if [ "$only" = backup ]; then
	. "$top/bench/backup.sh"
	finish
	exit 0
elif [ "$only" = forge ]; then
	. "$top/bench/forge.sh"
	finish
	exit 0
elif [ "$only" = scale ]; then
	. "$top/bench/scale.sh"
	finish
	exit 0
elif [ -n "$only" ]; then
	echo "$0: --only: only 'backup', 'forge' and 'scale' are sections of their own" >&2
	exit 2
fi

# 1. Store, in-process.
say "## 1. Store, in-process (ns per lookup)"
say ""
row "repository | odbfs miss | odbfs hit | libgit2 miss | libgit2 miss NO_REFRESH | libgit2 hit | miss ratio (libgit2/odbfs) | hit ratio"
row "---|---|---|---|---|---|---|---"
for spec in "10k 10000 1 0" "1m-1p $objects 1 0" "1m-16p $objects 16 0" \
	"1m-64p $objects 64 0" "1m-1p-10kloose $objects 1 10000" "10k-10kloose 10000 1 10000"; do
	set -- $spec
	r=$(repo "$1" "$2" "$3" "$4")
	# One process, each figure the median of its rounds.
	declare -A v=()
	while read -r k val; do v[$k]=$val; done < <("$top/bench/lookup" "$r" 200000 "$rounds")
	row "$1 ($2 obj, $3 packs, $4 loose) | ${v[odbfs_miss]} | ${v[odbfs_hit]} | ${v[libgit2_miss]} | ${v[libgit2_miss_norefresh]} | ${v[libgit2_hit]} | $(ratio "${v[libgit2_miss]}" "${v[odbfs_miss]}") | $(ratio "${v[libgit2_hit]}" "${v[odbfs_hit]}")"
	unset v
done
r=$(repo 1m-64p "$objects" 64 0)
strace -f -c -o "$out/strace0" "$top/bench/lookup" --only-misses 0 "$r" 2>/dev/null
strace -f -c -o "$out/strace1" "$top/bench/lookup" --only-misses 100000 "$r" 2>/dev/null
c0=$(awk '$NF == "total" { print $4 }' "$out/strace0")
c1=$(awk '$NF == "total" { print $4 }' "$out/strace1")
say ""
say "Syscalls per miss (odbfs store, 64 packs, strace over 100 000 misses): $(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.5f", (b - a) / 100000 }')"
say ""

# 2. Tools.
content=$out/content
made "$content" "content repository" "$top/bench/gencontent.sh" "$content" 2000 3000
big=$(repo 1m-1p "$objects" 1 0)
say "## 2. Tools (seconds)"
say ""
row "input | git cat-file | odbfs-cat | ratio (git/odbfs)"
row "---|---|---|---"
for r in "$content" "$big"; do
	git -C "$r" cat-file --batch-all-objects --batch-check='%(objectname)' >"$out/ids"
	for mode in --batch-check --batch; do
		g=$(med "$rounds" sh -c "git -C '$r' cat-file $mode <'$out/ids'")
		o=$(med "$rounds" sh -c "'$top/odbfs-cat' $mode '$r' <'$out/ids'")
		row "$mode, all $(wc -l <"$out/ids") objects of $(basename "$r") | $g | $o | $(ratio "$g" "$o")"
	done
done
awk 'BEGIN { srand(3); for (i = 0; i < 200000; i++) { s = ""; for (j = 0; j < 5; j++) s = s sprintf("%08x", int(rand() * 4294967296)); print s } }' >"$out/missing"
g=$(med "$rounds" sh -c "git -C '$big' cat-file --batch-check <'$out/missing'")
o=$(med "$rounds" sh -c "'$top/odbfs-cat' --batch-check '$big' <'$out/missing'")
row "--batch-check, 200 000 missing ids, 1m-1p | $g | $o | $(ratio "$g" "$o")"
say ""

# 3. Through the mount.
say "## 3. Through the mount"
say ""
row "what | reference | odbfs | ratio (odbfs/reference; below 1: odbfs faster)"
row "---|---|---|---"
m=$out/mnt
floor=$out/floor
mkdir -p "$floor"
fusermount3 -u "$floor" 2>/dev/null || :
# The floor mounts with odbfs's options, so that only the work differs.
"$top/bench/floorfs" -o ro,default_permissions "$floor"
mnts+=("$floor")
head -20000 "$out/missing" >"$out/missing20k"
mount_at "$big" "$m" -o negative_timeout=0
# Rounds alternate between the two, so that drift on a shared machine
# weighs on both alike.
fls=() ods=()
for ((i = 0; i < rounds; i++)); do
	fls+=("$("$top/bench/fsbench" stat "$floor" 1 <"$out/missing20k" | cut -d' ' -f1)")
	ods+=("$("$top/bench/fsbench" stat "$m/objects" 1 <"$out/missing20k" | cut -d' ' -f1)")
done
fl=$(printf '%s\n' "${fls[@]}" | median)
od=$(printf '%s\n' "${ods[@]}" | median)
row "stat of a missing id, ns (reference: protocol floor, floorfs) | $fl | $od | $(ratio "$od" "$fl")"
fusermount3 -u "$m"
# Done with it: left mounted, the find for new repositories below meets it.
fusermount3 -u "$floor"
mount_at "$big" "$m"
"$top/bench/fsbench" stat "$m/objects" 1 <"$out/missing20k" >/dev/null
od2=$("$top/bench/fsbench" stat "$m/objects" 1 <"$out/missing20k" | cut -d' ' -f1)
row "stat of the same missing id again (negative entry cached), ns | - | $od2 | -"
fusermount3 -u "$m"

# Reading every object: as a backup tool does (readdir of objects/xx/,
# then each file: one read request, the readdir told the kernel the rest),
# and by id (a lookup, then a read).
git -C "$content" cat-file --batch-all-objects --batch-check='%(objectname)' | sed "s|^|$m/objects/|" >"$out/paths"
g=$(med "$rounds" sh -c "git -C '$content' cat-file --batch-all-objects --batch")
for how in walk id; do
	first=() second=()
	for ((i = 0; i < rounds; i++)); do
		mount_at "$content" "$m"
		for pass in first second; do
			if [ $how = walk ]; then
				t=$("$top/bench/fsbench" walk 1 "$m/objects" | cut -d' ' -f1)
			else
				t=$("$top/bench/fsbench" read 1 <"$out/paths" | cut -d' ' -f1)
			fi
			eval "$pass+=($t)"
		done
		fusermount3 -u "$m"
	done
	f=$(printf '%s\n' "${first[@]}" | median)
	s=$(printf '%s\n' "${second[@]}" | median)
	if [ $how = walk ]; then
		what="read every object, walking objects/"
	else
		what="read every object by id (objects/ID)"
	fi
	row "$what, first pass, s (git cat-file --batch-all-objects --batch) | $g | $f | $(ratio "$f" "$g")"
	row "$what, second pass (kernel cache), s | $g | $s | $(ratio "$s" "$g")"
done

for threads in 1 2 4 8; do
	mount_at "$content" "$m"
	p=$("$top/bench/fsbench" walk "$threads" "$m/objects" | cut -d' ' -f1)
	fusermount3 -u "$m"
	row "read every object walking objects/ with $threads readers, first pass, s | $g | $p | $(ratio "$p" "$g")"
done

# tar of a tree: first on a fresh mount (every round), then again.
head=$(git -C "$content" rev-parse HEAD)
ga=$(med "$rounds" sh -c "git -C '$content' archive --format=tar $head | cat")
cold=() warm=()
for ((i = 0; i < rounds; i++)); do
	mount_at "$content" "$m"
	cold+=("$(secs sh -c "tar -cf - -C '$m/commits/$head/tree' . | cat")")
	warm+=("$(secs sh -c "tar -cf - -C '$m/commits/$head/tree' . | cat")")
	fusermount3 -u "$m"
done
t=$(printf '%s\n' "${cold[@]}" | median)
row "tar of a commit's tree ($(git -C "$content" ls-tree -r "$head" | wc -l) files), fresh mount, s (git archive) | $ga | $t | $(ratio "$t" "$ga")"
t=$(printf '%s\n' "${warm[@]}" | median)
row "tar of the same tree again (kernel cache), s | $ga | $t | $(ratio "$t" "$ga")"

blob=$out/blob-$blob_mb
if [ ! -f "$blob/.done" ]; then
	echo "generating a $blob_mb MiB blob..." >&2
	rm -rf "$blob"
	git init -q --bare "$blob"
	head -c 1048576 /dev/urandom >"$out/chunk"
	for ((i = 0; i < blob_mb; i++)); do cat "$out/chunk"; done |
		git -C "$blob" hash-object -w --stdin >"$blob/id"
	touch "$blob/.done"
fi
id=$(cat "$blob/id")
mount_at "$blob" "$m"
g=$(med "$rounds" sh -c "git -C '$blob' cat-file blob $id")
c=$(med "$rounds" cat "$m/objects/$id")
row "cat of a $blob_mb MiB blob, s (git cat-file blob) | $g | $c | $(ratio "$c" "$g")"
# The rounds above after the first read the kernel's page cache; this is
# what the first reader of the blob waits for.
# floorfs serves a file of the same size from memory: what reading it
# through FUSE costs (requests, filling the page cache) with no work.
cold=() fcold=()
# Each unmounts before the other reads, so that both fill the page cache
# from the pages the other just freed, not from memory long free (which
# costs this VM a host fault per page).
fusermount3 -u "$m"
for ((i = 0; i < rounds; i++)); do
	mount_at "$blob" "$m"
	cold+=("$(secs cat "$m/objects/$id")")
	fusermount3 -u "$m"
	"$top/bench/floorfs" -o ro,default_permissions "$floor"
	fcold+=("$(secs cat "$floor/$blob_mb")")
	fusermount3 -u "$floor"
done
c=$(printf '%s\n' "${cold[@]}" | median)
f=$(printf '%s\n' "${fcold[@]}" | median)
row "cat of the same blob, fresh mount (nothing cached), s | $g | $c | $(ratio "$c" "$g")"
row "cat of the same blob, fresh mount, against the floor (floorfs: $blob_mb MiB from memory), s | $f | $c | $(ratio "$c" "$f")"
say ""

# 4. Cost.
say "## 4. Cost"
say ""
row "what | value"
row "---|---"
t=$(med "$rounds" sh -c "'$top/odbfs' '$big' '$m' && fusermount3 -u '$m'")
row "mount time, $objects-object repository (odbfs start to mounted), s | $t"
mount_at "$big" "$m"
pid=$(daemon_pid "$m")
row "daemon RSS after mounting $objects objects, MiB: total (anonymous) | $(rss_mb "$pid") ($(rss_mb "$pid" RssAnon))"
"$top/bench/fsbench" walk 2 "$m/objects" >/dev/null
row "daemon RSS after reading all $objects objects, MiB: total (anonymous) | $(rss_mb "$pid") ($(rss_mb "$pid" RssAnon))"
fusermount3 -u "$m"
say ""

# 5. Backup tools and walks against the floor.
. "$top/bench/backup.sh"
# 6. One daemon for a forge.
. "$top/bench/forge.sh"
# 7. Real scale.
. "$top/bench/scale.sh"
finish
