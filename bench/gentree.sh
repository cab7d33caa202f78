#!/usr/bin/env bash
# gentree.sh DIR SRC: a repository whose one commit holds a copy of SRC
# (real files: a source tree's shape and bytes, e.g. /usr/include), with
# fixed author and dates, packed as git gc would.
set -euo pipefail
dir=$1 src=$2
rm -rf "$dir"
mkdir -p "$dir"
cp -a "$src/." "$dir/"
cd "$dir"
git init -q
git add -A
GIT_AUTHOR_DATE='1700000000 +0000' GIT_COMMITTER_DATE='1700000000 +0000' \
	git -c user.name=Bench -c user.email=bench@example.com \
	commit -q -m "a copy of $src"
git repack -adq
git gc -q --prune=now
