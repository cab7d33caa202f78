#!/usr/bin/env bats
# Naming commits as git does, and HEAD and refs as the kernel keeps them:
# git's ~N and ^N after HEAD, a ref or an id are links to what git
# rev-parse names; HEAD and refs are cached by the kernel and still show
# a move, a new ref and a deleted one at once.

load lib

setup_file() {
	export FIX=$BATS_FILE_TMPDIR/repo
	local r=$FIX
	git init -q -b main "$r"
	git -C "$r" config gc.auto 0
	commit() { GIT_COMMITTER_DATE="$((1700000000 + $2)) +0000" \
		git -C "$r" commit -q --allow-empty -m "$1"; }
	commit c1 1; commit c2 2; commit c3 3
	git -C "$r" checkout -q -b side HEAD~1
	commit s1 4; commit s2 5
	git -C "$r" checkout -q -b other main~2
	commit o1 6
	git -C "$r" checkout -q main
	GIT_COMMITTER_DATE="1700000007 +0000" \
		git -C "$r" merge -q --no-edit -s ours side other -m octopus
	commit c4 8
	git -C "$r" tag -a -m "the tag" v1 HEAD~1
	git -C "$r" branch feature/deep/x HEAD~2
}

setup() {
	MNT=$BATS_TEST_TMPDIR/mnt
}

teardown() {
	unmount_odbfs "$MNT"
}

# rev_is NAME PATH UP: PATH under the mount links to UP/commits/<what git
# rev-parse says NAME is>.
rev_is() {
	local want
	want=$(git -C "$FIX" rev-parse --verify -q "$1^{commit}") || {
		echo "git knows no $1" >&2
		return 1
	}
	link_is "$MNT/$2" "$3commits/$want" || {
		echo "$2 -> $(readlink "$MNT/$2"), git says $want" >&2
		return 1
	}
}

@test "HEAD, a ref, a tag and an id with ~N and ^N link where git rev-parse says" {
	local head s n=0
	mount_odbfs "$FIX" "$MNT"
	head=$(git -C "$FIX" rev-parse HEAD)
	for s in '~0' '^0' '~' '^' '~1' '^1' '~2' '~1^2' '~1^3' '~1^2~1' \
		'~1^3^' '~~' '^^^' '~4' '~1^1~1^0~0' '^^2'; do
		git -C "$FIX" rev-parse -q --verify "HEAD$s" >/dev/null || continue
		rev_is "HEAD$s" "HEAD$s" ""
		rev_is "main$s" "refs/heads/main$s" "../../"
		rev_is "HEAD$s" "commits/$head$s" "../"
		rev_is "HEAD$s" "commits/${head:0:7}$s" "../"
		n=$((n + 1))
	done
	[ "$n" -ge 14 ]
	rev_is "v1^2~1" "refs/tags/v1^2~1" "../../"
	rev_is "feature/deep/x^" "refs/heads/feature/deep/x^" "../../../../"
	# What lies past a root or a last parent, or is no suffix at all.
	for s in '~9' '^4' '~1^4' '~1^2~9' '~x' '^{tree}' '~-1' '@{1}' '~1~'a; do
		! git -C "$FIX" rev-parse -q --verify "HEAD$s" >/dev/null 2>&1
		[ ! -e "$MNT/HEAD$s" ] && [ ! -L "$MNT/HEAD$s" ]
		[ ! -L "$MNT/refs/heads/main$s" ]
		[ ! -L "$MNT/commits/$head$s" ]
	done
	# Further than the bound: absent, and said once.
	[ ! -L "$MNT/HEAD~100001" ]
	[ ! -L "$MNT/HEAD~100001" ]
	[ "$(grep -c 'more than 100000 commits away' "$MNT.log")" -eq 1 ]
	# A merge's other parents as paths, and an ancestor far down.
	[ "$(cat "$MNT/HEAD~1^3/message")" = o1 ]
	[ "$(cat "$MNT/commits/$head~3/message")" = c2 ]
}

