#!/usr/bin/env bats
# objects/ through the mount, for every shape a repository's object
# database takes: loose, packed (OFS_DELTA and REF_DELTA), indexes with
# 64-bit offsets and of version 1, several packs with duplicates, alternates,
# sha256, a streamed multi-MiB blob, bare repositories, .git files and
# linked worktrees. Every check compares with git.

load lib

MiB=$((1 << 20))

setup_file() {
	local big=$BATS_FILE_TMPDIR/big

	make_history "$BATS_FILE_TMPDIR/base"

	# The base history plus a 12 MiB blob (more than odbfs holds in memory,
	# so it is streamed) and a second version of it, changed in the middle
	# and one byte longer, which git packs as a delta of the other.
	cp -a "$BATS_FILE_TMPDIR/base" "$big"
	{
		head -c $((3 * MiB)) /dev/urandom
		seq 1 1000000
		head -c $((3 * MiB)) /dev/urandom
		seq 5 5 2000000
	} | head -c $((12 * MiB)) >"$big/big.bin"
	git -C "$big" add big.bin
	git -C "$big" commit -q -m "a big blob"
	printf 'patched in the middle' |
		dd of="$big/big.bin" bs=1 seek=6000000 conv=notrunc status=none
	printf x >>"$big/big.bin"
	git -C "$big" commit -q -a -m "the big blob, changed"
}

setup() {
	REPO=$BATS_TEST_TMPDIR/repo
	MNT=$BATS_TEST_TMPDIR/mnt
}

teardown() {
	unmount_odbfs "$MNT"
}

# objstat REPO KEY: one field of git count-objects -v ("count" is the
# number of loose objects, "packs" the number of packs).
objstat() {
	git -C "$1" count-objects -v | sed -n "s/^$2: //p"
}

# delta_types PACK: the in-pack types of the pack's deltified entries
# (6 OFS_DELTA, 7 REF_DELTA), sorted and unique; nothing if there is none.
# The type is bits 4-6 of the first byte of the entry's header. (The packs
# here are small enough to dump whole, one byte a line.)
delta_types() {
	local pack=$1

	# -C: verify-pack takes the object format from the repository.
	git -C "${pack%/*}" verify-pack -v "$pack" >"$BATS_TEST_TMPDIR/verify"
	od -An -v -tu1 -w1 "$pack" >"$BATS_TEST_TMPDIR/bytes"
	awk 'FILENAME == ARGV[1] { byte[NR - 1] = $1; next }
	    NF == 7 && $1 ~ /^[0-9a-f]+$/ { print int(byte[$5] / 16) % 8 }' \
		"$BATS_TEST_TMPDIR/bytes" "$BATS_TEST_TMPDIR/verify" | sort -u
}

# check_objects REPO MNT: what check_mount_objects checks, in a dozen
# processes rather than three an object (a process costs milliseconds
# here): every object, read through objects/<id> and through
# objects/xx/<id>, is byte-identical to git cat-file's payload, and its
# size and user.git.type are git's. The payloads are compared as one
# stream laid out like git cat-file --batch='%(objectname)' output; on a
# difference, check_mount_objects names the objects.
check_objects() {
	local repo=$1 mnt=$2 d=$BATS_TEST_TMPDIR/check id type size
	local -a top=() fan=() ids=()

	mkdir -p "$d/hdr"
	printf '\n' >"$d/nl"
	git -C "$repo" cat-file --batch-all-objects \
		--batch-check='%(objectname) %(objecttype) %(objectsize)' \
		>"$d/info"
	[ -s "$d/info" ] || return 1
	while read -r id type size; do
		printf '%s\n' "$id" >"$d/hdr/$id"
		ids+=("$id")
		top+=("$d/hdr/$id" "$mnt/objects/$id" "$d/nl")
		fan+=("$d/hdr/$id" "$mnt/objects/${id:0:2}/$id" "$d/nl")
	done <"$d/info"
	git -C "$repo" cat-file --batch-all-objects --batch='%(objectname)' \
		>"$d/want"
	cat "${top[@]}" >"$d/got" || return 1
	if ! cmp "$d/want" "$d/got"; then
		check_mount_objects "$repo" "$mnt"
		return 1
	fi
	cat "${fan[@]}" >"$d/got" || return 1
	cmp "$d/want" "$d/got" || return 1

	# "id type size" of every object, as odbfs has them.
	(cd "$mnt/objects" && getfattr -n user.git.type -- "${ids[@]}") \
		>"$d/xattrs" || return 1
	(cd "$mnt/objects" && stat -c '%n %s' -- "${ids[@]}") >"$d/sizes" ||
		return 1
	awk 'FILENAME == ARGV[1] && /^# file: / { id = $3 }
	    FILENAME == ARGV[1] && /^user.git.type="/ {
		split($0, v, "\""); type[id] = v[2] }
	    FILENAME == ARGV[2] { print $1, type[$1], $2 }' \
		"$d/xattrs" "$d/sizes" >"$d/got.info"
	diff -u "$d/info" "$d/got.info"
}

