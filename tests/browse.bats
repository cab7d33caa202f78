#!/usr/bin/env bats
# Browsing: HEAD, refs/, commits/<id>/, trees/<id>/ and abbreviated ids.
# One fixture repository, built once with real git at fixed dates, is read
# through the mount and compared with git ls-tree, git archive, git
# cat-file and git for-each-ref.

load lib

# fixture_commit I: commit number I of the fixture's main line. Every
# commit has nested directories, executables, symlinks (relative, absolute,
# dangling, to a directory), an empty file, names with spaces, a newline
# and bytes that are not UTF-8, two directories with identical content and,
# from commit 5 on, a submodule entry. Author and committer times differ.
fixture_commit() {
	local i=$1 long
	(
		set -e
		GIT_AUTHOR_DATE="$((1700000000 + i * 3600)) +0000"
		GIT_COMMITTER_DATE="$((1700000000 + i * 3600 + 600 + i)) +0100"
		export GIT_AUTHOR_DATE GIT_COMMITTER_DATE
		mkdir -p a/b/c bin "dir with space" dup1 dup2 $'dir\xff'
		if [ ! -f README ]; then
			seq 1 200 | sed 's/^/line /' >README
		fi
		sed -i "$((i * 7 % 200 + 1))s/\$/ (commit $i)/" README
		echo "top $((i % 4))" >a/top.txt
		echo "mid $i" >a/b/mid.txt
		seq 1 $((i * 10)) >a/b/c/deep.txt
		ln -sfn ../../top.txt a/b/c/up
		printf '#!/bin/sh\necho %d\n' "$i" >bin/run.sh
		chmod 755 bin/run.sh
		echo "same bytes, mode flips" >flip
		if [ $((i % 2)) -eq 0 ]; then chmod 755 flip; else chmod 644 flip; fi
		if [ $((i % 2)) -eq 0 ]; then
			ln -sfn a/b/c/deep.txt link
		else
			ln -sfn README link
		fi
		ln -sfn "no such/target" dangling
		ln -sfn /etc/passwd abs
		ln -sfn a/b adir
		: >empty
		echo "spaces $((i % 3))" >"with space.txt"
		echo "inner $i" >"dir with space/inner file"
		printf 'latin-1 name %d\n' "$i" >$'caf\xe9'
		echo "under a non-UTF-8 directory" >$'dir\xff/x'
		printf 'two\nlines\n' >$'new\nline'
		echo dash >./-dash
		long=$(printf 'L%.0s' $(seq 1 255))
		echo "longest name" >"$long"
		for d in dup1 dup2; do
			echo "x $((i / 5))" >$d/x
			echo "y" >$d/y
		done
		printf '\000\001\002\377binary %d\000' "$i" >bin.dat
		if [ ! -f big ] || [ "$i" -eq 20 ]; then
			seq "$i" 40000 >big
		fi
		if [ "$i" -lt 15 ]; then
			echo "gone at 15" >a/gone.txt
		else
			rm -f a/gone.txt
		fi
		git add -A
		if [ "$i" -ge 5 ]; then
			git update-index --add --cacheinfo "160000,$SUBMODULE_ID,sub"
		fi
		git commit -q -m "commit $i"
	)
}

# build_fixture REPO: ~30 commits, a side branch merged with --no-ff, an
# empty multi-paragraph commit, a hand-made commit with extra headers,
# nested branches, every kind of tag, packed and loose refs, and a few
# thousand extra blobs so that some 4-digit prefixes are ambiguous.
build_fixture() {
	local repo=$1 i
	git init -q -b main "$repo" &&
		git -C "$repo" config gc.auto 0 || return 1
	cd "$repo" || return 1
	SUBMODULE_ID=0000000000000000000000000000000000000000
	fixture_commit 1 || return 1
	SUBMODULE_ID=$(git rev-parse HEAD)
	for i in $(seq 2 20); do fixture_commit "$i" || return 1; done
	git checkout -q -b side HEAD~2 || return 1
	for i in 1 2; do
		echo "side $i" >side.txt
		git add side.txt
		GIT_AUTHOR_DATE="$((1700100000 + i)) +0000" \
			GIT_COMMITTER_DATE="$((1700100000 + i * 60)) +0000" \
			git commit -q -m "side $i" || return 1
	done
	git checkout -q main || return 1
	for i in $(seq 21 24); do fixture_commit "$i" || return 1; done
	GIT_AUTHOR_DATE="1700200000 +0000" GIT_COMMITTER_DATE="1700200100 +0000" \
		git merge -q --no-ff -m "Merge branch side" side || return 1
	for i in $(seq 25 30); do fixture_commit "$i" || return 1; done
	git branch feature/x/y HEAD~4
	git branch feature/z HEAD~6
	git tag light HEAD~5
	git tag -a -m "version one" v1 HEAD~10
	git tag -a -m "a tag of a tag" v1-outer v1 2>/dev/null
	git pack-refs --all || return 1
	# After packing: loose refs, and main moves past its packed value.
	printf 'Subject of an empty commit\n\nFirst paragraph,\nstill first.\n\n  Indented second paragraph.  \n\n\nThird after two blank lines, no newline at the end' \
		>"$BATS_FILE_TMPDIR/msg"
	GIT_AUTHOR_DATE="1700300000 +0000" GIT_COMMITTER_DATE="1700300500 -0700" \
		git commit -q --allow-empty --cleanup=verbatim \
		-F "$BATS_FILE_TMPDIR/msg" || return 1
	git tag treetag 'HEAD^{tree}'
	git tag blobtag HEAD:README
	git tag -a -m "an annotated tag of a tree" annotree 'HEAD^{tree}'
	git update-ref refs/remotes/origin/main HEAD~1
	git symbolic-ref refs/remotes/origin/HEAD refs/remotes/origin/main
	{
		printf 'tree %s\nparent %s\n' "$(git rev-parse 'HEAD^{tree}')" \
			"$(git rev-parse HEAD)"
		printf 'author A U Thor <author@example.com> 1700400000 +0000\n'
		printf 'committer C O Mitter <committer@example.com> 1700400999 +0530\n'
		printf 'encoding ISO-8859-1\n'
		printf 'gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n'
		printf '\nSigned-looking caf\351\n\nbody without a final newline'
	} >"$BATS_FILE_TMPDIR/signed"
	i=$(git hash-object -t commit -w "$BATS_FILE_TMPDIR/signed") &&
		git update-ref refs/heads/signed "$i" || return 1
	for i in $(seq 1 3000); do
		printf 'blob\ndata <<EOF\nfiller blob %d\nEOF\n' "$i"
	done | git fast-import --quiet || return 1
}

setup_file() {
	export FIX=$BATS_FILE_TMPDIR/repo
	(build_fixture "$FIX") >&2
	export ROOT=$(git -C "$FIX" rev-list --max-parents=0 main)
	export MERGE=$(git -C "$FIX" rev-list --min-parents=2 -n 1 main)
	export SIGNED=$(git -C "$FIX" rev-parse signed)
	export EMPTYMSG=$(git -C "$FIX" rev-parse main)
}

setup() {
	mnt=$BATS_TEST_TMPDIR/mnt
}

teardown() {
	cd / && unmount_odbfs "$mnt"
}

# in_fix ARGS...: git in the fixture.
in_fix() {
	git -C "$FIX" "$@"
}

# enoent PATH: PATH does not exist, and stat says so with ENOENT.
enoent() {
	local out
	if out=$(LC_ALL=C stat -- "$1" 2>&1); then
		echo "exists but should not: $1" >&2
		return 1
	fi
	[[ $out == *"No such file or directory"* ]] ||
		{ echo "not ENOENT: $out" >&2; return 1; }
}

