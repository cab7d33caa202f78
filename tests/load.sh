#!/usr/bin/env bash
# load.sh DAEMON SECONDS: 8 parallel readers over the objects of a
# repository with history, while git keeps writing and repacking it, for
# SECONDS; for the sanitizer builds (make asan, make tsan). Fails on any
# sanitizer report, any wrong byte, or any error reading an object.
#
# Beside it, a second daemon serves a copy whose pack and loose files are
# truncated and rewritten in place while two readers read it: there a read
# may fail, but none may give a wrong byte, and the daemon must live.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
daemon=$1 seconds=${2:-60}
work=$(mktemp -d)
trap 'fusermount3 -u "$work/mnt" 2>/dev/null || :; rm -rf "$work"' EXIT
export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@example.com
export GIT_COMMITTER_NAME=c GIT_COMMITTER_EMAIL=c@example.com
"$top/bench/gencontent.sh" "$work/repo" 300 400
# Objects larger than one read reply, so that readers are kept and shared
# between reads (fs/readers.c), and one larger than odbfs holds in memory,
# so that it is streamed.
for kb in 200 1000 3000 10000; do
	head -c $((kb * 1024)) /dev/urandom >"$work/repo/big-$kb"
done
git -C "$work/repo" add -- 'big-*'
git -C "$work/repo" commit -qm "big blobs"
git -C "$work/repo" cat-file --batch-all-objects --batch-check='%(objectname) %(objecttype)' >"$work/ids"
mkdir "$work/want" "$work/mnt"
while read -r id type; do
	git -C "$work/repo" cat-file "$type" "$id" >"$work/want/$id"
done <"$work/ids"
git clone -q --no-hardlinks --mirror "$work/repo" "$work/faulty"
git -C "$work/faulty" repack -adq
# Loose copies of the big blobs too, to be cut short as they stream.
for id in $(git -C "$work/repo" rev-parse HEAD:big-3000 HEAD:big-10000); do
	git -C "$work/repo" cat-file blob "$id" |
		git -C "$work/faulty" hash-object -w --stdin >/dev/null
done
mkdir "$work/fmnt" "$work/saved"
"$daemon" -f "$work/repo" "$work/mnt" 2>"$work/log" 3>&- &
pid=$!
"$daemon" -f "$work/faulty" "$work/fmnt" 2>"$work/flog" 3>&- &
fpid=$!
for _ in $(seq 1 100); do
	mountpoint -q "$work/mnt" && mountpoint -q "$work/fmnt" && break
	sleep 0.1
done
end=$((SECONDS + seconds))
big=$(git -C "$work/repo" rev-parse HEAD:big-200 HEAD:big-1000 HEAD:big-3000 HEAD:big-10000)
for r in $(seq 1 6); do
	(
		bad=0 n=0
		while [ $SECONDS -lt $end ]; do
			for id in $(shuf -n 50 "$work/ids" | cut -d' ' -f1) $big; do
				n=$((n + 1))
				cmp -s "$work/mnt/objects/$id" "$work/want/$id" || bad=$((bad + 1))
				ls "$work/mnt/trees/$id" >/dev/null 2>&1 || :
			done
		done
		echo "$n $bad" >"$work/reader.$r"
	) &
done
# Two walkers: a directory listed, then its files read in order, which
# fs/ahead.c pushes ahead of them, while the kernel drops nodes below.
for r in 7 8; do
	(
		bad=0 n=0
		while [ $SECONDS -lt $end ]; do
			d=$work/mnt/objects/$(printf '%02x' $((RANDOM % 256)))
			ls -l "$d" >/dev/null 2>&1 || continue
			for id in $(ls -U "$d" 2>/dev/null); do
				[ -f "$work/want/$id" ] || continue
				n=$((n + 1))
				cmp -s "$d/$id" "$work/want/$id" || bad=$((bad + 1))
			done
		done
		echo "$n $bad" >"$work/reader.$r"
	) &
done
for r in 9 10; do
	(
		bad=0 n=0 failed=0
		while [ $SECONDS -lt $end ]; do
			for id in $(shuf -n 20 "$work/ids" | cut -d' ' -f1) $big; do
				n=$((n + 1))
				st=0
				cmp -s "$work/fmnt/objects/$id" "$work/want/$id" 2>/dev/null || st=$?
				[ "$st" -eq 1 ] && bad=$((bad + 1))
				[ "$st" -eq 2 ] && failed=$((failed + 1))
			done
		done
		echo "$n $bad $failed" >"$work/faulty.$r"
	) &
done
# The faults: a pack file or loose object truncated to a random length,
# left so for a moment, then rewritten in place (same inode) by cp.
(
	files=$(find "$work/faulty/objects" -type f \( -name '*.pack' -o -name '*.idx' -o -path '*/objects/??/*' \))
	while [ $SECONDS -lt $end ]; do
		f=$(echo "$files" | shuf -n 1)
		cp "$f" "$work/saved/f"
		truncate -s $((RANDOM * $(stat -c %s "$f") / 32768)) "$f"
		sleep 0.$((RANDOM % 3))
		cp "$work/saved/f" "$f"
	done
) &
while [ $SECONDS -lt $end ]; do
	echo 2 >/proc/sys/vm/drop_caches 2>/dev/null || :
	git -C "$work/repo" commit -q --allow-empty -m churn
	git -C "$work/repo" repack -adq
	git -C "$work/repo" prune-packed
done
wait $(jobs -p | grep -vE "^($pid|$fpid)$") 2>/dev/null || :
fusermount3 -u "$work/mnt"
fusermount3 -u "$work/fmnt"
wait "$pid" || { echo "load: daemon exited with $?"; cat "$work/log"; exit 1; }
wait "$fpid" || { echo "load: daemon under faults exited with $?"; cat "$work/flog"; exit 1; }
reads=$(cat "$work"/reader.* | awk '{ n += $1; b += $2 } END { print n, b }')
faulty=$(cat "$work"/faulty.* | awk '{ n += $1; b += $2; f += $3 } END { print n, b, f }')
echo "load: $daemon: reads and wrong or failed: $reads"
echo "load: under faults: reads, wrong, failed: $faulty" \
	"($(grep -c . "$work/flog" || :) log lines)"
for log in "$work/log" "$work/flog"; do
	if grep -qE "ERROR: (Address|Thread|Leak)Sanitizer|runtime error|WARNING: ThreadSanitizer" "$log"; then
		grep -A30 -E "Sanitizer|runtime error" "$log" | head -80
		exit 1
	fi
done
faulty=${faulty#* }
[ "${reads#* }" -eq 0 ] && [ "${faulty% *}" -eq 0 ]