# check_listing REPO MNT: objects/xx/ lists every object exactly once, in
# the directory of its first two hex digits, and nothing else.
check_listing() {
	local repo=$1 mnt=$2 n

	all_ids "$repo" | sort -u >"$BATS_TEST_TMPDIR/ids"
	n=$(wc -l <"$BATS_TEST_TMPDIR/ids")
	sed -E 's|^(..)|\1/\1|' "$BATS_TEST_TMPDIR/ids" >"$BATS_TEST_TMPDIR/want"
	find "$mnt/objects" -mindepth 2 -type f -printf '%P\n' \
		>"$BATS_TEST_TMPDIR/found" || return 1
	sort "$BATS_TEST_TMPDIR/found" >"$BATS_TEST_TMPDIR/got"
	diff -u "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got" || return 1
	[ "$(wc -l <"$BATS_TEST_TMPDIR/found")" -eq "$n" ] || return 1
	[ "$(find "$mnt/objects" -mindepth 3 | wc -l)" -eq 0 ]
}

# check_types REPO MNT: for the first object of each type and every
# twenty-fifth one, getfattr --only-values -n user.git.type equals git
# cat-file -t. (check_objects has compared the type of every object
# already, in one getfattr.)
check_types() {
	local repo=$1 mnt=$2 id type got want types=

	while read -r id type; do
		got=$(getfattr --only-values -n user.git.type "$mnt/objects/$id")
		want=$(git -C "$repo" cat-file -t "$id")
		if [ "$got" != "$want" ]; then
			echo "user.git.type of $id is '$got', git says '$want'" >&2
			return 1
		fi
		[[ " $types " == *" $type "* ]] || types="$types $type"
	done < <(awk '!seen[$2]++ || NR % 25 == 0 { print $1, $2 }' \
		"$BATS_TEST_TMPDIR/check/info")
	# Every history here has all four types.
	[ "$(wc -w <<<"$types")" -eq 4 ]
}

# check_all REPO: mount REPO and check every object, the listing and the
# types against git.
check_all() {
	mount_odbfs "$1" "$MNT" &&
		check_objects "$1" "$MNT" &&
		check_listing "$1" "$MNT" &&
		check_types "$1" "$MNT"
}

# check_offsets REPO ID [few]: reads of object ID at offsets around the ends of
# the object and the streaming reader's chunk (1 MiB), window (4 MiB) and
# in-memory limit (8 MiB), both through the page cache (dd bs=1) and with
# O_DIRECT (so each read reaches odbfs at that offset and size), many of
# them going backwards, give the same bytes as git cat-file's output.
# With "few", only some of them (for an object odbfs holds in memory).
check_offsets() {
	local repo=$1 id=$2 few=${3:-} d=$BATS_TEST_TMPDIR/offsets
	local size spec off len
	local -a small direct

	mkdir -p "$d"
	git -C "$repo" cat-file blob "$id" >"$d/payload"
	size=$(stat -c %s "$d/payload")
	[ "$size" -gt $((8 * MiB)) ] || return 1
	small=("$((size - 100)) 1000" "$((size - 1)) 1" "$size 10"
		"$((size + 10)) 10" "$((9 * MiB + 7)) 333"
		"$((5 * MiB + 12345)) 4096" "$((8 * MiB - 1)) 2"
		"$((4 * MiB - 3)) 7" "$((MiB + 1)) 100" "$MiB 1" "$((MiB - 1)) 3"
		"4095 2" "1 1" "0 4096")
	direct=("$((size - MiB)) $MiB" "$((2 * MiB)) $MiB" "0 $MiB"
		"$((3 * MiB + 5)) $((5 * MiB))" "$((11 * MiB + 1)) $((2 * MiB))"
		"17 $((6 * MiB))" "$((10 * MiB - 9)) 4099" "$((size - 3)) 7"
		"$((4 * MiB)) 1")
	if [ -n "$few" ]; then
		small=("${small[@]:0:3}" "${small[@]: -2}")
		direct=("${direct[@]:0:4}")
	fi
	# One file of all the slices from each side, then one cmp.
	for spec in "${small[@]}"; do
		read -r off len <<<"$spec"
		dd if="$MNT/objects/$id" bs=1 skip="$off" count="$len" status=none
	done >"$d/got"
	for spec in "${direct[@]}"; do
		read -r off len <<<"$spec"
		dd if="$MNT/objects/$id" iflag=direct,skip_bytes bs="$len" \
			skip="$off" count=1 status=none
	done >>"$d/got"
	for spec in "${small[@]}" "${direct[@]}"; do
		read -r off len <<<"$spec"
		dd if="$d/payload" iflag=skip_bytes,count_bytes bs=64K \
			skip="$off" count="$len" status=none
	done >"$d/want"
	if ! cmp "$d/want" "$d/got"; then
		echo "reads of $id at (offset length): ${small[*]}," \
			"then O_DIRECT: ${direct[*]}" >&2
		return 1
	fi
}

