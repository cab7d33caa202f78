#!/usr/bin/env bats
# The mount's behaviour around the objects: which names exist and which get
# ENOENT, that every write fails with EROFS, how the daemon ends (SIGTERM,
# fusermount3 -u), how it fails on bad arguments before mounting, its
# --help and -V, and inode numbers that stay the same across a remount;
# under tests/run, of the release build (the other suites mount the build
# with assertions on).

bats_require_minimum_version 1.5.0

load lib

setup_file() {
	# Packed and loose objects both.
	make_history "$BATS_FILE_TMPDIR/repo"
	git -C "$BATS_FILE_TMPDIR/repo" repack -dq
	add_commits "$BATS_FILE_TMPDIR/repo" 21 22
}

setup() {
	REPO=$BATS_FILE_TMPDIR/repo
	MNT=$BATS_TEST_TMPDIR/mnt
	mkdir -p "$MNT"
}

teardown() {
	unmount_odbfs "$MNT"
}

# expect_errno MESSAGE PATH...: stat fails on every PATH with MESSAGE
# (strerror of the errno), in one stat process.
expect_errno() {
	local msg=$1 path bad=0

	shift
	if stat -- "$@" >"$BATS_TEST_TMPDIR/stat.out" \
		2>"$BATS_TEST_TMPDIR/stat.err"; then
		echo "stat succeeded on all of: $*" >&2
		return 1
	fi
	for path in "$@"; do
		if ! grep -qF "'$path': $msg" "$BATS_TEST_TMPDIR/stat.err"; then
			echo "stat $path did not fail with '$msg'" >&2
			bad=1
		fi
	done
	[ "$bad" -eq 0 ] || { cat "$BATS_TEST_TMPDIR/stat.err" >&2; return 1; }
}

