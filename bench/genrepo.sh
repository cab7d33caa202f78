#!/usr/bin/env bash
# genrepo.sh DIR OBJECTS [PACKS] [LOOSE]: a bare repository of OBJECTS small
# distinct blobs written by git fast-import in PACKS packs, plus LOOSE
# loose blobs written by git hash-object. Deterministic for given sizes.
set -euo pipefail
dir=$1 objects=$2 packs=${3:-1} loose=${4:-0}
rm -rf "$dir"
git init -q --bare "$dir"
per=$(( (objects + packs - 1) / packs ))
for ((p = 0; p < packs; p++)); do
	start=$((p * per)) end=$(( (p + 1) * per < objects ? (p + 1) * per : objects ))
	awk -v s="$start" -v e="$end" 'BEGIN {
		for (i = s; i < e; i++) {
			d = "object " i "\n"
			printf "blob\ndata %d\n%s\n", length(d), d
		}
	}' | git -C "$dir" fast-import --quiet --depth=0 \
		--big-file-threshold=1m >/dev/null
done
if [ "$loose" -gt 0 ]; then
	for ((i = 0; i < loose; i++)); do echo "loose $i"; done >"$dir/loose.txt"
	split -l 1 -a 6 "$dir/loose.txt" "$dir/l."
	ls "$dir"/l.* | git -C "$dir" hash-object -w --no-filters --stdin-paths >/dev/null
	rm -f "$dir"/l.* "$dir/loose.txt"
fi