# check_tree_entries REPO MNT COMMIT: every entry git ls-tree -r -t gives
# for COMMIT has, under MNT/commits/COMMIT/tree, the file type, permission
# bits, size, content or link target git gives it, and the mount holds no
# other entry.
check_tree_entries() {
	local repo=$1 root=$2/commits/$3/tree rec meta path mode type id size p
	local got want bad=0 n=0 types=$BATS_TEST_TMPDIR/types
	# Bytes, not characters: in a UTF-8 locale bash's read -d '' swallows
	# the record after a name that ends in a byte like \xe9.
	local LC_ALL=C
	: >"$types"
	while IFS= read -r -d '' rec; do
		n=$((n + 1))
		meta=${rec%%$'\t'*} path=${rec#*$'\t'}
		read -r mode type id size <<<"$meta"
		p=$root/$path
		case $mode in
		040000 | 160000) printf 'd %s\0' "$path" ;;
		120000) printf 'l %s\0' "$path" ;;
		*) printf 'f %s\0' "$path" ;;
		esac >>"$types"
		case $mode in
		100644 | 100755)
			if [ "$size" -eq 0 ]; then
				want="regular empty file|$size"
			else
				want="regular file|$size"
			fi
			[ "$mode" = 100644 ] && want="$want|644" ||
				want="$want|755"
			got=$(stat -c '%F|%s|%a' -- "$p")
			if ! git -C "$repo" cat-file blob "$id" | cmp -s - "$p"; then
				echo "content differs: $path" >&2
				bad=$((bad + 1))
			fi
			;;
		120000)
			want="symbolic link|$size"
			got=$(stat -c '%F|%s' -- "$p")
			if ! cmp -s <(git -C "$repo" cat-file blob "$id") \
			    <(readlink -n -- "$p"); then
				echo "link target differs: $path" >&2
				bad=$((bad + 1))
			fi
			;;
		040000)
			want="directory|755"
			got=$(stat -c '%F|%a' -- "$p")
			;;
		160000)
			want="directory|755|"
			got="$(stat -c '%F|%a' -- "$p")|$(ls -A -- "$p")"
			;;
		*)
			want="a mode git writes" got=$mode
			;;
		esac
		if [ "$got" != "$want" ]; then
			echo "$path ($mode): got '$got', want '$want'" >&2
			bad=$((bad + 1))
		fi
	done < <(git -C "$repo" ls-tree -r -t -l -z "$3")
	# Nothing more, nothing less, each with its type in the listing.
	if ! cmp -s <(LC_ALL=C sort -z "$types") \
	    <(find "$root" -mindepth 1 -printf '%y %P\0' | LC_ALL=C sort -z); then
		echo "the entries or types listed differ from git ls-tree -r -t" >&2
		bad=$((bad + 1))
	fi
	[ "$n" -gt 0 ] || { echo "no entries for $3" >&2; return 1; }
	[ "$bad" -eq 0 ]
}

# check_archive REPO MNT COMMIT: commits/COMMIT/tree equals git archive.
check_archive() {
	local want=$BATS_TEST_TMPDIR/archive-$3
	mkdir -p "$want"
	git -C "$1" archive "$3" | tar -x -C "$want" || return 1
	diff -r --no-dereference "$2/commits/$3/tree" "$want"
}

@test "tree entries of several commits have git's type, mode, size, content and target" {
	mount_odbfs "$FIX" "$mnt"
	for c in HEAD HEAD~9 HEAD~20 "$ROOT" "$MERGE" side; do
		check_tree_entries "$FIX" "$mnt" "$(in_fix rev-parse "$c")"
	done
	# The fixture holds what the checks are meant to see.
	head=$(in_fix rev-parse HEAD)
	[ -d "$mnt/commits/$head/tree/sub" ]
	[ -f "$mnt/commits/$head/tree/"$'caf\xe9' ]
	[ -f "$mnt/commits/$head/tree/dir with space/inner file" ]
	[ -x "$mnt/commits/$head/tree/bin/run.sh" ]
	[ "$(readlink "$mnt/commits/$head/tree/abs")" = /etc/passwd ]
}

@test "tree entries carry user.git.type, user.git.id and user.git.mode" {
	mount_odbfs "$FIX" "$mnt"
	head=$(in_fix rev-parse HEAD)
	t=$mnt/commits/$head/tree
	# path, type, mode ("" for a symlink: the kernel serves no user.*
	# attributes on symlinks, so it cannot be asked).
	while IFS='|' read -r path type mode; do
		if [ "$type" = commit ]; then
			id=$(in_fix ls-tree HEAD "$path" | awk '{ print $3 }')
		else
			id=$(in_fix rev-parse "HEAD:$path")
		fi
		echo "# $path" >&2
		[ "$(getfattr --only-values -n user.git.type "$t/$path")" = "$type" ]
		[ "$(getfattr --only-values -n user.git.id "$t/$path")" = "$id" ]
		[ "$(getfattr --only-values -n user.git.mode "$t/$path")" = "$mode" ]
	done <<-EOF
		README|blob|100644
		bin/run.sh|blob|100755
		flip|blob|$(in_fix ls-tree HEAD flip | cut -c1-6)
		a|tree|040000
		a/b/c|tree|040000
		a/b/c/deep.txt|blob|100644
		sub|commit|160000
	EOF
	# The same blob with another mode elsewhere says its own mode.
	prev=$(in_fix rev-parse HEAD~2)
	[ "$(getfattr --only-values -n user.git.mode \
		"$mnt/commits/$prev/tree/flip")" != \
		"$(getfattr --only-values -n user.git.mode "$t/flip")" ]
}

@test "rsync -aX copies a tree and refs/ with exit 0; symlinks list no user.git.*" {
	mount_odbfs "$FIX" "$mnt"
	head=$(in_fix rev-parse HEAD)
	t=$mnt/commits/$head/tree
	# Files and directories keep their attributes; symlinks list none.
	[ -n "$(getfattr -d -m - "$t/README")" ]
	[ -n "$(getfattr -d -m - "$t/a")" ]
	[ -z "$(getfattr -h -d -m - "$t/link")" ]
	[ -z "$(getfattr -h -d -m - "$mnt/refs/heads/main")" ]
	copy=$BATS_TEST_TMPDIR/copy
	mkdir -p "$copy"
	rsync -aX "$t/" "$copy/tree/"
	rsync -aX "$mnt/refs/" "$copy/refs/"
	check_archive "$FIX" "$mnt" "$head"
	diff -r --no-dereference "$copy/tree" "$BATS_TEST_TMPDIR/archive-$head"
	[ "$(getfattr --only-values -n user.git.id "$copy/tree/README")" = \
		"$(in_fix rev-parse HEAD:README)" ]
	[ "$(readlink "$copy/refs/heads/main")" = "$(readlink "$mnt/refs/heads/main")" ]
}

@test "commits/<id>/tree equals git archive for HEAD and older commits" {
	mount_odbfs "$FIX" "$mnt"
	for c in HEAD HEAD~1 HEAD~8 HEAD~17 "$ROOT" "$MERGE" "$SIGNED"; do
		check_archive "$FIX" "$mnt" "$(in_fix rev-parse "$c")"
	done
	# git archive writes the submodule as an empty directory, as odbfs.
	[ -d "$BATS_TEST_TMPDIR/archive-$(in_fix rev-parse HEAD)/sub" ]
}