@test "HEAD~N follows HEAD when it moves" {
	local r=$BATS_TEST_TMPDIR/r
	git clone -q "$FIX" "$r"
	mount_odbfs "$r" "$MNT"
	link_is "$MNT/HEAD~1" "commits/$(git -C "$r" rev-parse HEAD~1)"
	git -C "$r" commit -q --allow-empty -m moved
	within_a_second link_is "$MNT/HEAD~1" "commits/$(git -C "$r" rev-parse HEAD~1)"
	within_a_second link_is "$MNT/refs/heads/main~1" \
		"../../commits/$(git -C "$r" rev-parse HEAD~1)"
}

@test "the kernel keeps HEAD and refs: a path through them is looked up once" {
	local before after
	mount_odbfs "$FIX" "$MNT"
	stat "$MNT/HEAD/message" "$MNT/refs/heads/feature/deep/x/message" >/dev/null
	before=$(stat_of "$MNT" lookups)
	for _ in $(seq 50); do
		stat "$MNT/HEAD/message" "$MNT/refs/heads/feature/deep/x/message" >/dev/null
	done
	after=$(stat_of "$MNT" lookups)
	echo "# 100 stats through HEAD and a ref: $((after - before - 1)) lookups" >&3
	# The stats file's own lookup is the one.
	[ $((after - before)) -le 2 ]
}

@test "cached HEAD and refs still show a move, a new ref, a deleted one and its directory at once" {
	local r=$BATS_TEST_TMPDIR/r old
	git clone -q "$FIX" "$r"
	git -C "$r" branch gone/away main~1
	git -C "$r" branch stays/here main~1
	mount_odbfs "$r" "$MNT"
	old=$(git -C "$r" rev-parse HEAD)
	# Into the kernel's cache, each.
	stat "$MNT/HEAD/tree" "$MNT/refs/heads/main/tree" "$MNT/refs/heads/gone/away" \
		"$MNT/refs/heads/stays/here" "$MNT/refs/tags/v1" >/dev/null
	ls "$MNT/refs/heads" >/dev/null
	git -C "$r" commit -q --allow-empty -m moved
	git -C "$r" branch -q -D gone/away
	git -C "$r" branch new/ref main~2
	git -C "$r" tag -f v1 main~3 >/dev/null
	within_a_second link_is "$MNT/refs/heads/main" \
		"../../commits/$(git -C "$r" rev-parse HEAD)"
	[ "$(git -C "$r" rev-parse HEAD)" != "$old" ]
	within_a_second test ! -L "$MNT/refs/heads/gone/away"
	within_a_second test ! -e "$MNT/refs/heads/gone"
	within_a_second link_is "$MNT/refs/heads/new/ref" \
		"../../../commits/$(git -C "$r" rev-parse main~2)"
	within_a_second link_is "$MNT/refs/tags/v1" \
		"../../commits/$(git -C "$r" rev-parse 'v1^{commit}')"
	link_is "$MNT/refs/heads/stays/here" "../../../commits/$(git -C "$r" rev-parse main~2)"
	[ "$(ls "$MNT/refs/heads" | tr "\n" " ")" = "main new stays " ]
	# HEAD to another branch.
	git -C "$r" checkout -q side
	within_a_second link_is "$MNT/HEAD" refs/heads/side
	[ "$(cat "$MNT/HEAD/message")" = s2 ]
	# Detached, then back.
	git -C "$r" checkout -q --detach main~1
	within_a_second link_is "$MNT/HEAD" "commits/$(git -C "$r" rev-parse HEAD)"
	git -C "$r" checkout -q main
	within_a_second link_is "$MNT/HEAD" refs/heads/main
}

