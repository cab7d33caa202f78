#!/usr/bin/env bats
# Shallow and partial clones: what git has not got shows as git shows it.
# A shallow clone's boundary commit has no parent link (git log stops
# there); a blob a partial clone's promisor remote holds is listed, as git
# ls-tree lists it, and its lookup is EIO with one log line, so that tar
# and backup tools report it instead of taking it for a file removed.

load lib

setup() {
	MNT=$BATS_TEST_TMPDIR/mnt
	SRC=$BATS_TEST_TMPDIR/src
	git init -q -b main "$SRC"
	mkdir -p "$SRC/d"
	echo a >"$SRC/d/a"
	echo bb >"$SRC/b"
	ln -s b "$SRC/l"
	git -C "$SRC" add -A
	git -C "$SRC" commit -q -m one
	echo c >"$SRC/c"
	git -C "$SRC" add c
	git -C "$SRC" commit -q -m two
	git -C "$SRC" commit -q --allow-empty -m three
	git -C "$SRC" config uploadpack.allowFilter true
}

teardown() {
	unmount_odbfs "$MNT"
}

@test "a shallow clone: the boundary commit has no parent, as git log says" {
	local r=$BATS_TEST_TMPDIR/shallow b
	git clone -q --depth 2 "file://$SRC" "$r"
	b=$(git -C "$r" rev-parse HEAD~1)
	[ "$(git -C "$r" log --format=%P -1 "$b")" = "" ]	# git: no parents
	mount_odbfs "$r" "$MNT"
	link_is "$MNT/HEAD/parent" "../$b"
	[ ! -L "$MNT/commits/$b/parent" ]
	! ls "$MNT/commits/$b" | grep -qx parent
	[ "$(ls "$MNT/commits/$b" | tr '\n' ' ')" = "author committer message parents raw tree " ]
	# The object still says what its parent was.
	[ "$(cat "$MNT/commits/$b/parents")" = "$(git -C "$SRC" rev-parse HEAD~2)" ]
	[ ! -L "$MNT/HEAD~2" ]
	! git -C "$r" rev-parse -q --verify HEAD~2 >/dev/null
	find "$MNT/HEAD/" -xdev >/dev/null
	[ ! -s "$MNT.log" ]
}

@test "a shallow boundary whose parent is at hand: git stops there, and so does the mount" {
	local r=$BATS_TEST_TMPDIR/cut b p
	# A full clone whose shallow file names HEAD~1, as a fetch --depth
	# into a repository that had more leaves it: the parent is here.
	git clone -q --no-local "$SRC" "$r"
	git -C "$r" commit-graph write --reachable
	b=$(git -C "$r" rev-parse HEAD~1)
	p=$(git -C "$r" rev-parse HEAD~2)
	echo "$b" >"$r/.git/shallow"
	[ "$(git -C "$r" log --format=%P -1 "$b")" = "" ]
	! git -C "$r" rev-parse -q --verify HEAD~2 >/dev/null
	git -C "$r" cat-file -e "$p"
	mount_odbfs "$r" "$MNT"
	link_is "$MNT/HEAD~1" "commits/$b"
	[ ! -e "$MNT/HEAD~2" ]
	[ ! -e "$MNT/commits/$b~1" ]
	[ ! -e "$MNT/commits/$b^1" ]
	[ ! -L "$MNT/commits/$b/parent" ]
	# What git rev-list --all lists, though the graph names all three.
	[ "$(ls "$MNT/commits")" = "$(git -C "$r" rev-list --all | sort)" ]
	[ "$(ls "$MNT/trees")" = "$(git -C "$r" log --all --format=%T | sort -u)" ]
	# git fetch --unshallow removes the file: history reaches past it.
	rm "$r/.git/shallow"
	within_a_second test -L "$MNT/HEAD~2"
	link_is "$MNT/HEAD~2" "commits/$p"
	[ "$(ls "$MNT/commits")" = "$(git -C "$r" rev-list --all | sort)" ]
	[ "$(ls "$MNT/commits" | wc -l)" -eq 3 ]
	[ ! -s "$MNT.log" ]
}

@test "a shallow file with lines that are no ids: each logged with its offset, the rest used" {
	local r=$BATS_TEST_TMPDIR/bad b
	git clone -q --no-local "$SRC" "$r"
	b=$(git -C "$r" rev-parse HEAD~1)
	printf 'not an id\n%s\nzz\n' "$b" >"$r/.git/shallow"
	mount_odbfs "$r" "$MNT"
	[ -L "$MNT/HEAD~1" ]
	[ ! -e "$MNT/HEAD~2" ]
	[ "$(grep -c 'shallow: offset' "$MNT.log")" -eq 2 ]
	grep -q "$r/.git/shallow: offset 0: not an object id" "$MNT.log"
	grep -q "$r/.git/shallow: offset $((10 + 41)): not an object id" "$MNT.log"
}

@test "a partial clone: blobs the promisor holds are listed, and EIO with one log line each" {
	local r=$BATS_TEST_TMPDIR/partial blob
	git clone -q --no-checkout --filter=blob:none "file://$SRC" "$r"
	blob=$(git -C "$SRC" rev-parse HEAD:b)
	GIT_NO_LAZY_FETCH=1 run git -C "$r" cat-file -e "$blob"
	[ "$status" -ne 0 ]
	mount_odbfs "$r" "$MNT"
	# Listed as git ls-tree lists them...
	[ "$(ls "$MNT/HEAD/tree" | tr '\n' ' ')" = "b c d l " ]
	[ "$(ls "$MNT/HEAD/tree/d")" = a ]
	# ...but not there to read: EIO, not ENOENT ("removed").
	run stat "$MNT/HEAD/tree/b"
	[ "$status" -ne 0 ]
	[[ $output == *"Input/output error"* ]]
	run tar -cf - -C "$MNT/HEAD/tree" .
	[ "$status" -ne 0 ]
	[[ $output == *"./b: Cannot stat: Input/output error"* ]]
	[[ $output == *"./d/a: Cannot stat: Input/output error"* ]]
	! [[ $output == *"removed"* ]]
	run cat "$MNT/HEAD/tree/l"
	[ "$status" -ne 0 ]
	[ "$(grep -c "tree/b: $blob is not in the repository" "$MNT.log")" -eq 1 ]
	[ "$(grep -c 'is not in the repository' "$MNT.log")" -eq 4 ]
	# What the clone has is served as git has it.
	[ -d "$MNT/HEAD/tree/d" ]
	check_mount_objects "$r" "$MNT"
}