@test "parent links walk first parents like HEAD~n" {
	mount_odbfs "$FIX" "$mnt"
	head=$(in_fix rev-parse HEAD)
	got=$(cd "$mnt/commits/$head/parent/parent/parent" && pwd -P)
	[ "$(basename "$got")" = "$(in_fix rev-parse HEAD~3)" ]
	[ "$got" = "$mnt/by-id/$(in_fix rev-parse HEAD~3)" ]
	for c in HEAD HEAD~3 HEAD~7 "$MERGE" "$SIGNED"; do
		id=$(in_fix rev-parse "$c")
		link_is "$mnt/commits/$id/parent" "../$(in_fix rev-parse "$c^")"
	done
	# Ten steps through the merge to the first parent's line.
	p=$mnt/commits/$head
	for _ in $(seq 1 10); do p=$p/parent; done
	[ "$(cat "$p/parents")" = "$(in_fix rev-parse HEAD~11)" ]
	cmp "$p/tree/README" <(in_fix cat-file blob HEAD~10:README)
}

@test "parents of a merge lists both, one a line; a root commit has no parent" {
	mount_odbfs "$FIX" "$mnt"
	cmp "$mnt/commits/$MERGE/parents" \
		<(in_fix rev-parse "$MERGE^1" "$MERGE^2")
	[ "$(wc -l <"$mnt/commits/$MERGE/parents")" -eq 2 ]
	id=$(in_fix rev-parse HEAD~4)
	cmp "$mnt/commits/$id/parents" <(in_fix rev-parse HEAD~5)
	enoent "$mnt/commits/$ROOT/parent"
	! [ -L "$mnt/commits/$ROOT/parent" ]
	[ -f "$mnt/commits/$ROOT/parents" ]
	[ "$(stat -c %s "$mnt/commits/$ROOT/parents")" -eq 0 ]
	[ "$(LC_ALL=C ls "$mnt/commits/$ROOT" | tr '\n' ' ')" = \
		"author committer message parents raw tree " ]
	[ "$(LC_ALL=C ls "$mnt/commits/$MERGE" | tr '\n' ' ')" = \
		"author committer message parent parents raw tree " ]
}

@test "message, author and committer are the commit's bytes exactly" {
	mount_odbfs "$FIX" "$mnt"
	raw=$BATS_TEST_TMPDIR/raw
	for c in HEAD~3 "$ROOT" "$MERGE" "$EMPTYMSG" "$SIGNED"; do
		id=$(in_fix rev-parse "$c")
		in_fix cat-file commit "$id" >"$raw"
		n=$(grep -n -m 1 -x '' "$raw" | cut -d: -f1)
		cmp "$mnt/commits/$id/message" <(tail -n +"$((n + 1))" "$raw")
		cmp "$mnt/commits/$id/author" <(sed -n '/^$/q; s/^author //p' "$raw")
		cmp "$mnt/commits/$id/committer" \
			<(sed -n '/^$/q; s/^committer //p' "$raw")
		[ "$(stat -c %s "$mnt/commits/$id/message")" -eq \
			"$(($(stat -c %s "$raw") - $(head -n "$n" "$raw" | wc -c)))" ]
	done
	# The fixture has what this is about.
	tail -c 9 "$mnt/commits/$SIGNED/message" | cmp - <(printf 'l newline')
	grep -q 'Indented second paragraph.  $' "$mnt/commits/$EMPTYMSG/message"
	[ "$(cat "$mnt/commits/$SIGNED/committer")" = \
		"C O Mitter <committer@example.com> 1700400999 +0530" ]
	grep -q $'caf\xe9' "$mnt/commits/$SIGNED/message"
}

@test "raw links to the commit object; commits/, trees/ and tags/ list what git names from the refs" {
	mount_odbfs "$FIX" "$mnt"
	for c in HEAD "$ROOT" "$SIGNED"; do
		id=$(in_fix rev-parse "$c")
		link_is "$mnt/commits/$id/raw" "../../objects/$id"
		cmp "$mnt/commits/$id/raw" <(in_fix cat-file commit "$id")
	done
	diff <(ls -A "$mnt/commits") <(in_fix rev-list --all | LC_ALL=C sort)
	# The tree of each of those commits; subtrees are found, not listed.
	diff <(ls -A "$mnt/trees") \
		<(in_fix log --all --format=%T | LC_ALL=C sort -u)
	# Every tag object the refs reach, a tag of a tag too.
	diff <(ls -A "$mnt/tags") <(in_fix cat-file --batch-all-objects \
		--batch-check='%(objecttype) %(objectname)' | sed -n 's/^tag //p')
	[ "$(in_fix cat-file --batch-all-objects --batch-check='%(objecttype)' |
		grep -c '^tag$')" -eq 3 ]
	# Listing and lookup agree: ls -i against stat.
	for d in commits trees tags; do
		diff <(cd "$mnt/$d" && ls -i | awk '{ print $1, $2 }') \
			<(cd "$mnt/$d" && stat -c '%i %n' -- *)
	done
	# Only a commit is under commits/, only a tree under trees/.
	enoent "$mnt/commits/$(in_fix rev-parse 'HEAD^{tree}')"
	enoent "$mnt/commits/$(in_fix rev-parse HEAD:README)"
	enoent "$mnt/commits/$(in_fix rev-parse v1)"
	enoent "$mnt/trees/$(in_fix rev-parse HEAD)"
	enoent "$mnt/trees/$(in_fix rev-parse HEAD:README)"
	[ -d "$mnt/trees/$(in_fix rev-parse 'HEAD:a/b')" ]
	diff -r --no-dereference "$mnt/trees/$(in_fix rev-parse 'HEAD^{tree}')/" \
		"$mnt/commits/$(in_fix rev-parse HEAD)/tree"
}

# check_refs REPO MNT: every ref git for-each-ref lists is a symlink under
# MNT/refs to the object it names, one ../ per directory level, and there
# is no other.
check_refs() {
	local repo=$1 mnt=$2 name id type where want bad=0
	while read -r name; do
		id=$(git -C "$repo" rev-parse "$name")
		type=$(git -C "$repo" cat-file -t "$id")
		case $type in
		commit) where=commits ;;
		tree) where=trees ;;
		tag) where=tags ;;
		*) where=objects ;;
		esac
		want=$(echo "$name" | sed 's|[^/]*/|../|g; s|[^/]*$||')
		want=$want$where/$id
		if ! link_is "$mnt/$name" "$want"; then
			echo "$name: got '$(readlink "$mnt/$name")', want '$want'" >&2
			bad=$((bad + 1))
		elif ! [ -e "$mnt/$name" ]; then
			echo "$name: $want does not resolve" >&2
			bad=$((bad + 1))
		fi
	done < <(git -C "$repo" for-each-ref --format='%(refname)')
	if ! diff <(git -C "$repo" for-each-ref --format='%(refname)' |
	    LC_ALL=C sort) <(find "$mnt/refs" -type l -printf 'refs/%P\n' |
	    LC_ALL=C sort) >&2; then
		echo "the refs listed differ from git for-each-ref" >&2
		bad=$((bad + 1))
	fi
	[ "$bad" -eq 0 ]
}