@test "commits/ lists every commit, from the commit-graph or a walk, a new one at once, with lookup's inode numbers" {
	local r=$BATS_TEST_TMPDIR/r
	git clone -q "$FIX" "$r"
	git -C "$r" fetch -q origin '+refs/heads/*:refs/heads/*' 2>/dev/null || :
	mount_odbfs "$r" "$MNT"
	# No graph: a walk from the refs.
	[ ! -e "$r/.git/objects/info/commit-graph" ]
	diff <(ls "$MNT/commits") <(git -C "$r" rev-list --all | LC_ALL=C sort)
	# With one, and a commit newer than it.
	git -C "$r" commit-graph write --reachable
	git -C "$r" commit -q --allow-empty -m after-graph
	within_a_second grep -qx "$(git -C "$r" rev-parse HEAD)" \
		<(ls "$MNT/commits")
	diff <(ls "$MNT/commits") <(git -C "$r" rev-list --all | LC_ALL=C sort)
	# Each a link to by-id/, which a walk does not follow.
	/usr/bin/python3 - "$MNT/commits" <<-'PY'
	import os, sys
	n = 0
	for e in os.scandir(sys.argv[1]):
	    assert e.inode() == os.lstat(e.path).st_ino, e.name
	    assert e.is_symlink(), e.name
	    assert os.readlink(e.path) == "../by-id/" + e.name, e.name
	    assert e.is_dir(follow_symlinks=True), e.name
	    n += 1
	assert n >= 9, n
	PY
}

@test "refs nested past what a node key holds: each directory its own, no loop" {
	local r=$BATS_TEST_TMPDIR/long.git l c1 c2
	git clone -q --bare "$FIX" "$r"
	c1=$(git -C "$r" rev-parse main) c2=$(git -C "$r" rev-parse main~1)
	l=$(/usr/bin/python3 -c "print('/'.join(['x' * 200] * 22))")
	{
		echo "# pack-refs with: peeled fully-peeled sorted "
		echo "$c1 refs/heads/$l/a/one"
		echo "$c2 refs/heads/$l/b/two"
	} >"$r/packed-refs"
	[ "$(git -C "$r" for-each-ref "refs/heads/$l" | wc -l)" -eq 2 ]
	mount_odbfs "$r" "$MNT"
	# Walked a directory at a time: no path of this length fits a call.
	/usr/bin/python3 - "$MNT" "$l" "$c1" "$c2" <<-'PY'
	import os, sys
	mnt, l, c1, c2 = sys.argv[1:]
	fd = os.open(mnt + '/refs/heads', os.O_RDONLY)
	seen = {os.fstat(fd).st_ino}
	for comp in l.split('/'):
	    n = os.open(comp, os.O_RDONLY, dir_fd=fd)
	    os.close(fd)
	    fd = n
	    ino = os.fstat(fd).st_ino
	    assert ino not in seen, comp
	    seen.add(ino)
	assert sorted(os.listdir(fd)) == ['a', 'b'], os.listdir(fd)
	for d, name, c in (('a', 'one', c1), ('b', 'two', c2)):
	    sub = os.open(d, os.O_RDONLY, dir_fd=fd)
	    assert os.listdir(sub) == [name]
	    assert os.readlink(name, dir_fd=sub).endswith('commits/' + c)
	PY
}

# twin_commit REPO HEX N: write (loose) a commit whose id begins with the
# first N digits of HEX, found by varying its message, and print its id.
twin_commit() {
	local tree
	tree=$(git -C "$1" rev-parse 'HEAD^{tree}')
	python3 - "$1" "$2" "$3" "$tree" <<'PY'
import hashlib, subprocess, sys
repo, want, n, tree = sys.argv[1], sys.argv[2][:int(sys.argv[3])], int(sys.argv[3]), sys.argv[4]
for k in range(1 << 26):
    body = ("tree %s\nauthor A <a@b> 1700000000 +0000\ncommitter A <a@b> "
            "1700000000 +0000\n\ntwin %d\n" % (tree, k)).encode()
    if hashlib.sha1(b"commit %d\0" % len(body) + body).hexdigest().startswith(want):
        out = subprocess.run(["git", "-C", repo, "hash-object", "-t", "commit",
                              "-w", "--stdin"], input=body, capture_output=True,
                             check=True).stdout.decode().strip()
        print(out)
        break
PY
}

