#!/usr/bin/env bats
# Annotated tags as git reads them, where a tag is odd or hostile: a type
# line that lies, uppercase ids, a last line without its newline, chains
# 256 deep, timestamps past any calendar, a detached HEAD at a tag, and
# prefixes many objects share. Each case is the outsider's of issue 16,
# checked against what git 2.x does with the same repository.

load lib

setup() {
	MNT=$BATS_TEST_TMPDIR/mnt
	R=$BATS_TEST_TMPDIR/r
	git init -q -b main "$R"
	echo a >"$R/a"
	git -C "$R" add a
	git -C "$R" commit -q -m one
	C=$(git -C "$R" rev-parse HEAD)
	T=$(git -C "$R" rev-parse 'HEAD^{tree}')
}

teardown() {
	unmount_odbfs "$MNT"
}

# tag BODY: write a tag object (hash-object --literally takes what git's
# own checks refuse) and print its id.
tag() {
	printf "$1" | git -C "$R" hash-object -t tag --literally -w --stdin
}

# ref NAME ID: point refs/tags/NAME at ID, as a hostile owner can.
ref() {
	mkdir -p "$R/.git/refs/tags"
	echo "$2" >"$R/.git/refs/tags/$1"
}

@test "a tag whose type line lies: no tree, one log line, and object links by what it names" {
	local t
	t=$(tag "object $T\ntype commit\ntag lie\ntagger X <x@y> 1700000000 +0000\n\nm\n")
	ref lie "$t"
	! git -C "$R" rev-parse -q --verify "lie^{tree}" >/dev/null 2>&1
	mount_odbfs "$R" "$MNT"
	[ -d "$MNT/tags/$t" ]
	[ ! -e "$MNT/tags/$t/tree" ]
	link_is "$MNT/tags/$t/object" "../../trees/$T"
	[ -d "$MNT/tags/$t/object" ]
	[ "$(cat "$MNT/tags/$t/type")" = commit ]
	grep -q "tag $t: says $T is a commit, but it is a tree" "$MNT.log"
	ls -R "$MNT/tags" >/dev/null
	[ "$(grep -c "says $T is a commit" "$MNT.log")" -le 2 ]
}

@test "uppercase hex in a tag's object line and a commit's tree line: read as git reads them" {
	local t up c2
	up=$(echo "$C" | tr a-f A-F)
	t=$(tag "object $up\ntype commit\ntag up\ntagger X <x@y> 1700000000 +0000\n\nm\n")
	ref up "$t"
	[ "$(git -C "$R" rev-parse "up^{tree}")" = "$T" ]
	c2=$(printf 'tree %s\nauthor A <a@b> 1 +0000\ncommitter A <a@b> 1 +0000\n\nu\n' \
		"$(echo "$T" | tr a-f A-F)" | git -C "$R" hash-object -t commit --literally -w --stdin)
	git -C "$R" branch upper "$c2"
	[ "$(git -C "$R" rev-parse "upper^{tree}")" = "$T" ]
	mount_odbfs "$R" "$MNT"
	link_is "$MNT/tags/$t/tree" "../../trees/$T"
	link_is "$MNT/tags/$t/object" "../../commits/$C"
	[ "$(ls "$MNT/commits/$c2/tree")" = a ]
	grep -qx "$T" <(ls "$MNT/trees")
	[ ! -s "$MNT.log" ]
}

@test "a tagger line without its newline, the object's last: the tagger and its time, as git shows them" {
	local t
	t=$(tag "object $C\ntype commit\ntag nb\ntagger X <x@y> 1700000123 +0000")
	ref nb "$t"
	[ "$(git -C "$R" for-each-ref --format='%(taggerdate:unix)' refs/tags/nb)" = 1700000123 ]
	mount_odbfs "$R" "$MNT"
	[ "$(cat "$MNT/tags/$t/tagger")" = "X <x@y> 1700000123 +0000" ]
	[ "$(stat -c %Y "$MNT/tags/$t")" = 1700000123 ]
	[ "$(stat -c %s "$MNT/tags/$t/message")" = 0 ]
}

@test "a timestamp past any calendar: the epoch, as git shows 1970" {
	local t
	t=$(tag "object $C\ntype commit\ntag far\ntagger X <x@y> 99999999999999999 +0000\n\nm\n")
	ref far "$t"
	git -C "$R" for-each-ref --format='%(taggerdate:iso)' refs/tags/far | grep -q '^1970-01-01'
	mount_odbfs "$R" "$MNT"
	[ "$(stat -c %Y "$MNT/tags/$t")" = 0 ]
}