@test "every ref links to what it names: commits/, trees/, tags/ or objects/" {
	mount_odbfs "$FIX" "$mnt"
	check_refs "$FIX" "$mnt"
	# Spelled out for the cases that matter.
	link_is "$mnt/refs/heads/main" "../../commits/$(in_fix rev-parse main)"
	link_is "$mnt/refs/heads/feature/x/y" \
		"../../../../commits/$(in_fix rev-parse feature/x/y)"
	link_is "$mnt/refs/tags/v1" "../../tags/$(in_fix rev-parse v1)"
	link_is "$mnt/refs/tags/v1-outer" "../../tags/$(in_fix rev-parse v1-outer)"
	# light was made at HEAD~5 before the last commit.
	link_is "$mnt/refs/tags/light" "../../commits/$(in_fix rev-parse HEAD~6)"
	link_is "$mnt/refs/tags/treetag" "../../trees/$(in_fix rev-parse 'HEAD^{tree}')"
	link_is "$mnt/refs/tags/annotree" "../../tags/$(in_fix rev-parse annotree)"
	link_is "$mnt/refs/tags/blobtag" "../../objects/$(in_fix rev-parse HEAD:README)"
	link_is "$mnt/refs/remotes/origin/HEAD" \
		"../../../commits/$(in_fix rev-parse HEAD~1)"
	# main is both packed (stale) and loose: the loose one wins.
	grep -q ' refs/heads/main$' "$FIX/.git/packed-refs"
	[ -f "$FIX/.git/refs/heads/main" ]
	[ -f "$mnt/refs/heads/main/tree/README" ]
	[ -d "$mnt/refs/tags/treetag/a" ]
	cmp "$mnt/refs/tags/blobtag" <(in_fix cat-file blob HEAD:README)
	# A tag: its object, then what that points at, and the tree it
	# peels to (git's v1^{tree}), so refs/tags/v1/tree is the release.
	link_is "$mnt/refs/tags/v1-outer/object" "../$(in_fix rev-parse v1)"
	link_is "$mnt/refs/tags/v1-outer/object/object" \
		"../../commits/$(in_fix rev-parse 'v1^{commit}')"
	link_is "$mnt/refs/tags/annotree/object" \
		"../../trees/$(in_fix rev-parse 'HEAD^{tree}')"
	for t in v1 v1-outer annotree; do
		link_is "$mnt/refs/tags/$t/tree" \
			"../../trees/$(in_fix rev-parse "$t^{tree}")"
		diff -r "$mnt/refs/tags/$t/tree" "$mnt/trees/$(in_fix rev-parse "$t^{tree}")"
		# Its fields as git cat-file tag prints them.
		raw=$BATS_TEST_TMPDIR/$t.raw
		in_fix cat-file tag "$t" >"$raw"
		n=$(grep -n -m1 '^$' "$raw" | cut -d: -f1)
		cmp "$mnt/refs/tags/$t/message" <(tail -n +"$((n + 1))" "$raw")
		cmp "$mnt/refs/tags/$t/tagger" <(sed -n '/^$/q; s/^tagger //p' "$raw")
		[ "$(cat "$mnt/refs/tags/$t/tag")" = "$(sed -n '/^$/q; s/^tag //p' "$raw")" ]
		[ "$(cat "$mnt/refs/tags/$t/type")" = "$(sed -n '/^$/q; s/^type //p' "$raw")" ]
		cmp "$mnt/refs/tags/$t/raw" "$raw"
		[ "$(stat -c %Y "$mnt/refs/tags/$t/")" = "$(in_fix for-each-ref \
			--format='%(taggerdate:unix)' "refs/tags/$t")" ]
		[ "$(stat -c %h "$mnt/refs/tags/$t/")" = 2 ]
	done
	[ "$(ls "$mnt/refs/tags/v1/")" = "$(printf '%s\n' message object raw tag tagger tree type)" ]
	# Only a tag is under tags/; a prefix links to it.
	enoent "$mnt/tags/$(in_fix rev-parse HEAD)"
	enoent "$mnt/tags/$(in_fix rev-parse 'HEAD^{tree}')"
	v1=$(in_fix rev-parse v1)
	link_is "$mnt/tags/${v1:0:12}" "$v1"
	# And ~N still starts from what the tag peels to.
	link_is "$mnt/refs/tags/v1~2" "../../commits/$(in_fix rev-parse v1~2)"
}

@test "a chain of 200 tags is peeled; one of 300, or a tag of a missing object: no tree and one log line" {
	repo=$BATS_TEST_TMPDIR/repo
	cp -a "$FIX" "$repo"
	head=$(git -C "$repo" rev-parse HEAD)
	# mktag, not tag -a: thousands of tags in seconds.
	chain() {
		local o=$head type=commit
		for i in $(seq 1 "$1"); do
			o=$(printf 'object %s\ntype %s\ntag t%s\ntagger T <t@example.com> 1700000000 +0000\n\nm\n' \
				"$o" "$type" "$i" | git -C "$repo" hash-object -t tag -w --stdin)
			type=tag
		done
		echo "$o"
	}
	c200=$(chain 200) c300=$(chain 300)
	missing=$(printf 'object %s\ntype commit\ntag gone\ntagger T <t@example.com> 1700000000 +0000\n\nm\n' \
		"$(printf '%040d' 7)" | git -C "$repo" hash-object -t tag -w --literally --stdin)
	git -C "$repo" update-ref refs/tags/c200 "$c200"
	git -C "$repo" update-ref refs/tags/c300 "$c300"
	printf '%s\n' "$missing" >"$repo/.git/refs/tags/gone"
	[ "$(git -C "$repo" rev-parse 'c300^{commit}')" = "$head" ]
	mount_odbfs "$repo" "$mnt"
	link_is "$mnt/refs/tags/c200" "../../tags/$c200"
	link_is "$mnt/refs/tags/c200/tree" "../../trees/$(git -C "$repo" rev-parse 'HEAD^{tree}')"
	o=$c200
	for i in 1 2 3; do
		o=$(git -C "$repo" cat-file tag "$o" | sed -n 's/^object //p')
	done
	[ "$(cd -P "$mnt/refs/tags/c200/object/object/object" && pwd)" = \
		"$mnt/tags/$o" ]
	link_is "$mnt/refs/tags/c300" "../../tags/$c300"
	link_is "$mnt/refs/tags/gone" "../../tags/$missing"
	link_is "$mnt/refs/tags/gone/object" "../../commits/$(printf '%040d' 7)"
	enoent "$mnt/refs/tags/gone/object/"
	for i in 1 2; do
		ls -l "$mnt/refs/tags/c300/" "$mnt/refs/tags/gone/" >/dev/null
		enoent "$mnt/refs/tags/c300/tree"
	done
	[ "$(grep -c "tags/$c300 cannot be peeled (tags nested too deep): it has no tree" "$mnt.log")" -eq 1 ]
	[ "$(grep -c "tags/$missing cannot be peeled (a tag names a missing object)" "$mnt.log")" -eq 1 ]
	[ "$(wc -l <"$mnt.log")" -eq 2 ]
}

@test "HEAD is symbolic; refs/heads lists what git for-each-ref does" {
	mount_odbfs "$FIX" "$mnt"
	link_is "$mnt/HEAD" refs/heads/main
	[ "$(cd -P "$mnt/HEAD" && pwd)" = "$mnt/by-id/$(in_fix rev-parse HEAD)" ]
	[ "$(LC_ALL=C ls "$mnt/refs/heads")" = \
		"$(in_fix for-each-ref --format='%(refname:lstrip=2)' refs/heads |
		cut -d/ -f1 | LC_ALL=C sort -u)" ]
	[ "$(LC_ALL=C ls "$mnt/refs/heads/feature")" = "$(printf 'x\nz')" ]
	[ -d "$mnt/refs/heads/feature/x" ] && ! [ -L "$mnt/refs/heads/feature/x" ]
	[ "$(LC_ALL=C ls "$mnt/refs")" = "$(printf 'heads\nremotes\ntags')" ]
	[ "$(LC_ALL=C ls -A "$mnt" | tr '\n' ' ')" = ".odbfs HEAD commits objects refs tags trees " ]
	enoent "$mnt/refs/heads/nosuch"
	enoent "$mnt/refs/heads/feature/x/nosuch"
}

@test "ref names git check-ref-format refuses are not shown" {
	repo=$BATS_TEST_TMPDIR/repo
	cp -a "$FIX" "$repo"
	id=$(git -C "$repo" rev-parse HEAD)
	for bad in 'bad..dots' '.hidden' 'x.lock' 'sp ace' 'trail.' 'q?m' 'dir/.dot'; do
		mkdir -p "$(dirname "$repo/.git/refs/heads/$bad")"
		echo "$id" >"$repo/.git/refs/heads/$bad"
	done
	printf '%s refs/heads/packed..bad\n' "$id" >>"$repo/.git/packed-refs"
	mount_odbfs "$repo" "$mnt"
	check_refs "$repo" "$mnt"
	for bad in 'bad..dots' '.hidden' 'x.lock' 'sp ace' 'trail.' 'q?m' 'dir/.dot' 'packed..bad'; do
		enoent "$mnt/refs/heads/$bad"
	done
	enoent "$mnt/refs/heads/dir"
}