# a_missing_id REPO ID: an id of the same length as ID, in the same
# fan-out, that is no object of REPO.
a_missing_id() {
	local repo=$1 id=$2 c

	for c in 0 1 2 3; do
		id=${id:0:${#id}-1}$c
		if ! git -C "$repo" cat-file -e "$id" 2>/dev/null; then
			echo "$id"
			return 0
		fi
	done
	return 1
}

# assert_not_mounted: nothing is mounted on $MNT, nor anywhere for $REPO.
assert_not_mounted() {
	# (A "! cmd" line fails no bats test, so each returns explicitly.)
	if mountpoint -q "$MNT" || grep -qF " $MNT " /proc/mounts ||
		grep -qF "odbfs:$REPO" /proc/mounts; then
		echo "something is mounted:" >&2
		grep -F odbfs /proc/mounts >&2
		return 1
	fi
}

@test "the root has objects/, and objects/ lists exactly the fan-outs in use" {
	mount_odbfs "$REPO" "$MNT"
	ls -A "$MNT" | grep -qx objects
	[ -d "$MNT/objects" ]
	all_ids "$REPO" | cut -c1-2 | sort -u >"$BATS_TEST_TMPDIR/want"
	ls -A "$MNT/objects" >"$BATS_TEST_TMPDIR/got"
	diff -u "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got"
	# This history leaves some fan-outs empty, so the test means something.
	[ "$(wc -l <"$BATS_TEST_TMPDIR/want")" -lt 256 ]
}

@test "names that are not canonical object ids get ENOENT" {
	local id missing upper other mixed short

	mount_odbfs "$REPO" "$MNT"
	id=$(git -C "$REPO" rev-parse HEAD)
	[ -f "$MNT/objects/$id" ]
	[ -f "$MNT/objects/${id:0:2}/$id" ]
	[ "${id^^}" != "$id" ]
	# The id with only its last letter in upper case.
	mixed=$(sed -E 's/^(.*)([a-f])/\1\u\2/' <<<"$id")
	[ "$mixed" != "$id" ]
	# 39 hex digits that begin no object id. (Those that do: see the
	# abbreviated-id test below.)
	short=$(tr 0-9a-f 1-9a-f0 <<<"${id:0:39}")
	run grep -c "^$short" <(all_ids "$REPO")
	[ "$output" = 0 ]
	# A fan-out with no objects, one in use in upper case, and one in use
	# other than the id's.
	read -r missing upper other < <(all_ids "$REPO" | awk -v own="${id:0:2}" '
		{ used[substr($1, 1, 2)] = 1 }
		END {
			for (i = 0; i < 256; i++) {
				f = sprintf("%02x", i)
				if (!(f in used)) {
					if (m == "") m = f
					continue
				}
				if (u == "" && f ~ /[a-f]/) u = toupper(f)
				if (o == "" && f != own) o = f
			}
			print m, u, o
		}')
	[ -n "$missing" ]
	[ -n "$upper" ]
	[ -n "$other" ]
	expect_errno "No such file or directory" \
		"$MNT/objects/${id^^}" \
		"$MNT/objects/$mixed" \
		"$MNT/objects/$short" \
		"$MNT/objects/${id}0" \
		"$MNT/objects/${id:0:39}g" \
		"$MNT/objects/${id:0:20}-${id:21}" \
		"$MNT/objects/zz" \
		"$MNT/objects/$missing" \
		"$MNT/objects/$upper" \
		"$MNT/objects/${id:0:1}" \
		"$MNT/objects/${id:0:3}" \
		"$MNT/objects/${id:0:2}/${id^^}" \
		"$MNT/objects/${id:0:2}/${id:0:39}" \
		"$MNT/objects/${id:0:2}/${id}0" \
		"$MNT/objects/${id:0:2}/${id:0:2}" \
		"$MNT/objects/$other/$id" \
		"$MNT/objects/$missing/$id"
	# The names that exist still do.
	[ -f "$MNT/objects/$id" ]
	[ -d "$MNT/objects/${id:0:2}" ]
}

@test "an abbreviated id in objects/ is a symlink to the full id" {
	local id

	mount_odbfs "$REPO" "$MNT"
	id=$(git -C "$REPO" rev-parse HEAD)
	[ "$(git -C "$REPO" rev-parse "${id:0:39}")" = "$id" ]
	[ "$(readlink "$MNT/objects/${id:0:39}")" = "$id" ]
	[ "$(readlink "$MNT/objects/${id:0:12}")" = "$id" ]
	cmp "$MNT/objects/${id:0:12}" <(git -C "$REPO" cat-file commit "$id")
	# Three digits are too few to name an object.
	expect_errno "No such file or directory" "$MNT/objects/${id:0:3}"
}

@test "a full id that is no object gets ENOENT" {
	local id missing zeros

	mount_odbfs "$REPO" "$MNT"
	id=$(git -C "$REPO" rev-parse HEAD:README)
	missing=$(a_missing_id "$REPO" "$id")
	zeros=0000000000000000000000000000000000000000
	run git -C "$REPO" cat-file -e "$zeros"
	[ "$status" -ne 0 ]
	expect_errno "No such file or directory" \
		"$MNT/objects/$missing" \
		"$MNT/objects/${missing:0:2}/$missing" \
		"$MNT/objects/$zeros"
	run cat "$MNT/objects/$missing"
	[ "$status" -ne 0 ]
	[[ $output == *"No such file or directory"* ]]
	# A miss does not hide the object next to it.
	cmp <(git -C "$REPO" cat-file blob "$id") "$MNT/objects/$id"
}

@test "objects are 0644 regular files of their size, directories 0755" {
	local id

	mount_odbfs "$REPO" "$MNT"
	id=$(git -C "$REPO" rev-parse HEAD:README)
	[ "$(stat -c '%F %a %h %s' "$MNT/objects/$id")" = \
		"regular file 644 1 $(git -C "$REPO" cat-file -s "$id")" ]
	[ "$(stat -c '%F %a' "$MNT" "$MNT/objects" "$MNT/objects/${id:0:2}")" = \
		"$(printf 'directory 755\n%.0s' 1 2 3)" ]
}

@test "writes fail with EROFS and change nothing" {
	local id

	mount_odbfs "$REPO" "$MNT"
	id=$(git -C "$REPO" rev-parse HEAD:README)
	run touch "$MNT/objects/x"
	[ "$status" -ne 0 ]
	[[ $output == *"Read-only file system"* ]]
	run bash -c 'echo >"$1"' _ "$MNT/objects/$id"
	[ "$status" -ne 0 ]
	[[ $output == *"Read-only file system"* ]]
	run mkdir "$MNT/objects/new"
	[ "$status" -ne 0 ]
	[[ $output == *"Read-only file system"* ]]
	run rm -f "$MNT/objects/$id"
	[ "$status" -ne 0 ]
	[[ $output == *"Read-only file system"* ]]
	run touch "$MNT/objects/${id:0:2}/x"
	[ "$status" -ne 0 ]
	[[ $output == *"Read-only file system"* ]]
	run setfattr -n user.git.type -v tree "$MNT/objects/$id"
	[ "$status" -ne 0 ]
	[[ $output == *"Read-only file system"* ]]
	[ ! -e "$MNT/objects/x" ]
	[ ! -e "$MNT/objects/new" ]
	[ "$(getfattr --only-values -n user.git.type "$MNT/objects/$id")" = blob ]
	cmp <(git -C "$REPO" cat-file blob "$id") "$MNT/objects/$id"
}

@test "SIGTERM ends the daemon with status 0 and unmounts" {
	local id status=0

	mount_odbfs "$REPO" "$MNT"
	id=$(git -C "$REPO" rev-parse HEAD)
	[ -f "$MNT/objects/$id" ]
	kill -TERM "$ODBFS_PID"
	wait "$ODBFS_PID" || status=$?
	ODBFS_PID=
	[ "$status" -eq 0 ]
	assert_not_mounted
	[ ! -e "$MNT/objects" ]
}

@test "fusermount3 -u ends the daemon with status 0" {
	local id status=0

	mount_odbfs "$REPO" "$MNT"
	id=$(git -C "$REPO" rev-parse HEAD)
	[ -f "$MNT/objects/$id" ]
	fusermount3 -u "$MNT"
	wait "$ODBFS_PID" || status=$?
	ODBFS_PID=
	[ "$status" -eq 0 ]
	assert_not_mounted
	[ ! -e "$MNT/objects" ]
}

@test "a nonexistent REPO: status 1, one line naming it, nothing mounted" {
	run --separate-stderr "$ODBFS" "$BATS_TEST_TMPDIR/nope" "$MNT" 3>&-
	[ "$status" -eq 1 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == *"$BATS_TEST_TMPDIR/nope"*"No such file or directory"* ]]
	[ -z "$output" ]
	assert_not_mounted
}

@test "a directory that is no repository: status 1, one line, nothing mounted" {
	mkdir "$BATS_TEST_TMPDIR/plain"
	echo hello >"$BATS_TEST_TMPDIR/plain/file"
	run --separate-stderr "$ODBFS" "$BATS_TEST_TMPDIR/plain" "$MNT" 3>&-
	[ "$status" -eq 1 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == *"$BATS_TEST_TMPDIR/plain"*"not a git repository"* ]]
	assert_not_mounted
}

@test "a file as REPO: status 1, one line, nothing mounted" {
	echo hello >"$BATS_TEST_TMPDIR/file"
	run --separate-stderr "$ODBFS" "$BATS_TEST_TMPDIR/file" "$MNT" 3>&-
	[ "$status" -eq 1 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == *"$BATS_TEST_TMPDIR/file"* ]]
	assert_not_mounted
}