@test "a chain of 256 tags peels to its tree, as git; of 257 it does not, with one log line" {
	local id=$C i
	for i in $(seq 1 257); do
		id=$(tag "object $id\ntype $([ "$i" -eq 1 ] && echo commit || echo tag)\ntag c$i\ntagger X <x@y> 1 +0000\n\nm\n")
		[ "$i" -eq 256 ] && ref c256 "$id"
	done
	ref c257 "$id"
	[ "$(git -C "$R" rev-parse "c256^{tree}")" = "$T" ]
	mount_odbfs "$R" "$MNT"
	link_is "$MNT/refs/tags/c256/tree" "../../trees/$T"
	[ ! -e "$MNT/refs/tags/c257/tree" ]
	[ "$(grep -c "tags/$id cannot be peeled (tags nested too deep)" "$MNT.log")" -eq 1 ]
}

@test "a detached HEAD at a tag's id links into tags/, and HEAD~0 is the commit, as git says" {
	local t
	t=$(tag "object $C\ntype commit\ntag h\ntagger X <x@y> 1 +0000\n\nm\n")
	echo "$t" >"$R/.git/HEAD"
	[ "$(git -C "$R" rev-parse 'HEAD^{tree}')" = "$T" ]
	mount_odbfs "$R" "$MNT"
	link_is "$MNT/HEAD" "tags/$t"
	[ "$(cd -P "$MNT/HEAD" && pwd)" = "$MNT/tags/$t" ]
	link_is "$MNT/HEAD~0" "commits/$C"
	[ ! -s "$MNT.log" ]
}

@test "a tag arriving is shown at once under tags/, though its miss was cached" {
	local body t
	body="object $C\ntype commit\ntag late\ntagger X <x@y> 1 +0000\n\nm\n"
	t=$(printf "$body" | git -C "$R" hash-object -t tag --stdin)
	mount_odbfs "$R" "$MNT" -o negative_timeout=30
	[ ! -e "$MNT/tags/$t" ]
	printf "$body" | git -C "$R" hash-object -t tag -w --stdin >/dev/null
	within_a_second test -d "$MNT/tags/$t"
}

# twins REPO WANT N TYPE: write N objects of TYPE whose ids begin with
# WANT (brute force on their bytes) and print their ids.
twins() {
	python3 - "$@" <<'PY'
import hashlib, subprocess, sys
repo, want, n, typ = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
k = found = 0
while found < n:
    k += 1
    if typ == "tag":
        body = ("object %s\ntype commit\ntag t%d\ntagger X <x@y> 1 +0000\n\nm\n"
                % (sys.argv[5], k)).encode()
    else:
        body = b"twin %d\n" % k
    if hashlib.sha1(b"%s %d\0" % (typ.encode(), len(body)) + body).hexdigest().startswith(want):
        print(subprocess.run(["git", "-C", repo, "hash-object", "-t", typ,
                              "--literally", "-w", "--stdin"], input=body,
                             capture_output=True, check=True).stdout.decode().strip())
        found += 1
PY
}

@test "a prefix 70 blobs share still names the one tree, as git's tree hint does" {
	local p=${T:0:4}
	twins "$R" "$p" 70 blob >/dev/null
	[ "$(git -C "$R" cat-file --batch-all-objects --batch-check='%(objectname)' | grep -c "^$p")" -ge 71 ]
	[ "$(git -C "$R" rev-parse "$p^{tree}")" = "$T" ]
	mount_odbfs "$R" "$MNT"
	link_is "$MNT/trees/$p" "$T"
	[ ! -e "$MNT/objects/$p" ]
}

@test "a prefix a commit and a tag share: ambiguous in commits/, bare or with ~0, as git's committish" {
	local p=${C:0:4} t
	t=$(twins "$R" "$p" 1 tag "$C")
	! git -C "$R" rev-parse -q --verify "$p^{commit}" >/dev/null 2>&1
	mount_odbfs "$R" "$MNT"
	[ ! -e "$MNT/commits/$p" ]
	[ ! -e "$MNT/commits/$p~0" ]
	link_is "$MNT/tags/$p" "$t"
	link_is "$MNT/commits/${C:0:12}" "$C"
}