@test "a packed-refs holding a ref and refs under its name: listed once, as the ref a lookup finds" {
	repo=$BATS_TEST_TMPDIR/repo
	git init -q -b main "$repo"
	git -C "$repo" commit -q --allow-empty -m one
	id=$(git -C "$repo" rev-parse HEAD)
	# git writes no such pair; a hostile or damaged file can. "a-x" sorts
	# between "a" and "a/b".
	printf '%s refs/heads/a
%s refs/heads/a-x
%s refs/heads/a/b
' \
		"$id" "$id" "$id" >"$repo/.git/packed-refs"
	mount_odbfs "$repo" "$mnt"
	[ "$(ls "$mnt/refs/heads" | tr '\n' ' ')" = "a a-x main " ]
	[ -L "$mnt/refs/heads/a" ]
	[ "$(stat -c %i "$mnt/refs/heads/a")" = \
		"$(ls -i "$mnt/refs/heads" | awk '$2 == "a" { print $1 }')" ]
}

@test "a ref nested too deep for a symlink is EIO with one log line; one less is served" {
	repo=$BATS_TEST_TMPDIR/repo
	cp -a "$FIX" "$repo"
	id=$(git -C "$repo" rev-parse HEAD)
	# refs/heads/ plus 1330 levels links through 1331 ../ and commits/<id>:
	# 4041 bytes. 1400 levels would need 4251, more than PATH_MAX.
	fits=refs/heads deep=refs/heads
	for _ in $(seq 1 1329); do fits=$fits/a; done
	for _ in $(seq 1 1399); do deep=$deep/b; done
	fits=$fits/ok deep=$deep/no
	printf '%s %s\n%s %s\n' "$id" "$fits" "$id" "$deep" >>"$repo/.git/packed-refs"
	[ "$(git -C "$repo" rev-parse "$deep")" = "$id" ]
	mount_odbfs "$repo" "$mnt"
	target=$(readlink "$mnt/$fits")
	[ "${#target}" -eq 4041 ]
	[ "$(readlink -f "$mnt/$fits")" = "$(readlink -f "$mnt/commits/$id")" ]
	cmp "$mnt/$fits/message" <(git -C "$repo" show -s --format=%B HEAD | head -c -1)
	run cat "$mnt/$deep/message"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Input/output error"* ]]
	[ "$(grep -c 'ref is nested too deep to show: its link would be 4251 bytes' "$mnt.log")" -eq 1 ]
	unmount_odbfs "$mnt"
	[ "$ODBFS_STATUS" -eq 0 ]
}

@test "detached HEAD links into commits/, and follows checkout while mounted" {
	repo=$BATS_TEST_TMPDIR/repo
	cp -a "$FIX" "$repo"
	git -C "$repo" checkout -q --detach HEAD~2
	mount_odbfs "$repo" "$mnt"
	link_is "$mnt/HEAD" "commits/$(git -C "$repo" rev-parse HEAD~0)"
	[ -f "$mnt/HEAD/tree/README" ]
	git -C "$repo" checkout -q --detach HEAD~1
	within_a_second link_is "$mnt/HEAD" "commits/$(git -C "$repo" rev-parse HEAD~0)"
	git -C "$repo" checkout -q main
	within_a_second link_is "$mnt/HEAD" refs/heads/main
}

@test "refs that move, appear and disappear while mounted show within a second" {
	repo=$BATS_TEST_TMPDIR/repo
	cp -a "$FIX" "$repo"
	mount_odbfs "$repo" "$mnt"
	check_refs "$repo" "$mnt"
	old=$(git -C "$repo" rev-parse main)
	git -C "$repo" update-ref refs/heads/main HEAD~1
	[ "$(git -C "$repo" rev-parse main)" != "$old" ]
	within_a_second link_is "$mnt/refs/heads/main" \
		"../../commits/$(git -C "$repo" rev-parse main)"
	[ "$(cd -P "$mnt/refs/heads/main" && basename "$(pwd)")" = \
		"$(git -C "$repo" rev-parse main)" ]
	# A new branch, nested, appears; deleted ones disappear, and so does
	# a directory left empty.
	git -C "$repo" branch new/one HEAD~3
	within_a_second link_is "$mnt/refs/heads/new/one" \
		"../../../commits/$(git -C "$repo" rev-parse HEAD~3)"
	LC_ALL=C ls "$mnt/refs/heads" | grep -qx new
	git -C "$repo" branch -D -q feature/z feature/x/y
	within_a_second enoent "$mnt/refs/heads/feature"
	! LC_ALL=C ls "$mnt/refs/heads" | grep -qx feature
	# Packing all refs changes nothing that shows; then a packed ref is
	# moved (now loose), another deleted (from packed-refs).
	git -C "$repo" pack-refs --all --prune
	! [ -e "$repo/.git/refs/heads/main" ]
	sleep 0.2
	check_refs "$repo" "$mnt"
	git -C "$repo" update-ref refs/tags/light HEAD~7
	git -C "$repo" branch -D -q side
	within_a_second link_is "$mnt/refs/tags/light" \
		"../../commits/$(git -C "$repo" rev-parse HEAD~7)"
	within_a_second enoent "$mnt/refs/heads/side"
	check_refs "$repo" "$mnt"
	kill -0 "$ODBFS_PID"
}

# prefix_count IDS PREFIX: how many ids in file IDS start with PREFIX.
prefix_count() {
	grep -c "^$2" "$1" || :
}

@test "a unique abbreviated id is a symlink to the full id" {
	mount_odbfs "$FIX" "$mnt"
	ids=$BATS_TEST_TMPDIR/ids
	all_ids "$FIX" >"$ids"
	[ "$(wc -l <"$ids")" -gt 3000 ]
	head=$(in_fix rev-parse HEAD)
	[ "$(prefix_count "$ids" "${head:0:7}")" -eq 1 ]
	link_is "$mnt/commits/${head:0:7}" "$head"
	[ -d "$mnt/commits/${head:0:7}/tree" ]
	[ "$(cd -P "$mnt/commits/${head:0:7}" && pwd)" = "$mnt/by-id/$head" ]
	link_is "$mnt/commits/${head:0:39}" "$head"
	# Four digits, for a commit whose four digits are unique.
	four=
	for c in $(in_fix rev-list --all); do
		if [ "$(prefix_count "$ids" "${c:0:4}")" -eq 1 ]; then
			four=$c
			break
		fi
	done
	[ -n "$four" ]
	link_is "$mnt/commits/${four:0:4}" "$four"
	# objects/ takes any type; trees/ a tree.
	blob=$(in_fix rev-parse HEAD:big)
	[ "$(prefix_count "$ids" "${blob:0:7}")" -eq 1 ]
	link_is "$mnt/objects/${blob:0:7}" "$blob"
	cmp "$mnt/objects/${blob:0:7}" <(in_fix cat-file blob "$blob")
	link_is "$mnt/objects/${head:0:7}" "$head"
	tree=$(in_fix rev-parse 'HEAD:a/b')
	[ "$(prefix_count "$ids" "${tree:0:7}")" -eq 1 ]
	link_is "$mnt/trees/${tree:0:7}" "$tree"
	[ -f "$mnt/trees/${tree:0:7}/mid.txt" ]
	# The wrong type in commits/ or trees/ is no such file.
	enoent "$mnt/commits/${blob:0:7}"
	enoent "$mnt/commits/${tree:0:7}"
	enoent "$mnt/trees/${head:0:7}"
	enoent "$mnt/trees/${blob:0:7}"
}