# twin_blob REPO HEX N: the same for a blob.
twin_blob() {
	python3 - "$1" "$2" "$3" <<'PY'
import hashlib, subprocess, sys
repo, want = sys.argv[1], sys.argv[2][:int(sys.argv[3])]
for k in range(1 << 26):
    body = b"twin blob %d\n" % k
    if hashlib.sha1(b"blob %d\0" % len(body) + body).hexdigest().startswith(want):
        print(subprocess.run(["git", "-C", repo, "hash-object", "-w", "--stdin"],
                             input=body, capture_output=True,
                             check=True).stdout.decode().strip())
        break
PY
}

@test "a prefix a blob shares names the commit, as git's committish does; one a new commit shares names nothing at once" {
	local r=$BATS_TEST_TMPDIR/twins c p b c2
	git clone -q --no-local "$FIX" "$r"
	c=$(git -C "$r" rev-parse HEAD)
	p=${c:0:5}
	b=$(twin_blob "$r" "$c" 5)
	[ "${b:0:5}" = "$p" ]
	# git: the bare prefix is ambiguous; as a committish it is the commit.
	! git -C "$r" rev-parse -q --verify "$p" >/dev/null 2>&1
	[ "$(git -C "$r" rev-parse "$p~0")" = "$c" ]
	[ "$(git -C "$r" rev-parse "$p~1")" = "$(git -C "$r" rev-parse HEAD~1)" ]
	mount_odbfs "$r" "$MNT"
	link_is "$MNT/commits/$p~0" "../commits/$c"
	link_is "$MNT/commits/$p~1" "../commits/$(git -C "$r" rev-parse HEAD~1)"
	link_is "$MNT/commits/$p" "$c"
	# objects/ takes every type: there the prefix is ambiguous.
	[ ! -e "$MNT/objects/$p" ]
	# A commit that arrives with the same prefix: now git finds it
	# ambiguous even as a committish, and so does the mount, though the
	# kernel looked the names up a moment ago.
	c2=$(twin_commit "$r" "$c" 5)
	[ "${c2:0:5}" = "$p" ]
	! git -C "$r" rev-parse -q --verify "$p~0" >/dev/null 2>&1
	within_a_second test ! -e "$MNT/commits/$p"
	[ ! -e "$MNT/commits/$p~0" ]
	[ ! -L "$MNT/commits/$p~1" ]
	# One digit more tells them apart again.
	if [ "${c:5:1}" != "${c2:5:1}" ]; then
		link_is "$MNT/commits/${c:0:6}" "$c"
		link_is "$MNT/commits/${c2:0:6}" "$c2"
	fi
	[ ! -s "$MNT.log" ]
}

@test "replacement refs are not applied: steps follow the parents a commit names, as git --no-replace-objects does" {
	local r=$BATS_TEST_TMPDIR/replaced
	git clone -q --no-local "$FIX" "$r"
	# Graft HEAD~1 onto the root: git replace writes a new commit and
	# refs/replace/<HEAD~1>.
	git -C "$r" replace --graft HEAD~1 "$(git -C "$r" rev-list --max-parents=0 HEAD | head -n 1)"
	[ "$(git -C "$r" rev-parse HEAD~2)" != "$(git -C "$r" --no-replace-objects rev-parse HEAD~2)" ]
	mount_odbfs "$r" "$MNT"
	for rev in HEAD~1 HEAD~2 HEAD~1^2 HEAD^^; do
		want=$(git -C "$r" --no-replace-objects rev-parse -q --verify "$rev") || {
			[ ! -e "$MNT/$rev" ]
			continue
		}
		link_is "$MNT/$rev" "commits/$want"
	done
	# The replaced commit is served as stored, its replacement by its own id.
	old=$(git -C "$r" rev-parse HEAD~1)
	cmp "$MNT/objects/$old" <(git -C "$r" --no-replace-objects cat-file commit "$old")
	[ -L "$MNT/refs/replace/$old" ]
	[ ! -s "$MNT.log" ]
}