@test "no REPO argument: status 1, the problem on the first line, nothing mounted" {
	run --separate-stderr "$ODBFS" 3>&-
	[ "$status" -eq 1 ]
	[[ ${stderr_lines[0]} == *"missing REPO"* ]]
	# odbfs adds a usage hint on a second line (see the report).
	[ "${#stderr_lines[@]}" -le 2 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	assert_not_mounted
}

@test "no MOUNTPOINT argument: status 1, the problem on the first line, nothing mounted" {
	run --separate-stderr "$ODBFS" "$REPO" 3>&-
	[ "$status" -eq 1 ]
	[[ ${stderr_lines[0]} == *"missing MOUNTPOINT"* ]]
	[ "${#stderr_lines[@]}" -le 2 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	assert_not_mounted
}

@test "a nonexistent MOUNTPOINT: status 1, one line naming it, nothing mounted" {
	run --separate-stderr "$ODBFS" "$REPO" "$BATS_TEST_TMPDIR/nomnt" 3>&-
	[ "$status" -eq 1 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == *"$BATS_TEST_TMPDIR/nomnt"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/nomnt" ]
	run grep -cF "odbfs:$REPO" /proc/mounts
	[ "$output" = 0 ]
}

@test "odbfs --help exits 0 and describes REPO" {
	run --separate-stderr "$ODBFS" --help 3>&-
	[ "$status" -eq 0 ]
	[[ $output == *REPO*MOUNTPOINT* ]]
	run --separate-stderr "$ODBFS" -h 3>&-
	[ "$status" -eq 0 ]
	[[ $output == *REPO* ]]
}

@test "odbfs -V exits 0 and prints its version" {
	run --separate-stderr "$ODBFS" -V 3>&-
	[ "$status" -eq 0 ]
	[[ $output =~ odbfs\ version\ [0-9]+\.[0-9]+ ]]
	run --separate-stderr "$ODBFS" --version 3>&-
	[ "$status" -eq 0 ]
	[[ $output =~ odbfs\ version\ [0-9]+\.[0-9]+ ]]
}

@test "inode numbers are unique and the same across a remount" {
	local -a ids paths

	mapfile -t ids < <(all_ids "$REPO")
	paths=("$MNT/objects" "${ids[@]/#/$MNT/objects/}")
	mount_odbfs "$REPO" "$MNT"
	stat -c '%i %n' -- "${paths[@]}" >"$BATS_TEST_TMPDIR/first"
	# The same inode through objects/xx/.
	stat -c '%i' -- "${ids[0]/#/$MNT/objects/${ids[0]:0:2}/}" \
		>"$BATS_TEST_TMPDIR/fanout"
	[ "$(cat "$BATS_TEST_TMPDIR/fanout")" = \
		"$(sed -n 2p "$BATS_TEST_TMPDIR/first" | cut -d' ' -f1)" ]
	unmount_odbfs "$MNT"
	[ "$ODBFS_STATUS" -eq 0 ]
	mount_odbfs "$REPO" "$MNT"
	stat -c '%i %n' -- "${paths[@]}" >"$BATS_TEST_TMPDIR/second"
	diff -u "$BATS_TEST_TMPDIR/first" "$BATS_TEST_TMPDIR/second"
	# All distinct, none of them the root's 1.
	[ "$(cut -d' ' -f1 "$BATS_TEST_TMPDIR/first" | sort -u | wc -l)" -eq \
		"${#paths[@]}" ]
	run grep -c '^1 ' "$BATS_TEST_TMPDIR/first"
	[ "$output" = 0 ]
}

@test "a file the kernel has read is read again with no request to odbfs" {
	id=$(git -C "$REPO" rev-parse HEAD:README)
	mount_odbfs "$REPO" "$MNT"
	cmp "$MNT/objects/$id" <(git -C "$REPO" cat-file blob "$id")
	# Each look at the counters is itself one read, counted after.
	reads=$(stat_of "$MNT" reads)
	cmp "$MNT/objects/$id" <(git -C "$REPO" cat-file blob "$id")
	cmp "$MNT/objects/$id" <(git -C "$REPO" cat-file blob "$id")
	[ "$(stat_of "$MNT" reads)" -eq $((reads + 1)) ]
	# The kernel opens files without asking, once told so.
	[ "$(stat_of "$MNT" opens)" -le 1 ]
}

@test "a large object read in pieces, last piece first, matches git" {
	repo=$BATS_TEST_TMPDIR/big
	git init -q "$repo"
	head -c 3000000 /dev/urandom >"$BATS_TEST_TMPDIR/blob"
	id=$(git -C "$repo" hash-object -w "$BATS_TEST_TMPDIR/blob")
	mount_odbfs "$repo" "$MNT"
	for i in 45 30 44 0 12 29 1 13; do
		dd if="$MNT/objects/$id" bs=65536 skip="$i" count=1 status=none \
			>"$BATS_TEST_TMPDIR/piece"
		dd if="$BATS_TEST_TMPDIR/blob" bs=65536 skip="$i" count=1 \
			status=none | cmp - "$BATS_TEST_TMPDIR/piece"
	done
	cmp "$MNT/objects/$id" "$BATS_TEST_TMPDIR/blob"
	# Rebuilt for the first read, kept for the others.
	[ "$(stat_of "$MNT" reads)" -gt 8 ]
	[ "$(stat_of "$MNT" rebuilds)" -eq 1 ]
}

@test "listing objects/xx/ again looks up none of its objects" {
	id=$(git -C "$REPO" rev-parse HEAD:README)
	mount_odbfs "$REPO" "$MNT"
	n=$(ls "$MNT/objects/${id:0:2}" | wc -l)
	ls -l "$MNT/objects/${id:0:2}" >/dev/null
	hits=$(stat_of "$MNT" hits)
	ls -l "$MNT/objects/${id:0:2}" >/dev/null
	ls -l "$MNT/objects/${id:0:2}" >/dev/null
	# The sizes are still right, from the kernel's cache.
	[ "$(stat -c %s "$MNT/objects/${id:0:2}/$id")" -eq \
		"$(git -C "$REPO" cat-file -s "$id")" ]
	echo "# $n entries; hits $hits, then $(stat_of "$MNT" hits)" >&3
	[ "$(stat_of "$MNT" hits)" -eq "$hits" ]
}

# The other suites mount odbfs-assert (tests/run); this one, the smoke
# path of a user's mount, the release build make demo and install use.
@test "under tests/run, this suite mounts the release odbfs" {
	[ -n "${ODBFS_TEST_BINARY-}" ] || skip "run by tests/run only"
	mount_odbfs "$REPO" "$MNT"
	[ "$(readlink "/proc/$ODBFS_PID/exe")" = "$TOP/odbfs" ]
	[ -d "$MNT/objects" ]
}