@test "an ambiguous, unknown, short or uppercase abbreviated id is ENOENT" {
	mount_odbfs "$FIX" "$mnt"
	ids=$BATS_TEST_TMPDIR/ids
	all_ids "$FIX" | LC_ALL=C sort >"$ids"
	amb=$(cut -c1-4 "$ids" | uniq -d | head -n 1)
	if [ -z "$amb" ]; then
		skip "no ambiguous 4-digit prefix among $(wc -l <"$ids") objects"
	fi
	[ "$(prefix_count "$ids" "$amb")" -ge 2 ]
	enoent "$mnt/objects/$amb"
	# commits/ and trees/ weigh only their own type, as git's
	# disambiguation hints do: a blob sharing the prefix is no rival.
	for t in commit tree; do
		grep "^$amb" "$ids" | in_fix cat-file --batch-check='%(objectname) %(objecttype)' |
			awk -v t=$t '$2 == t { print $1 }' >"$BATS_TEST_TMPDIR/of"
		echo "# $amb: $(wc -l <"$BATS_TEST_TMPDIR/of") ${t}s" >&3
		if [ "$(wc -l <"$BATS_TEST_TMPDIR/of")" -eq 1 ]; then
			link_is "$mnt/${t}s/$amb" "$(cat "$BATS_TEST_TMPDIR/of")"
		else
			enoent "$mnt/${t}s/$amb"
		fi
	done
	# The longest prefix two ids share is ambiguous; one digit more is not.
	read -r x y < <(awk 'NR > 1 {
		n = 0; while (substr(p, n + 1, 1) == substr($0, n + 1, 1)) n++
		if (n > best) { best = n; a = p; b = $0 } } { p = $0 }
		END { print a, b }' "$ids")
	n=0
	while [ "${x:n:1}" = "${y:n:1}" ]; do n=$((n + 1)); done
	echo "# $x and $y share $n digits" >&3
	[ "$n" -ge 4 ]
	enoent "$mnt/objects/${x:0:n}"
	link_is "$mnt/objects/${x:0:n+1}" "$x"
	link_is "$mnt/objects/${y:0:n+1}" "$y"
	# Unknown prefixes.
	for p in $(printf '%04x\n' $(seq 0 200)); do
		[ "$(prefix_count "$ids" "$p")" -eq 0 ] && break
	done
	[ "$(prefix_count "$ids" "$p")" -eq 0 ]
	for d in objects commits trees; do
		enoent "$mnt/$d/$p"
		enoent "$mnt/$d/${p}abc"
	done
	# Too short, uppercase, not hex.
	head=$(in_fix rev-parse HEAD)
	enoent "$mnt/commits/${head:0:3}"
	enoent "$mnt/objects/${head:0:3}"
	up=$(echo "${head:0:7}" | tr a-f A-F)
	if [ "$up" != "${head:0:7}" ]; then
		enoent "$mnt/commits/$up"
		enoent "$mnt/objects/$up"
	fi
	enoent "$mnt/commits/${head:0:6}g"
	link_is "$mnt/commits/${head:0:7}" "$head"
}

# raw_id HEX: the bytes of an object id.
raw_id() {
	printf "$(echo "$1" | sed 's/../\\x&/g')"
}

# tree_entry MODE NAME HEX: one entry of a tree object.
tree_entry() {
	printf '%s %s\0' "$1" "$2"
	raw_id "$3"
}

@test "tree entries named ., .., empty or with / are not shown; others are" {
	h=$BATS_TEST_TMPDIR/hostile
	git init -q "$h"
	blob=$(echo ok | git -C "$h" hash-object -w --stdin)
	blob2=$(echo latin | git -C "$h" hash-object -w --stdin)
	odd=$(printf 'odd\ttarget\n\377/x\n' | git -C "$h" hash-object -w --stdin)
	sub=$(printf '100644 blob %s\tinside\n' "$blob" | git -C "$h" mktree)
	{
		tree_entry 100644 . "$blob"
		tree_entry 40000 .. "$sub"
		tree_entry 100644 a/b "$blob"
		tree_entry 100644 "" "$blob"
		tree_entry 100644 $'caf\xe9' "$blob2"
		tree_entry 40000 $'d\xff' "$sub"
		tree_entry 100644 ok "$blob"
		tree_entry 40000 / "$sub"
		tree_entry 120000 odd "$odd"
	} >"$BATS_TEST_TMPDIR/tree"
	t=$(git -C "$h" hash-object -t tree --literally -w "$BATS_TEST_TMPDIR/tree")
	c=$(echo hostile | git -C "$h" commit-tree "$t")
	mount_odbfs "$h" "$mnt"
	want=$(printf '%s\n' $'caf\xe9' $'d\xff' ok odd | LC_ALL=C sort)
	for d in "$mnt/trees/$t/" "$mnt/commits/$c/tree"; do
		[ "$(find "$d" -mindepth 1 -maxdepth 1 -printf '%P\n' | LC_ALL=C sort)" = "$want" ]
		[ "$(cat "$d/ok")" = ok ]
		[ "$(cat "$d/"$'caf\xe9')" = latin ]
		[ "$(cat "$d/"$'d\xff'/inside)" = ok ]
		enoent "$d/a"
		# A symlink's target is its blob, newlines and all.
		cmp <(readlink -n "$d/odd") <(git -C "$h" cat-file blob "$odd")
		# . and .. are the real ones, not the tree's.
		[ "$(stat -c %i "$d/.")" = "$(stat -c %i "$d")" ]
		[ "$(stat -c %i "$d/../$(basename "$d")")" = "$(stat -c %i "$d")" ]
	done
	kill -0 "$ODBFS_PID"
}

