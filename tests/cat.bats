#!/usr/bin/env bats
# odbfs-cat against git cat-file: --batch over every object of loose,
# packed (OFS_DELTA and REF_DELTA), mixed, alternate and sha256
# repositories; --batch-check and --batch on input that mixes objects,
# missing ids and lines that are no ids at all; -t, -s, -e and the
# payload mode object by object.

bats_require_minimum_version 1.5.0

load lib

setup_file() {
	local d=$BATS_FILE_TMPDIR

	make_history "$d/loose"
	cp -a "$d/loose" "$d/packed"
	git -C "$d/packed" repack -adfq
	cp -a "$d/loose" "$d/refdelta"
	git -C "$d/refdelta" -c repack.useDeltaBaseOffset=false repack -adfq
	make_history "$d/sha256" --object-format=sha256
	git -C "$d/sha256" repack -dq
	add_commits "$d/sha256" 21 22
}

setup() {
	D=$BATS_FILE_TMPDIR
}

teardown() {
	# Nothing here mounts; kept so that every suite unmounts in teardown.
	unmount_odbfs "$BATS_TEST_TMPDIR/mnt"
}

# sample REPO: "id type size" from git cat-file of the first object of
# each type and of every thirtieth object.
sample() {
	git -C "$1" cat-file --batch-all-objects \
		--batch-check='%(objectname) %(objecttype) %(objectsize)' |
		awk '!seen[$2]++ || NR % 30 == 0'
}

# check_single REPO: for a sample of objects, odbfs-cat -t, -s, -e and the
# payload mode answer as git cat-file does (the type and size as its
# --batch-check gives them, the payload as git cat-file TYPE ID).
check_single() {
	local repo=$1 id type size n=0

	while read -r id type size; do
		[ "$("$ODBFS_CAT" -t "$repo" "$id")" = "$type" ] ||
			{ echo "-t $id" >&2; return 1; }
		[ "$("$ODBFS_CAT" -s "$repo" "$id")" = "$size" ] ||
			{ echo "-s $id" >&2; return 1; }
		"$ODBFS_CAT" -e "$repo" "$id" || { echo "-e $id" >&2; return 1; }
		cmp <("$ODBFS_CAT" "$repo" "$id") \
			<(git -C "$repo" cat-file "$type" "$id") ||
			{ echo "payload of $id" >&2; return 1; }
		n=$((n + 1))
	done < <(sample "$repo")
	[ "$n" -ge 4 ]
}

# check_missing REPO ID: ID is no object of REPO; odbfs-cat -e exits 1,
# and -t, -s and the payload mode fail and print nothing on stdout.
check_missing() {
	local repo=$1 id=$2 opt

	run git -C "$repo" cat-file -e "$id"
	[ "$status" -ne 0 ]
	run --separate-stderr "$ODBFS_CAT" -e "$repo" "$id"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	for opt in -t -s; do
		run --separate-stderr "$ODBFS_CAT" "$opt" "$repo" "$id"
		[ "$status" -eq 1 ]
		[ -z "$output" ]
		[ -n "$stderr" ]
	done
	run --separate-stderr "$ODBFS_CAT" "$repo" "$id"
	[ "$status" -eq 1 ]
	[ -z "$output" ]
	[ -n "$stderr" ]
}

