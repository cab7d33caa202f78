#!/usr/bin/env bats
# Files changed under a running daemon: an index or a pack truncated or
# copied over in place, a large loose object cut short while it is read.
# Each costs the readers of that file an error and one log line; the
# daemon lives and every other object reads as git cat-file prints it.

load lib

setup_file() {
	local p=$BATS_FILE_TMPDIR/pristine i
	git init -q "$p"
	git -C "$p" config gc.auto 0
	# Pack 1: 400 small blobs, so that its index spans several pages.
	for i in $(seq 1 400); do echo "file $i" >"$p/f$i"; done
	git -C "$p" add -A
	git -C "$p" commit -q -m small
	git -C "$p" repack -adq
	# Pack 2: a 24 MiB blob that does not compress, read as a stream.
	head -c $((24 << 20)) /dev/urandom >"$p/big"
	git -C "$p" add big
	git -C "$p" commit -q -m big
	git -C "$p" repack -dq
	# Loose: another such blob, and a small commit.
	head -c $((24 << 20)) /dev/urandom >"$p/bigloose"
	git -C "$p" add bigloose
	git -C "$p" commit -q -m loose
	PYTHON=$(python3 -c 'import sys; print(sys.executable)')
	export PYTHON
	PRISTINE=$p
	export PRISTINE
}

setup() {
	REPO=$BATS_TEST_TMPDIR/repo
	MNT=$BATS_TEST_TMPDIR/mnt
	cp -a "$PRISTINE" "$REPO"
	SMALL=$(git -C "$REPO" rev-parse HEAD~2:f1)
	BIG=$(git -C "$REPO" rev-parse HEAD~1:big)
	BIGLOOSE=$(git -C "$REPO" rev-parse HEAD:bigloose)
	PACK_SMALL=$(pack_of "$SMALL")
	PACK_BIG=$(pack_of "$BIG")
}

teardown() {
	unmount_odbfs "$MNT"
	# A daemon killed by a signal fails the test, whatever it printed.
	[ "$ODBFS_STATUS" -eq 0 ]
}

