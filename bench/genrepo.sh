#!/usr/bin/env bash
# genrepo.sh DIR OBJECTS [PACKS] [LOOSE]: a bare repository of OBJECTS small
# distinct blobs written by one git fast-import in PACKS packs (a checkpoint
# ends each), plus LOOSE loose blobs written by git hash-object.
# Deterministic for given sizes.
set -euo pipefail
dir=$1 objects=$2 packs=${3:-1} loose=${4:-0}
rm -rf "$dir"
git init -q --bare "$dir"
dir=$(cd "$dir" && pwd)	# git -C below must find the same files
awk -v n="$objects" -v packs="$packs" 'BEGIN {
	per = int((n + packs - 1) / packs)
	for (i = 0; i < n; i++) {
		if (i > 0 && i % per == 0)
			print "checkpoint\n"
		d = "object " i "\n"
		printf "blob\ndata %d\n%s\n", length(d), d
	}
}' | git -C "$dir" fast-import --quiet --depth=0 --big-file-threshold=1m >/dev/null
if [ "$loose" -gt 0 ]; then
	for ((i = 0; i < loose; i++)); do echo "loose $i"; done >"$dir/loose.txt"
	split -l 1 -a 6 "$dir/loose.txt" "$dir/l."
	ls "$dir"/l.* | git -C "$dir" hash-object -w --no-filters --stdin-paths >/dev/null
	rm -f "$dir"/l.* "$dir/loose.txt"
fi