# mixed_input REPO: every object id, then missing full ids, lines that are
# no ids, an empty line, and some ids again. Left out: what git resolves
# and odbfs-cat, which takes full lowercase ids only, does not: an id in
# upper case, an abbreviated id, ref names, HEAD, <rev>:<path>.
mixed_input() {
	local repo=$1 id zeros

	id=$(git -C "$repo" rev-parse HEAD)
	zeros=${id//?/0}
	all_ids "$repo"
	printf '%s\n' \
		"$zeros" \
		"${zeros:0:${#id}-1}1" \
		"${id:0:${#id}-1}g" \
		"${id}0" \
		"$id$id" \
		"" \
		"garbage" \
		"zz" \
		"-" \
		"   " \
		"$id extra" \
		" $id" \
		"$(printf 'a\tb')" \
		"$id"
	for id in $(all_ids "$repo" | sed -n '1p;7p;$p'); do
		echo "${id:0:${#id}-1}$(tr 0-9a-f 1-9a-f0 <<<"${id: -1}")"
		echo "$id"
	done
	# No newline after the last line.
	printf 'not-an-id-at-the-end'
}

# check_batch REPO: odbfs-cat --batch-check and --batch print what git
# cat-file does for mixed_input, byte for byte.
check_batch() {
	local repo=$1 t=$BATS_TEST_TMPDIR

	mixed_input "$repo" >"$t/input"
	# The input does have missing ids (and not only those the tr above may
	# have turned into existing ones).
	git -C "$repo" cat-file --batch-check <"$t/input" >"$t/want"
	[ "$(grep -c ' missing$' "$t/want")" -ge 14 ]
	"$ODBFS_CAT" --batch-check "$repo" <"$t/input" >"$t/got"
	cmp "$t/want" "$t/got" || { diff "$t/want" "$t/got" >&2; return 1; }
	git -C "$repo" cat-file --batch <"$t/input" >"$t/want"
	"$ODBFS_CAT" --batch "$repo" <"$t/input" >"$t/got"
	cmp "$t/want" "$t/got"
}

@test "--batch: loose objects" {
	[ "$(git -C "$D/loose" count-objects -v | sed -n 's/^packs: //p')" -eq 0 ]
	check_cat_objects "$D/loose"
}

@test "--batch: one pack with OFS_DELTA entries" {
	[ "$(git -C "$D/packed" count-objects -v | sed -n 's/^count: //p')" -eq 0 ]
	check_cat_objects "$D/packed"
}

@test "--batch: one pack with REF_DELTA entries" {
	local pack=("$D"/refdelta/.git/objects/pack/*.pack)

	[ "${#pack[@]}" -eq 1 ]
	[ "$(git -C "$D/refdelta" count-objects -v | sed -n 's/^count: //p')" -eq 0 ]
	# At least one entry is a REF_DELTA (type 7 in bits 4-6 of its first
	# byte).
	git -C "$D/refdelta" verify-pack -v "${pack[0]}" |
		awk 'NF == 7 && $1 ~ /^[0-9a-f]+$/ { print $5 }' >"$BATS_TEST_TMPDIR/offs"
	[ -s "$BATS_TEST_TMPDIR/offs" ]
	[ $(( $(od -An -tu1 -j "$(head -1 "$BATS_TEST_TMPDIR/offs")" -N1 \
		"${pack[0]}") >> 4 & 7 )) -eq 7 ]
	check_cat_objects "$D/refdelta"
}

@test "--batch: a sha256 repository, packed and loose" {
	[ "$(git -C "$D/sha256" rev-parse --show-object-format)" = sha256 ]
	check_cat_objects "$D/sha256"
}

@test "--batch: several packs, loose objects and an alternate" {
	local first=$BATS_TEST_TMPDIR/first repo=$BATS_TEST_TMPDIR/repo

	cp -a "$D/packed" "$first"
	git clone -q --shared "$first" "$repo"
	add_commits "$repo" 21 23
	git -C "$repo" repack -dq
	add_commits "$repo" 24 25
	check_cat_objects "$repo"
}

@test "--batch: blobs of more than 8 MiB, loose and packed" {
	local repo=$BATS_TEST_TMPDIR/repo

	git init -q "$repo"
	{ seq 1 1200000; head -c 1000000 /dev/urandom; } >"$repo/big"
	[ "$(stat -c %s "$repo/big")" -gt $((8 << 20)) ]
	git -C "$repo" add big
	git -C "$repo" commit -q -m big
	sed -i 's/^500000$/changed/' "$repo/big"
	git -C "$repo" commit -q -a -m changed
	check_cat_objects "$repo"
	git -C "$repo" repack -adfq
	check_cat_objects "$repo"
}

@test "--batch-check and --batch on mixed input equal git's, sha1" {
	check_batch "$D/packed"
	check_batch "$D/loose"
}

@test "--batch-check and --batch on mixed input equal git's, sha256" {
	check_batch "$D/sha256"
}

@test "-t, -s, -e and the payload equal git's: loose and REF_DELTA" {
	check_single "$D/loose"
	check_single "$D/refdelta"
}

@test "-t, -s, -e and the payload equal git's: sha256" {
	check_single "$D/sha256"
}

@test "a missing full id: -e exits 1, -t, -s and the payload fail" {
	local id

	id=$(git -C "$D/packed" rev-parse HEAD)
	check_missing "$D/packed" "${id//?/0}"
	check_missing "$D/packed" "${id:0:39}$(tr 0-9a-f 1-9a-f0 <<<"${id:39}")"
	check_missing "$D/loose" "${id:0:39}$(tr 0-9a-f 1-9a-f0 <<<"${id:39}")"
	id=$(git -C "$D/sha256" rev-parse HEAD)
	check_missing "$D/sha256" "${id//?/0}"
}