# pack_of ID: the .pack path (without .pack) of the pack holding ID.
pack_of() {
	local idx
	for idx in "$REPO"/.git/objects/pack/*.idx; do
		if git show-index <"$idx" | grep -q " $1 "; then
			echo "${idx%.idx}"
			return
		fi
	done
	return 1
}

# alive ID...: the daemon runs, the mount is there, and each ID reads as
# git cat-file prints it in the pristine repository.
alive() {
	local id
	kill -0 "$ODBFS_PID"
	mountpoint -q "$MNT"
	for id in "$@"; do
		git -C "$PRISTINE" cat-file -p "$id" | cmp - "$MNT/objects/$id"
	done
}

# read_across FILE N CMD...: read the first N bytes of FILE, run CMD, then
# read the rest. Prints "ok BYTES" or "error ERRNO-NAME"; every byte read
# must equal the pristine object's (FILE's basename is its id), and a read
# that lasts over 20 s fails.
read_across() {
	local file=$1 n=$2
	shift 2
	git -C "$PRISTINE" cat-file -p "$(basename "$file")" >"$BATS_TEST_TMPDIR/want"
	timeout 20 "$PYTHON" - "$file" "$n" "$BATS_TEST_TMPDIR/want" "$@" <<-'EOF'
	import errno, os, subprocess, sys
	path, n, want = sys.argv[1], int(sys.argv[2]), open(sys.argv[3], "rb")
	fd = os.open(path, os.O_RDONLY)
	def check(b):
	    if want.read(len(b)) != b:
	        print("wrong bytes"); sys.exit(1)
	got = b""
	while len(got) < n:
	    b = os.read(fd, n - len(got)); check(b); got += b
	subprocess.run(sys.argv[4:], check=True)
	total = len(got)
	try:
	    while True:
	        b = os.read(fd, 1 << 20)
	        if not b: break
	        check(b); total += len(b)
	    print("ok", total)
	except OSError as e:
	    print("error", errno.errorcode[e.errno])
	EOF
}

@test "an index truncated under the daemon costs its pack, with one log line" {
	mount_odbfs "$REPO" "$MNT"
	log_mark
	# Lookups run over the whole index while it shrinks.
	git -C "$REPO" cat-file --batch-all-objects --batch-check='%(objectname)' |
		sed "s|^|$MNT/objects/|" >"$BATS_TEST_TMPDIR/paths"
	for _ in 1 2 3; do xargs stat -c %s <"$BATS_TEST_TMPDIR/paths" >/dev/null 2>&1; done 3>&- &
	truncate -s 2000 "$PACK_SMALL.idx"
	wait $! || :
	within_a_second test ! -e "$MNT/objects/$SMALL"
	alive "$BIG" "$(git -C "$REPO" rev-parse HEAD)"
	one_log_line "$(basename "$PACK_SMALL").idx" "offset"
}

@test "a pack truncated while a large object is read: EIO for that reader" {
	mount_odbfs "$REPO" "$MNT"
	log_mark
	run read_across "$MNT/objects/$BIG" $((5 << 20)) truncate -s $((8 << 20)) "$PACK_BIG.pack"
	[ "$output" = "error EIO" ]
	alive "$SMALL" "$(git -C "$REPO" rev-parse HEAD)"
	# The reader's line, naming the pack and where it ends now.
	[ "$(new_log | grep -c "$(basename "$PACK_BIG").pack.*offset")" -ge 1 ]
	grep -q "shrank.*offset $((8 << 20))" "$MNT.log"
}

@test "a pack copied over in place while a large object is read" {
	mount_odbfs "$REPO" "$MNT"
	log_mark
	# cp keeps the inode: truncated to nothing, then written anew.
	cp "$PACK_SMALL.pack" "$BATS_TEST_TMPDIR/other.pack"
	run read_across "$MNT/objects/$BIG" $((5 << 20)) cp "$BATS_TEST_TMPDIR/other.pack" "$PACK_BIG.pack"
	[ "$output" = "error EIO" ]
	alive "$SMALL" "$(git -C "$REPO" rev-parse HEAD)"
	new_log | grep -q "$(basename "$PACK_BIG").pack"
}

@test "a large loose object cut short while it is read: EIO, one log line" {
	local f=$REPO/.git/objects/${BIGLOOSE:0:2}/${BIGLOOSE:2}
	mount_odbfs "$REPO" "$MNT"
	log_mark
	run read_across "$MNT/objects/$BIGLOOSE" $((5 << 20)) truncate -s $((8 << 20)) "$f"
	[ "$output" = "error EIO" ]
	alive "$SMALL" "$BIG"
	one_log_line "$f" "shrank" "offset $((8 << 20))"
}

@test "a pack truncated with no reader: what is left serves, nothing dies" {
	local id bad=0 gone=0
	mount_odbfs "$REPO" "$MNT"
	cat "$MNT/objects/$SMALL" >/dev/null
	truncate -s 4096 "$PACK_SMALL.pack"
	sleep 0.2
	# Each object of the pack reads right or fails; none reads wrong.
	while read -r id; do
		if git -C "$PRISTINE" cat-file -p "$id" >"$BATS_TEST_TMPDIR/want" &&
			cat "$MNT/objects/$id" >"$BATS_TEST_TMPDIR/got" 2>/dev/null; then
			cmp -s "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got" || bad=$((bad + 1))
		else
			gone=$((gone + 1))
		fi
	done < <(git show-index <"$PRISTINE/.git/objects/pack/$(basename "$PACK_SMALL").idx" | cut -d' ' -f2)
	[ "$bad" -eq 0 ]
	[ "$gone" -gt 0 ]
	alive "$BIG" "$BIGLOOSE"
}

@test "a pack cut short and then copied back in place serves again" {
	mount_odbfs "$REPO" "$MNT"
	cp "$PACK_BIG.pack" "$BATS_TEST_TMPDIR/saved.pack"
	run read_across "$MNT/objects/$BIG" $((5 << 20)) truncate -s $((8 << 20)) "$PACK_BIG.pack"
	[ "$output" = "error EIO" ]
	cp "$BATS_TEST_TMPDIR/saved.pack" "$PACK_BIG.pack"
	git -C "$PRISTINE" cat-file blob "$BIG" >"$BATS_TEST_TMPDIR/want"
	within_a_second cmp "$BATS_TEST_TMPDIR/want" "$MNT/objects/$BIG"
	alive "$SMALL"
}

# ids_after PACK OFFSET: the ids of PACK's entries that start at or past
# OFFSET.
ids_after() {
	git show-index <"$1.idx" | awk -v o="$2" '$1 >= o { print $2 }'
}

@test "refresh=never: a truncated pack costs each read EIO and one log line" {
	local id n=0
	ids_after "$PACK_SMALL" 4096 | head -3 >"$BATS_TEST_TMPDIR/ids"
	mount_odbfs "$REPO" "$MNT" -o refresh=never
	cat "$MNT/objects/$SMALL" >/dev/null
	truncate -s 4096 "$PACK_SMALL.pack"
	while read -r id; do
		log_mark
		run cat "$MNT/objects/$id"
		[ "$status" -ne 0 ]
		[[ $output == *"Input/output error"* ]]
		one_log_line "$(basename "$PACK_SMALL").pack" "shrank" "offset"
		n=$((n + 1))
	done <"$BATS_TEST_TMPDIR/ids"
	[ "$n" -eq 3 ]
	alive "$BIG" "$BIGLOOSE"
}

@test "refresh=watch: after the rescan, each read of a truncated pack logs one line" {
	local id n=0
	ids_after "$PACK_SMALL" 4096 | head -3 >"$BATS_TEST_TMPDIR/ids"
	mount_odbfs "$REPO" "$MNT"
	cat "$MNT/objects/$SMALL" >/dev/null
	log_mark
	truncate -s 4096 "$PACK_SMALL.pack"
	# The rescan reopens the pack and says once that it is not whole.
	within_a_second one_log_line "$(basename "$PACK_SMALL").pack"
	while read -r id; do
		log_mark
		run cat "$MNT/objects/$id"
		[[ $output == *"Input/output error"* ]]
		one_log_line "$(basename "$PACK_SMALL").pack" "offset"
		n=$((n + 1))
	done <"$BATS_TEST_TMPDIR/ids"
	[ "$n" -eq 3 ]
	alive "$BIG" "$BIGLOOSE"
}