@test "names over 255 bytes: listed and too long to open, the rest copied, each tool reports it; a name given twice shown once" {
	h=$BATS_TEST_TMPDIR/hostile
	git init -q "$h"
	blob=$(echo ok | git -C "$h" hash-object -w --stdin)
	sub=$(printf '100644 blob %s\tinside\n' "$blob" | git -C "$h" mktree)
	n255=$(printf 'A%.0s' $(seq 1 255)) n256=$(printf 'B%.0s' $(seq 1 256))
	n1024=$(printf 'C%.0s' $(seq 1 1024))
	{
		tree_entry 100644 "$n255" "$blob"
		tree_entry 100644 "$n256" "$blob"
		tree_entry 100644 "$n1024" "$blob"
		tree_entry 100644 dup "$blob"
		tree_entry 40000 dup "$sub"
		tree_entry 100644 zz "$blob"
	} >"$BATS_TEST_TMPDIR/tree"
	t=$(git -C "$h" hash-object -t tree --literally -w "$BATS_TEST_TMPDIR/tree")
	mount_odbfs "$h" "$mnt"
	d=$mnt/by-id/$t
	# Every tool sees the same five names; the first "dup" is the one.
	[ "$(python3 -c 'import os, sys; print(" ".join(sorted(os.listdir(sys.argv[1]))))' "$d")" = "$n255 $n256 $n1024 dup zz" ]
	[ "$(cat "$d/dup")" = ok ]
	[ "$(cat "$d/$n255")" = ok ]
	run stat "$d/$n256"
	[ "$status" -ne 0 ] && [[ $output == *"File name too long"* ]]
	run stat "$d/$n1024"
	[ "$status" -ne 0 ] && [[ $output == *"File name too long"* ]]
	# find lists all five (the listing's types spare it a stat).
	[ "$(find "$d" -mindepth 1 -type f -printf '%P\n' | LC_ALL=C sort | tr '\n' ' ')" = "$n255 $n256 $n1024 dup zz " ]
	# Each copy or backup has the rest, names the two, and fails.
	run tar -C "$d" -cf "$BATS_TEST_TMPDIR/x.tar" .
	[ "$status" -eq 2 ] && [[ $output == *"$n256: Cannot stat: File name too long"* ]]
	[ "$(tar -tf "$BATS_TEST_TMPDIR/x.tar" | LC_ALL=C sort | tr '\n' ' ')" = "./ ./$n255 ./dup ./zz " ]
	run rsync -a "$d/" "$BATS_TEST_TMPDIR/copy/"
	[ "$status" -eq 23 ] && [[ $output == *"$n1024\") failed: File name too long"* ]]
	[ "$(ls "$BATS_TEST_TMPDIR/copy" | tr '\n' ' ')" = "$n255 dup zz " ]
	if command -v restic >/dev/null; then
		export RESTIC_PASSWORD=x RESTIC_CACHE_DIR=$BATS_TEST_TMPDIR/rcache
		restic init -q -r "$BATS_TEST_TMPDIR/restic" >/dev/null
		run restic -q -r "$BATS_TEST_TMPDIR/restic" backup "$d"
		[ "$status" -eq 3 ] && [[ $output == *"lstat $d/$n256: file name too long"* ]]
	fi
	if command -v borg >/dev/null; then
		BORG_PASSPHRASE= borg init -e none "$BATS_TEST_TMPDIR/borg" >/dev/null 2>&1
		run borg create "$BATS_TEST_TMPDIR/borg::a" "$d"
		[ "$status" -eq 1 ] && [[ $output == *"$n256: stat: [Errno 36] File name too long"* ]]
		[ "$(borg list "$BATS_TEST_TMPDIR/borg::a" | grep -c "$t/")" -eq 3 ]
	fi
	[ "$(grep -c "tree $t: 2 names over 255 bytes listed, too long to open (the first at offset $((283 + 7)))" "$mnt.log")" -eq 1 ]
	[ "$(grep -c "tree $t: 1 entry with a name used before is not shown (the first at offset $((283 + 284 + 1052 + 31 + 6)))" "$mnt.log")" -eq 1 ]
	# Offsets are where the names start: entries are "MODE NAME\0ID".
	[ "$(wc -l <"$mnt.log")" -eq 2 ]
}

@test "a name longer than a FUSE listing carries (1024 bytes): the rest listed, then EIO, one log line for all listings" {
	h=$BATS_TEST_TMPDIR/hostile
	git init -q "$h"
	blob=$(echo ok | git -C "$h" hash-object -w --stdin)
	n1025=$(printf 'D%.0s' $(seq 1 1025))
	{
		tree_entry 100644 a "$blob"
		tree_entry 100644 "$n1025" "$blob"
		tree_entry 100644 zz "$blob"
	} >"$BATS_TEST_TMPDIR/tree"
	t=$(git -C "$h" hash-object -t tree --literally -w "$BATS_TEST_TMPDIR/tree")
	mount_odbfs "$h" "$mnt"
	d=$mnt/by-id/$t
	run ls "$d"
	[ "$status" -ne 0 ] && [[ $output == *"Input/output error"* ]]
	[[ $output == *$'\na\nzz' ]]
	run rsync -a "$d/" "$BATS_TEST_TMPDIR/copy/"
	[ "$status" -eq 23 ]
	[ "$(ls "$BATS_TEST_TMPDIR/copy" | tr '\n' ' ')" = "a zz " ]
	# Said once, however many listings find it again: a tree never
	# changes, and nine listings made nine lines.
	for _ in $(seq 1 9); do
		ls "$d" >/dev/null 2>&1 || :
	done
	[ "$(grep -c "tree $t: entry at offset 36 has a name of 1025 bytes, more than a listing carries" "$mnt.log")" -eq 1 ]
	[ "$(wc -l <"$mnt.log")" -eq 1 ]
}

@test "a tree entry of the wrong type is EIO for that entry only" {
	h=$BATS_TEST_TMPDIR/hostile
	git init -q "$h"
	blob=$(echo good | git -C "$h" hash-object -w --stdin)
	sub=$(printf '100644 blob %s\tinside\n' "$blob" | git -C "$h" mktree)
	{
		tree_entry 100644 bad "$sub"
		tree_entry 40000 baddir "$blob"
		tree_entry 120000 badlink "$sub"
		tree_entry 100755 badexec "$sub"
		tree_entry 100644 good "$blob"
		tree_entry 40000 ok "$sub"
		tree_entry 160000 sub 1234567890123456789012345678901234567890
	} >"$BATS_TEST_TMPDIR/tree"
	t=$(git -C "$h" hash-object -t tree --literally -w "$BATS_TEST_TMPDIR/tree")
	mount_odbfs "$h" "$mnt"
	d=$mnt/trees/$t
	run cat "$d/bad"
	[ "$status" -ne 0 ]
	[[ $output == *"Input/output error"* ]]
	run ls "$d/baddir"
	[ "$status" -ne 0 ]
	[[ $output == *"Input/output error"* ]]
	run readlink "$d/badlink"
	[ "$status" -ne 0 ]
	run stat "$d/badlink"
	[[ $output == *"Input/output error"* ]]
	run cat "$d/badexec"
	[[ $output == *"Input/output error"* ]]
	# The rest reads fine, again and again, and the daemon lives on.
	for _ in 1 2 3; do
		[ "$(cat "$d/good")" = good ]
		[ "$(cat "$d/ok/inside")" = good ]
		[ -d "$d/sub" ] && [ -z "$(ls -A "$d/sub")" ]
		run cat "$d/bad"
		[[ $output == *"Input/output error"* ]]
	done
	LC_ALL=C ls "$d" | grep -qx good
	kill -0 "$ODBFS_PID"
	mountpoint -q "$mnt"
}

# inodes MNT PATHS...: "ino path" for each path, without following links.
inodes() {
	local m=$1 p
	shift
	for p in "$@"; do
		echo "$(stat -c %i -- "$m/$p") $p"
	done
}

