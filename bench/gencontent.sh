#!/usr/bin/env bash
# gencontent.sh DIR COMMITS FILES: a repository with history, as a source
# tree has: FILES text files in nested directories, COMMITS commits each
# changing a few of them, repacked with deltas as git gc would.
set -euo pipefail
dir=$1 commits=$2 files=$3
rm -rf "$dir"
git init -q "$dir"
awk -v commits="$commits" -v files="$files" 'BEGIN {
	srand(42)
	for (c = 1; c <= commits; c++) {
		printf "commit refs/heads/main\n"
		printf "committer Bench <bench@example.com> %d +0000\n", 1700000000 + c
		printf "data <<EOM\ncommit %d\nEOM\n", c
		n = c == 1 ? files : 5
		for (k = 0; k < n; k++) {
			f = c == 1 ? k : int(rand() * files)
			body = ""
			lines = 20 + (f % 60)
			for (l = 0; l < lines; l++)
				body = body sprintf("file %d line %d rev %d %s\n", f, l,
					(l == (c % lines)) ? c : 0, "lorem ipsum dolor sit amet")
			printf "M 100644 inline d%d/s%d/file%d.txt\ndata %d\n%s\n",
				f % 17, f % 5, f, length(body), body
		}
	}
}' | git -C "$dir" fast-import --quiet
git -C "$dir" repack -adq --depth=50 --window=10
git -C "$dir" checkout -q main 2>/dev/null || git -C "$dir" symbolic-ref HEAD refs/heads/main
