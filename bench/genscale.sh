#!/usr/bin/env bash
# genscale.sh DIR [SCALE]: a bare repository of git.git's size at SCALE 1
# (the default), for issue 28's rows (bench/scale.sh), and DIR-cg, its
# twin with a commit-graph (git clone --mirror --shared, then git
# commit-graph write --reachable): the same refs and objects.
#
#   200 000 x SCALE commits: a main line where every 20th commit merges a
#       side branch of 3 commits forked from main 16 commits before; each
#       other commit changes one file (one blob, the trees above it)
#   a source tree: a root of 50 entries (29 files, d00..d19, big/), each
#       dNN of 20 files and 8 subdirectories of 20 files (3 629 files),
#       and big/, 5 000 files, changed every 1 000 commits
#   1 000 x SCALE annotated tags on main, a branch topic-K for every
#       100th side branch, and 3 side branches never merged
#
# One git fast-import stream (python3 writes it; no randomness, so the
# same SCALE gives the same ids), then git repack -ad reusing fast-import's
# deltas and git pack-refs. DIR and DIR-cg are removed first.
#
# genscale.sh --forge DIR N: a forge for odbfs --root: N bare clones
# (DIR/rI.git, git clone --bare of one made by bench/gencontent.sh 2000
# 3000, so hard links to its pack), each with a commit of its own on main.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export GIT_AUTHOR_NAME=scale GIT_AUTHOR_EMAIL=scale@example.org \
	GIT_COMMITTER_NAME=scale GIT_COMMITTER_EMAIL=scale@example.org \
	GIT_AUTHOR_DATE='1700000000 +0000' GIT_COMMITTER_DATE='1700000000 +0000' \
	GIT_CONFIG_NOSYSTEM=1 HOME=/nonexistent

if [ "${1:-}" = --forge ]; then
	[ $# -eq 3 ] || { echo "usage: $0 --forge DIR N" >&2; exit 2; }
	dir=$2 n=$3
	rm -rf "$dir"
	mkdir -p "$dir"
	"$top/bench/gencontent.sh" "$dir/.base" 2000 3000
	tree=$(git -C "$dir/.base" rev-parse 'main^{tree}')
	for ((i = 0; i < n; i++)); do
		r=$dir/r$i.git
		git clone -q --bare "$dir/.base" "$r"
		c=$(git --git-dir="$r" commit-tree -p main -m "clone $i" "$tree")
		git --git-dir="$r" update-ref refs/heads/main "$c"
	done
	rm -rf "$dir/.base"
	exit 0
fi

[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 DIR [SCALE] | --forge DIR N" >&2; exit 2; }
dir=$1 scale=${2:-1}
rm -rf "$dir" "$dir-cg"
git init -q --bare --template= -b main "$dir"
python3 - "$scale" <<'EOF' | git -C "$dir" fast-import --quiet --active-branches=8
import sys

scale = float(sys.argv[1])
total = max(200, int(200000 * scale))
ntags = max(1, int(1000 * scale))
out = sys.stdout
w = out.write
filler = "".join("\tline %d of a source file, as long as most are;\n" % i
                 for i in range(4))

# The tree: 29 root files, d00..d19 of 20 files and s0..s7 of 20 each.
files = ["f%02d.c" % i for i in range(29)]
for d in range(20):
    files += ["d%02d/g%02d.c" % (d, i) for i in range(20)]
    for s in range(8):
        files += ["d%02d/s%d/h%02d.c" % (d, s, i) for i in range(20)]
big = ["big/e%04d.txt" % i for i in range(5000)]

def data(s):
    w("data %d\n%s\n" % (len(s), s))

def body(path, rev):
    return "%s\nrevision %d\n%s" % (path, rev, filler)

seq = 0    # commits so far; their marks are :1.. in order
blobmark = 10000000

def commit(ref, changes, frm=None, merge=None, msg=None):
    """One commit on ref; changes: (path, rev) inline or (path, ':mark')."""
    global seq
    seq += 1
    w("commit %s\nmark :%d\n" % (ref, seq))
    w("committer scale <scale@example.org> %d +0000\n" % (1600000000 + seq * 60))
    data(msg or "commit %d\n\nChanges %s.\n" % (seq, changes[0][0]))
    if frm:
        w("from :%d\n" % frm)
    if merge:
        w("merge :%d\n" % merge)
    for path, rev in changes:
        if isinstance(rev, str):
            w("M 100644 %s %s\n" % (rev, path))
        else:
            w("M 100644 inline %s\n" % path)
            data(body(path, rev))
    return seq

commit("refs/heads/main", [(p, 0) for p in files + big], msg="initial\n")
k = 7    # the file the next commit changes: a fixed walk over them
tags = 0
topics = 0
cycle = 0
while seq < total:
    cycle += 1
    fork = seq
    side = []
    for j in range(3):
        k = (k * 1103515245 + 12345) % 2147483648
        path = files[k % len(files)]
        blobmark += 1
        w("blob\nmark :%d\n" % blobmark)
        data(body(path, seq + 1))
        side.append((path, ":%d" % blobmark))
        tip = commit("refs/heads/side", [side[-1]], frm=fork if j == 0 else None)
    for j in range(16):
        k = (k * 1103515245 + 12345) % 2147483648
        ch = [(files[k % len(files)], seq + 1)]
        if (seq + 1) % 1000 == 0:
            ch.append((big[(seq // 1000) % len(big)], seq + 1))
        commit("refs/heads/main", ch)
    merged = commit("refs/heads/main", side, merge=tip,
                    msg="Merge branch 'side-%d'\n" % cycle)
    if cycle % 100 == 0:
        topics += 1
        w("reset refs/heads/topic-%d\nfrom :%d\n\n" % (topics, tip))
    while tags < ntags and seq >= (tags + 1) * total // ntags:
        tags += 1
        w("tag v%d.%d\nfrom :%d\n" % (tags // 100, tags % 100, merged))
        w("tagger scale <scale@example.org> %d +0000\n" % (1600000000 + seq * 60))
        data("release %d.%d\n" % (tags // 100, tags % 100))
for j in range(3):
    k = (k * 1103515245 + 12345) % 2147483648
    commit("refs/heads/wip-%d" % j, [(files[k % len(files)], seq + 1)],
           frm=seq - 40 * (j + 1))
w("reset refs/heads/side\n\n")    # fast-import keeps it otherwise
EOF
git -C "$dir" update-ref -d refs/heads/side 2>/dev/null || :
git -C "$dir" repack -adq --window=10 --depth=50
git -C "$dir" pack-refs --all
git clone -q --mirror --shared "$dir" "$dir-cg"
git -C "$dir-cg" commit-graph write --reachable