@test "loose objects only" {
	cp -a "$BATS_FILE_TMPDIR/base" "$REPO"
	[ "$(objstat "$REPO" packs)" -eq 0 ]
	[ "$(objstat "$REPO" count)" -gt 100 ]
	check_all "$REPO"
}

@test "one pack with OFS_DELTA entries" {
	cp -a "$BATS_FILE_TMPDIR/base" "$REPO"
	git -C "$REPO" repack -adfq
	[ "$(objstat "$REPO" packs)" -eq 1 ]
	[ "$(objstat "$REPO" count)" -eq 0 ]
	[ "$(delta_types "$REPO"/.git/objects/pack/*.pack)" = 6 ]
	check_all "$REPO"
}

@test "one pack with REF_DELTA entries" {
	cp -a "$BATS_FILE_TMPDIR/base" "$REPO"
	git -C "$REPO" -c repack.useDeltaBaseOffset=false repack -adfq
	[ "$(objstat "$REPO" packs)" -eq 1 ]
	[ "$(objstat "$REPO" count)" -eq 0 ]
	[ "$(delta_types "$REPO"/.git/objects/pack/*.pack)" = 7 ]
	check_all "$REPO"
}

@test "a pack index with 64-bit offsets" {
	local pack idx

	cp -a "$BATS_FILE_TMPDIR/base" "$REPO"
	git -C "$REPO" repack -adfq
	pack=$(echo "$REPO"/.git/objects/pack/*.pack)
	idx=${pack%.pack}.idx
	mv "$idx" "$BATS_TEST_TMPDIR/plain.idx"
	# Every offset above 0x100 goes to the 64-bit table.
	git index-pack --index-version=2,0x100 -o "$idx" "$pack" >/dev/null
	[ "$(od -An -tx1 -N8 "$idx" | tr -d ' ')" = ff744f6300000002 ]
	[ "$(stat -c %s "$idx")" -gt "$(stat -c %s "$BATS_TEST_TMPDIR/plain.idx")" ]
	check_all "$REPO"
}

@test "a pack index of version 1" {
	local pack idx n

	cp -a "$BATS_FILE_TMPDIR/base" "$REPO"
	git -C "$REPO" repack -adfq
	pack=$(echo "$REPO"/.git/objects/pack/*.pack)
	idx=${pack%.pack}.idx
	mv "$idx" "$BATS_TEST_TMPDIR/plain.idx"
	git index-pack --index-version=1 -o "$idx" "$pack" >/dev/null
	# Version 1: no magic; 256 fan-out words, 24 bytes an object, two
	# 20-byte checksums.
	n=$(all_ids "$REPO" | wc -l)
	[ "$(od -An -tx1 -N4 "$idx" | tr -d ' ')" != ff744f63 ]
	[ "$(stat -c %s "$idx")" -eq $((1024 + 24 * n + 40)) ]
	check_all "$REPO"
}

@test "several packs, loose objects, and objects stored twice" {
	local stored=0 idx

	cp -a "$BATS_FILE_TMPDIR/base" "$REPO"
	git -C "$REPO" repack -dq		# pack A: commits 1-20
	add_commits "$REPO" 21 25
	git -C "$REPO" repack -aq		# pack B: all; A and loose stay
	add_commits "$REPO" 26 28		# loose only
	[ "$(objstat "$REPO" packs)" -eq 2 ]
	[ "$(objstat "$REPO" count)" -gt 0 ]
	for idx in "$REPO"/.git/objects/pack/*.idx; do
		stored=$((stored + $(git show-index <"$idx" | wc -l)))
	done
	stored=$((stored + $(objstat "$REPO" count)))
	# Some objects are in both packs, some both loose and packed.
	[ "$stored" -gt "$(all_ids "$REPO" | wc -l)" ]
	check_all "$REPO"
}

@test "an alternate object directory" {
	local first=$BATS_TEST_TMPDIR/first

	cp -a "$BATS_FILE_TMPDIR/base" "$first"
	git -C "$first" repack -adq
	git clone -q --shared "$first" "$REPO"
	git -C "$REPO" config gc.auto 0
	add_commits "$REPO" 21 23
	grep -qx "$first/.git/objects" "$REPO/.git/objects/info/alternates"
	[ "$(objstat "$REPO" packs)" -eq 0 ]
	# Most objects are only in the alternate.
	[ "$(objstat "$REPO" count)" -gt 0 ]
	[ "$(all_ids "$REPO" | wc -l)" -gt $((2 * $(objstat "$REPO" count))) ]
	check_all "$REPO"
}

@test "chained alternates, one by a relative path" {
	local first=$BATS_TEST_TMPDIR/first second=$BATS_TEST_TMPDIR/second

	cp -a "$BATS_FILE_TMPDIR/base" "$first"
	git -C "$first" repack -adq
	git clone -q --shared "$first" "$second"
	add_commits "$second" 21 22
	git init -q "$REPO"
	git -C "$REPO" config gc.auto 0
	# Relative to $REPO/.git/objects.
	echo ../../../second/.git/objects >"$REPO/.git/objects/info/alternates"
	git -C "$REPO" reset -q --hard "$(git -C "$second" rev-parse HEAD)"
	add_commits "$REPO" 23 24
	[ "$(objstat "$REPO" count)" -gt 0 ]
	git -C "$REPO" cat-file -e "$(git -C "$first" rev-parse HEAD~5)"
	check_all "$REPO"
}

@test "alternates: a C-quoted line is unquoted, as git unquotes it" {
	local first="$BATS_TEST_TMPDIR/with \"quotes\", a \\ and a"$'\t'tab

	cp -a "$BATS_FILE_TMPDIR/base" "$first"
	git -C "$first" repack -adq
	git init -q "$REPO"
	git -C "$REPO" config gc.auto 0
	# git writes such a line for a path that needs quoting.
	printf '# a comment\n"%s/.git/objects"\n' \
		"$(printf '%s' "$first" | sed 's/\\/\\\\/g; s/"/\\"/g; s/\t/\\t/g')" \
		>"$REPO/.git/objects/info/alternates"
	git -C "$REPO" reset -q --hard "$(git -C "$first" rev-parse HEAD)"
	add_commits "$REPO" 21 21
	git -C "$REPO" cat-file -e "$(git -C "$first" rev-parse HEAD~5)"
	[ "$(objstat "$REPO" packs)" -eq 0 ]
	check_all "$REPO"
	[ ! -s "$MNT.log" ]
}

# alt_chain N: $REPO, whose alternates nest N deep (a1 ... aN, each a bare
# repository naming the next), and in each a blob of its own; the blobs'
# ids in ALT_IDS, [i] the one in ai.
alt_chain() {
	local i
	ALT_IDS=()
	git init -q --bare "$REPO"
	for i in $(seq 1 "$1"); do
		git init -q --bare "$BATS_TEST_TMPDIR/a$i"
		ALT_IDS[i]=$(echo "blob $i deep" |
			git --git-dir="$BATS_TEST_TMPDIR/a$i" hash-object -w --stdin)
	done
	echo "$BATS_TEST_TMPDIR/a1/objects" >"$REPO/objects/info/alternates"
	for i in $(seq 1 $(($1 - 1))); do
		echo "$BATS_TEST_TMPDIR/a$((i + 1))/objects" \
			>"$BATS_TEST_TMPDIR/a$i/objects/info/alternates"
	done
}

@test "alternates nested 6 deep are followed as git follows them; the 7th is not, with one log line" {
	local i

	alt_chain 7
	# git (2.39 and 2.55) serves six and refuses the seventh.
	for i in 1 2 3 4 5 6; do
		git -C "$REPO" cat-file -e "${ALT_IDS[i]}"
	done
	run git -C "$REPO" cat-file -e "${ALT_IDS[7]}"
	[ "$status" -ne 0 ]
	[[ $output == *"a6/objects: ignoring alternate object stores, nesting too deep"* ]]
	mount_odbfs "$REPO" "$MNT"
	for i in 1 2 3 4 5 6; do
		cmp <(echo "blob $i deep") "$MNT/objects/${ALT_IDS[i]}"
	done
	[ ! -e "$MNT/objects/${ALT_IDS[7]}" ]
	logged_once "a6/objects: ignoring alternate object stores, nesting too deep"
	[ "$(wc -l <"$MNT.log")" -eq 1 ]
}

@test "alternates lines: a CR or blanks at the end are part of the path, as git; /. padding past PATH_MAX is read, as git" {
	local pad=
	alt_chain 4
	# a1 and a2 by lines git cannot use (it keeps a '\r' and trailing
	# blanks as part of the path); a3 by a path padded with "/." past
	# PATH_MAX, which git reads; a4 through a3.
	while [ ${#pad} -lt 4100 ]; do pad=$pad/.; done
	{
		printf '%s/a1/objects\r\n' "$BATS_TEST_TMPDIR"
		printf '%s/a2/objects  \n' "$BATS_TEST_TMPDIR"
		printf '%s%s/a3/objects\n' "$BATS_TEST_TMPDIR" "$pad"
	} >"$REPO/objects/info/alternates"
	run git -C "$REPO" cat-file -e "${ALT_IDS[1]}"
	[ "$status" -ne 0 ]
	run git -C "$REPO" cat-file -e "${ALT_IDS[2]}"
	[ "$status" -ne 0 ]
	git -C "$REPO" cat-file -e "${ALT_IDS[3]}"
	git -C "$REPO" cat-file -e "${ALT_IDS[4]}"
	mount_odbfs "$REPO" "$MNT"
	[ ! -e "$MNT/objects/${ALT_IDS[1]}" ]
	[ ! -e "$MNT/objects/${ALT_IDS[2]}" ]
	cmp <(echo "blob 3 deep") "$MNT/objects/${ALT_IDS[3]}"
	cmp <(echo "blob 4 deep") "$MNT/objects/${ALT_IDS[4]}"
	# The two git cannot use are said once each, as missing.
	logged_once "alternate $BATS_TEST_TMPDIR/a1/objects"
	logged_once "alternate $BATS_TEST_TMPDIR/a2/objects  : No such file"
	[ "$(wc -l <"$MNT.log")" -eq 2 ]
}

# alt_padded BYTES: $REPO, whose alternates file holds BYTES of comment
# lines (up to 80 bytes each), then the path of a repository holding
# every object; its HEAD is that repository's.
alt_padded() {
	local first=$BATS_TEST_TMPDIR/first

	cp -a "$BATS_FILE_TMPDIR/base" "$first"
	git -C "$first" repack -adq
	git init -q "$REPO"
	git -C "$REPO" config gc.auto 0
	awk -v n="$1" 'BEGIN {
		for (; n > 80; n -= 80) printf "#%78s\n", "padding"
		if (n) printf "#%*s\n", n - 2, ""
	}' >"$REPO/.git/objects/info/alternates"
	[ "$(stat -c %s "$REPO/.git/objects/info/alternates")" -eq "$1" ]
	echo "$first/.git/objects" >>"$REPO/.git/objects/info/alternates"
	git -C "$REPO" reset -q --hard "$(git -C "$first" rev-parse HEAD)"
}

@test "an alternates file of 2 MiB of comments is read whole, as git reads it" {
	alt_padded $((2 * MiB))
	git -C "$REPO" cat-file -e "$(git -C "$REPO" rev-parse HEAD~5)"
	check_all "$REPO"
	[ ! -s "$MNT.log" ]
}

@test "an alternates line across the 1 MiB mark and stdio's buffers is read whole" {
	# The path starts 20 bytes before 1 MiB and ends after it.
	alt_padded $((MiB - 20))
	check_all "$REPO"
	[ ! -s "$MNT.log" ]
}

@test "a sha256 repository, REF_DELTA pack and loose" {
	make_history "$REPO" --object-format=sha256
	git -C "$REPO" -c repack.useDeltaBaseOffset=false repack -adfq
	add_commits "$REPO" 21 22
	[ "$(git -C "$REPO" rev-parse --show-object-format)" = sha256 ]
	[ "$(all_ids "$REPO" | head -1 | tr -d '\n' | wc -c)" -eq 64 ]
	[ "$(objstat "$REPO" packs)" -eq 1 ]
	[ "$(objstat "$REPO" count)" -gt 0 ]
	[ "$(delta_types "$REPO"/.git/objects/pack/*.pack)" = 7 ]
	check_all "$REPO"
}

@test "a 12 MiB blob, loose: streamed, read at any offset" {
	local id

	cp -a "$BATS_FILE_TMPDIR/big" "$REPO"
	[ "$(objstat "$REPO" packs)" -eq 0 ]
	check_all "$REPO"
	id=$(git -C "$REPO" rev-parse HEAD~:big.bin)
	[ "$(stat -c %s "$MNT/objects/$id")" -eq $((12 * MiB)) ]
	check_offsets "$REPO" "$id"
}

@test "a 12 MiB blob, packed: whole and as a delta, read at any offset" {
	local pack id deltas=0 whole delta

	cp -a "$BATS_FILE_TMPDIR/big" "$REPO"
	git -C "$REPO" repack -adfq
	pack=$(echo "$REPO"/.git/objects/pack/*.pack)
	git verify-pack -v "$pack" >"$BATS_TEST_TMPDIR/verify"
	# One of the two versions is stored whole, the other as a delta.
	for id in $(git -C "$REPO" rev-parse HEAD:big.bin HEAD~:big.bin); do
		if awk -v id="$id" '$1 == id && NF == 7 { f = 1 } END { exit !f }' \
			"$BATS_TEST_TMPDIR/verify"; then
			deltas=$((deltas + 1))
			delta=$id
		else
			whole=$id
		fi
	done
	[ "$deltas" -eq 1 ]
	check_all "$REPO"
	check_offsets "$REPO" "$whole"
	check_offsets "$REPO" "$delta" few
}

@test "a bare repository" {
	REPO=$BATS_TEST_TMPDIR/repo.git
	cp -a "$BATS_FILE_TMPDIR/base/.git" "$REPO"
	git -C "$REPO" config core.bare true
	git -C "$REPO" repack -dq
	[ "$(git -C "$REPO" rev-parse --is-bare-repository)" = true ]
	[ "$(objstat "$REPO" packs)" -eq 1 ]
	check_all "$REPO"
}

@test "a work tree whose .git is a file naming the git directory" {
	cp -a "$BATS_FILE_TMPDIR/base" "$REPO"
	mv "$REPO/.git" "$BATS_TEST_TMPDIR/elsewhere.git"
	echo "gitdir: ../elsewhere.git" >"$REPO/.git"
	git -C "$REPO" repack -dq
	add_commits "$REPO" 21 22
	[ -f "$REPO/.git" ]
	[ "$(objstat "$REPO" packs)" -eq 1 ]
	check_all "$REPO"
}

@test "a linked worktree" {
	local wt=$BATS_TEST_TMPDIR/wt

	cp -a "$BATS_FILE_TMPDIR/base" "$REPO"
	git -C "$REPO" repack -dq
	git -C "$REPO" worktree add -q -b side "$wt" HEAD~5
	add_commits "$wt" 21 22
	[ -f "$wt/.git" ]
	[ "$(git -C "$wt" rev-parse --git-dir)" != \
		"$(git -C "$wt" rev-parse --git-common-dir)" ]
	# The worktree's new objects are in the common object directory.
	git -C "$REPO" cat-file -e side
	check_all "$wt"
	diff <(all_ids "$wt" | sort) <(all_ids "$REPO" | sort)
}

@test "a blob over 1 GiB is streamed: its first and last MiB are git's" {
	local repo=$BATS_TEST_TMPDIR/gib id size
	git init -q --bare "$repo"
	# 1200 MiB of one byte: about a MiB on disk, loose.
	id=$(head -c $((1200 * MiB)) /dev/zero | tr '\0' x |
		git -C "$repo" hash-object -w --stdin)
	size=$(git -C "$repo" cat-file -s "$id")
	mount_odbfs "$repo" "$MNT"
	[ "$(stat -c %s "$MNT/objects/$id")" -eq "$size" ]
	cmp <(dd if="$MNT/objects/$id" bs=1M count=1 status=none) \
		<(git -C "$repo" cat-file blob "$id" | head -c "$MiB")
	cmp <(dd if="$MNT/objects/$id" bs=1M skip=1199 status=none) \
		<(git -C "$repo" cat-file blob "$id" | tail -c "$MiB")
	unmount_odbfs "$MNT"
	[ "$ODBFS_STATUS" -eq 0 ]
}