@test "inode numbers are the same after unmount and remount" {
	head=$(in_fix rev-parse HEAD)
	old=$(in_fix rev-parse HEAD~6)
	tree=$(in_fix rev-parse 'HEAD:a')
	blob=$(in_fix rev-parse HEAD:README)
	paths=(
		"commits/$head" "commits/$head/tree" "commits/$head/tree/a/b/c"
		"commits/$head/tree/a/b/c/deep.txt" "commits/$head/tree/link"
		"commits/$head/tree/sub" "commits/$head/tree/bin/run.sh"
		"commits/$head/tree/"$'caf\xe9' "commits/$head/tree/dup1"
		"commits/$head/message" "commits/$head/parent" "commits/$head/raw"
		"commits/$old/tree/a" "commits/$old/tree/flip"
		"trees/$tree" "trees/$tree/b" "trees/$tree/b/c/up"
		"objects/$blob" "objects/${blob:0:2}" "commits/${head:0:8}"
		HEAD refs refs/heads refs/heads/main refs/tags/v1 .
	)
	mount_odbfs "$FIX" "$mnt"
	inodes "$mnt" "${paths[@]}" >"$BATS_TEST_TMPDIR/first"
	unmount_odbfs "$mnt"
	[ "$ODBFS_STATUS" -eq 0 ]
	mount_odbfs "$FIX" "$mnt"
	# In the other order: numbers do not depend on the order of lookups.
	for ((i = ${#paths[@]} - 1; i >= 0; i--)); do
		inodes "$mnt" "${paths[i]}"
	done | tac >"$BATS_TEST_TMPDIR/second"
	diff "$BATS_TEST_TMPDIR/first" "$BATS_TEST_TMPDIR/second"
	# And no two of these paths share one.
	[ "$(awk '{ print $1 }' "$BATS_TEST_TMPDIR/first" | sort | uniq -d)" = "" ]
}

@test "find sees no loop; the same tree twice is two directories; nlink counts subdirectories" {
	mount_odbfs "$FIX" "$mnt"
	head=$(in_fix rev-parse HEAD)
	root=$(in_fix rev-parse 'HEAD^{tree}')
	[ "$(in_fix rev-parse HEAD:dup1)" = "$(in_fix rev-parse HEAD:dup2)" ]
	for d in "commits/$head/" "commits/$MERGE/" "trees/$root/" "commits/$ROOT/"; do
		run find "$mnt/$d" -xdev
		[ "$status" -eq 0 ]
		! [[ $output == *loop* ]]
		! [[ $output == *"find:"* ]]
	done
	# Every path find walks is one ls-tree entry: no directory twice.
	[ "$(find "$mnt/trees/$root/" -mindepth 1 -printf . | wc -c)" -eq \
		"$(in_fix ls-tree -r -t -z HEAD | tr -cd '\0' | wc -c)" ]
	[ "$(stat -c %i "$mnt/trees/$root/dup1")" != "$(stat -c %i "$mnt/trees/$root/dup2")" ]
	[ "$(stat -c %i "$mnt/commits/$head/tree/dup1")" != \
		"$(stat -c %i "$mnt/commits/$head/tree/dup2")" ]
	[ "$(stat -c %i "$mnt/commits/$head/tree/dup1")" != \
		"$(stat -c %i "$mnt/trees/$root/dup1")" ]
	[ "$(stat -c %i "$mnt/commits/$head/tree")" != "$(stat -c %i "$mnt/trees/$root")" ]
	# A tree's directory: 2 and one per subdirectory, as find -noleaf
	# and du expect of a directory; everything else in trees 1.
	local d bad=0
	while IFS= read -r -d '' d; do
		[ "$(stat -c %h -- "$d")" -eq $((2 + $(find "$d" -mindepth 1 \
			-maxdepth 1 -type d -printf . | wc -c))) ] || bad=$((bad + 1))
	done < <(find "$mnt/commits/$head/tree" "$mnt/trees/$root" -type d -print0)
	[ "$bad" -eq 0 ]
	[ "$(find "$mnt/commits/$head/" "$mnt/trees/$root" ! -type d \
		-printf '%n\n' | sort -u)" = 1 ]
	[ "$(stat -c %h "$mnt/commits/$head/")" = 3 ]
	[ "$(stat -c %h "$mnt" "$mnt/commits" "$mnt/objects" "$mnt/refs" | tr '\n' ' ')" = \
		"8 1 1 1 " ]
}

# times_other_than T PATH...: every path under PATH, with an mtime not T
# (names quoted, one a line).
times_other_than() {
	local t=$1
	shift
	find "$@" -exec stat -c '%Y %N' {} + | awk -v t="$t" '$1 != t'
}

@test "under commits/<id>/ the time is the committer's; the repository's under trees/ and objects/" {
	# One mount per commit: what one commit shows must not depend on
	# another read before it (the next test is about that).
	for c in HEAD~12 HEAD "$SIGNED" "$ROOT" "$MERGE"; do
		id=$(in_fix rev-parse "$c")
		ct=$(in_fix log -1 --format=%ct "$id")
		[ "$ct" != "$(in_fix log -1 --format=%at "$id")" ]
		mount_odbfs "$FIX" "$mnt"
		run times_other_than "$ct" "$mnt/commits/$id/"
		unmount_odbfs "$mnt"
		echo "$c: want $ct; $output" | head -n 5 >&2
		[ -z "$output" ]
	done
	mount_odbfs "$FIX" "$mnt"
	# The repository's birth: no push or gc changes it.
	[ "$(stat -c %W "$FIX/.git")" -gt 0 ]
	run times_other_than "$(stat -c %W "$FIX/.git")" \
		"$mnt/trees/$(in_fix rev-parse 'HEAD~3^{tree}')" \
		"$mnt/objects/$(in_fix rev-parse HEAD:README)" \
		"$mnt/objects/$(in_fix rev-parse HEAD)" "$mnt/objects" "$mnt/trees"
	echo "$output" | head -n 5 >&2
	[ -z "$output" ]
}

@test "times do not depend on what was read before, through another commit" {
	a=$(in_fix rev-parse HEAD~12) b=$(in_fix rev-parse HEAD~11)
	ta=$(in_fix log -1 --format=%ct "$a") tb=$(in_fix log -1 --format=%ct "$b")
	[ "$ta" != "$tb" ]
	# empty and a/b/c/up are the same blob, same mode, in both commits.
	[ "$(in_fix rev-parse "$a:empty")" = "$(in_fix rev-parse "$b:empty")" ]
	[ "$(in_fix rev-parse "$a:a/b/c/up")" = "$(in_fix rev-parse "$b:a/b/c/up")" ]
	mount_odbfs "$FIX" "$mnt"
	stat "$mnt/commits/$a/tree/empty" "$mnt/commits/$a/tree/a/b/c/up" >/dev/null
	[ "$(stat -c %Y "$mnt/commits/$a/tree/empty")" = "$ta" ]
	got=$(stat -c %Y "$mnt/commits/$b/tree/empty" \
		"$mnt/commits/$b/tree/a/b/c/up" \
		"$mnt/trees/$(in_fix rev-parse "$b^{tree}")/empty" | tr '\n' ' ')
	epoch=$(stat -c %W "$FIX/.git")
	echo "got $got; want $tb $tb $epoch" >&2
	[ "$got" = "$tb $tb $epoch " ]
	# Two files of two times: two inode numbers, as (st_dev, st_ino)
	# names a file for find -samefile and backup tools.
	[ "$(stat -c %i "$mnt/commits/$a/tree/empty")" != \
		"$(stat -c %i "$mnt/commits/$b/tree/empty")" ]
}

@test "sha256 repository: trees, archive, refs, parents and abbreviations" {
	r=$BATS_TEST_TMPDIR/sha256
	make_history "$r" -b main --object-format=sha256
	git -C "$r" update-index --add --cacheinfo \
		"160000,$(git -C "$r" rev-parse HEAD~3),gitlink"
	git -C "$r" commit -qm "with a submodule"
	git -C "$r" branch nested/branch HEAD~2
	git -C "$r" tag -a -m sha256 v-sha HEAD~1
	head=$(git -C "$r" rev-parse HEAD)
	[ "${#head}" -eq 64 ]
	mount_odbfs "$r" "$mnt"
	for c in HEAD HEAD~1 HEAD~6 HEAD~20; do
		id=$(git -C "$r" rev-parse "$c")
		check_archive "$r" "$mnt" "$id"
		check_tree_entries "$r" "$mnt" "$id"
	done
	link_is "$mnt/HEAD" refs/heads/main
	check_refs "$r" "$mnt"
	link_is "$mnt/commits/$head/parent" "../$(git -C "$r" rev-parse HEAD~1)"
	cmp "$mnt/commits/$head/parents" <(git -C "$r" rev-parse HEAD~1)
	link_is "$mnt/commits/${head:0:8}" "$head"
	# 40 digits are an abbreviation here, not a full id; 63 still are.
	link_is "$mnt/commits/${head:0:40}" "$head"
	link_is "$mnt/commits/${head:0:63}" "$head"
	[ "$(getfattr --only-values -n user.git.id "$mnt/commits/$head/tree/README")" = \
		"$(git -C "$r" rev-parse HEAD:README)" ]
	cmp "$mnt/commits/$head/raw" <(git -C "$r" cat-file commit HEAD)
	[ "$(stat -c %Y "$mnt/commits/$head/tree/README")" = \
		"$(git -C "$r" log -1 --format=%ct HEAD)" ]
}