@test "a commit-graph that names a commit the repository lacks: one log line, and commits/ lists what a walk finds" {
	local r=$BATS_TEST_TMPDIR/badgraph g x y off
	git clone -q --no-local "$FIX" "$r"
	git -C "$r" commit-graph write --reachable
	g=$r/.git/objects/info/commit-graph
	# Rewrite HEAD~3's id (no ref names it) in the id list, its last byte, so
	# that the list stays sorted and every check of its shape passes.
	x=$(git -C "$r" rev-parse HEAD~3)
	! git -C "$r" for-each-ref --format='%(objectname)' | grep -qx "$x"
	read -r y off < <(python3 - "$g" "$x" <<-'PY'
	import sys
	path, x = sys.argv[1], bytes.fromhex(sys.argv[2])
	data = bytearray(open(path, "rb").read())
	off = data.find(x)
	assert off > 0 and data.find(x, off + 1) < 0
	data[off + 19] ^= 1
	open(path, "wb").write(data)
	print(data[off:off + 20].hex(), off)
	PY
	)
	! git -C "$r" cat-file -e "$y"
	mount_odbfs "$r" "$MNT"
	want=$(git -C "$r" -c core.commitGraph=false rev-list --all | LC_ALL=C sort)
	[ "$(ls "$MNT/commits")" = "$want" ]
	[ "$(ls "$MNT/commits")" = "$want" ]
	grep -qx "$x" <(ls "$MNT/commits")
	[ "$(grep -c . "$MNT.log")" -eq 1 ]
	grep -q "$g: offset $off: names commit $y, which the repository lacks" "$MNT.log"
	# git writes the graph anew: trusted again, and nothing more logged.
	rm -f "$g"
	git -C "$r" commit-graph write --reachable
	sleep 0.3
	[ "$(ls "$MNT/commits")" = "$want" ]
	[ "$(grep -c . "$MNT.log")" -eq 1 ]
}

@test "a commit-graph whose parents and trees lie: steps follow the commits, trees/ lists theirs, one log line" {
	local r=$BATS_TEST_TMPDIR/lying g blob i
	git init -q -b main "$r"
	for i in $(seq 1 12); do
		echo "$i" >"$r/f"
		git -C "$r" add f
		GIT_COMMITTER_DATE="$((1700000000 + i)) +0000" git -C "$r" commit -q -m "c$i"
	done
	git -C "$r" commit-graph write --reachable
	g=$r/.git/objects/info/commit-graph
	blob=$(git -C "$r" rev-parse HEAD:f)
	# Every commit's first parent made itself, and three trees a blob.
	python3 - "$g" "$blob" <<-'PY'
	import struct, sys
	path, blob = sys.argv[1], bytes.fromhex(sys.argv[2])
	b = bytearray(open(path, "rb").read())
	chunks = {bytes(b[8 + 12 * i:12 + 12 * i]):
	          struct.unpack(">Q", b[12 + 12 * i:20 + 12 * i])[0]
	          for i in range(b[6] + 1)}
	cdat = chunks[b"CDAT"]
	n = (cdat - chunks[b"OIDL"]) // 20
	for i in range(n):
	    b[cdat + 36 * i + 20:cdat + 36 * i + 24] = struct.pack(">I", i)
	for i in (0, 4, 8):
	    b[cdat + 36 * i:cdat + 36 * i + 20] = blob
	open(path, "wb").write(b)
	PY
	mount_odbfs "$r" "$MNT"
	for i in 1 2 5 11; do
		link_is "$MNT/HEAD~$i" \
			"commits/$(git -C "$r" -c core.commitGraph=false rev-parse "HEAD~$i")"
	done
	diff <(ls "$MNT/trees") \
		<(git -C "$r" -c core.commitGraph=false log --format=%T | LC_ALL=C sort -u)
	ls "$MNT/trees" >/dev/null
	[ "$(grep -c "the commit-graph names for 3 commits a tree that is none" "$MNT.log")" -eq 1 ]
	[ "$(grep -c . "$MNT.log")" -eq 1 ]
}
