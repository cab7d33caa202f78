#!/usr/bin/env bats
# The live repository: what git writes while the repository is mounted
# shows through the mount promptly, misses stay free of syscalls, and no
# reader fails or reads a wrong byte because of a change.

load lib

setup() {
	repo=$BATS_TEST_TMPDIR/repo
	mnt=$BATS_TEST_TMPDIR/mnt
	git init -q "$repo"
	for i in 1 2 3; do
		seq 1 $((i * 300)) >"$repo/f$i"
		git -C "$repo" add "f$i"
		git -C "$repo" commit -qm "c$i"
	done
}

teardown() {
	[ -n "${LOOP_PID:-}" ] && kill "$LOOP_PID" 2>/dev/null
	exec 4<&- 2>/dev/null || :
	unmount_odbfs "$mnt"
}

# wait_visible PATH: up to 2 seconds for PATH to exist.
wait_visible() {
	for _ in $(seq 1 40); do
		[ -e "$1" ] && return 0
		sleep 0.05
	done
	return 1
}

@test "a loose object written while mounted becomes visible" {
	mount_odbfs "$repo" "$mnt"
	id=$(echo "new blob" | git -C "$repo" hash-object -w --stdin)
	wait_visible "$mnt/objects/$id"
	[ "$(cat "$mnt/objects/$id")" = "new blob" ]
	ls "$mnt/objects/${id:0:2}" | grep -qx "$id"
}

@test "an id stat'ed before it existed becomes visible after it is written" {
	# The default negative_timeout (1s) lets the kernel cache the miss;
	# odbfs must invalidate it. Check well inside that second, every time.
	mount_odbfs "$repo" "$mnt" -o negative_timeout=30
	for i in $(seq 1 20); do
		id=$(echo "late $i" | git -C "$repo" hash-object --stdin)
		! [ -e "$mnt/objects/$id" ]
		! [ -e "$mnt/objects/${id:0:2}/$id" ] || :
		echo "late $i" | git -C "$repo" hash-object -w --stdin >/dev/null
		wait_visible "$mnt/objects/$id"
		[ "$(cat "$mnt/objects/$id")" = "late $i" ]
	done
}

@test "a miss noted after the watcher swept for the object it missed is looked up again, not cached" {
	local id pid i
	# Every fan-out directory there already, so that nothing but the
	# sweep of misses drops the kernel's entry for the new id.
	for i in $(seq 1 1500); do
		echo "pad $i" >"$BATS_TEST_TMPDIR/pad$i"
		echo "$BATS_TEST_TMPDIR/pad$i"
	done | git -C "$repo" hash-object -w --stdin-paths >/dev/null
	[ "$(ls "$repo/.git/objects" | grep -c '^..$')" -eq 256 ]
	# Each miss waits 300 ms before it is noted (a test hook): the
	# object is written, published and swept for meanwhile.
	ODBFS_TEST_MISS_DELAY_MS=300 mount_odbfs "$repo" "$mnt" \
		-o negative_timeout=60
	id=$(echo "raced blob" | git -C "$repo" hash-object --stdin)
	stat "$mnt/objects/$id" >/dev/null 2>&1 &
	pid=$!
	sleep 0.1
	echo "raced blob" | git -C "$repo" hash-object -w --stdin >/dev/null
	wait "$pid" || :
	# Not a negative entry the kernel keeps for a minute.
	wait_visible "$mnt/objects/$id"
	[ "$(cat "$mnt/objects/$id")" = "raced blob" ]
}

@test "commit, fast-import, repack, prune-packed and gc while mounted" {
	mount_odbfs "$repo" "$mnt"
	echo more >"$repo/f4"
	git -C "$repo" add f4
	git -C "$repo" commit -qm c4
	wait_visible "$mnt/objects/$(git -C "$repo" rev-parse HEAD)"
	printf 'blob\ndata 12\nfast import\n' | git -C "$repo" fast-import --quiet
	id=$(printf 'fast import\n' | git hash-object --stdin)
	wait_visible "$mnt/objects/$id"
	git -C "$repo" repack -adfq
	git -C "$repo" prune-packed
	sleep 0.3
	check_mount_objects "$repo" "$mnt"
	git -C "$repo" gc -q --prune=now
	sleep 0.3
	check_mount_objects "$repo" "$mnt"
}

@test "git push into the mounted repository" {
	git init -q --bare "$BATS_TEST_TMPDIR/bare"
	mount_odbfs "$BATS_TEST_TMPDIR/bare" "$mnt"
	git -C "$repo" push -q "$BATS_TEST_TMPDIR/bare" HEAD:refs/heads/main
	wait_visible "$mnt/objects/$(git -C "$repo" rev-parse HEAD)"
	sleep 0.2
	check_mount_objects "$BATS_TEST_TMPDIR/bare" "$mnt"
}

@test "an alternate added while mounted is followed" {
	other=$BATS_TEST_TMPDIR/other
	git init -q "$other"
	echo "only in other" >"$other/x"
	git -C "$other" add x
	git -C "$other" commit -qm other
	id=$(git -C "$other" rev-parse HEAD:x)
	mount_odbfs "$repo" "$mnt"
	! [ -e "$mnt/objects/$id" ]
	echo "$other/.git/objects" >"$repo/.git/objects/info/alternates"
	wait_visible "$mnt/objects/$id"
	[ "$(cat "$mnt/objects/$id")" = "only in other" ]
	# Objects that arrive in the alternate later show too.
	id2=$(echo "later in other" | git -C "$other" hash-object -w --stdin)
	wait_visible "$mnt/objects/$id2"
}

@test "a file held open across repack and prune-packed reads back identical" {
	head -c 3000000 /dev/urandom >"$repo/big"
	git -C "$repo" add big
	git -C "$repo" commit -qm big
	id=$(git -C "$repo" rev-parse HEAD:big)
	git -C "$repo" repack -adq
	mount_odbfs "$repo" "$mnt"
	exec 4<"$mnt/objects/$id"
	git -C "$repo" repack -adfq
	git -C "$repo" prune-packed
	git -C "$repo" gc -q --prune=now
	cmp - "$repo/big" <&4
	exec 4<&-
}

@test "an .idx without its .pack is not served" {
	git -C "$repo" repack -adq
	extra=$BATS_TEST_TMPDIR/extra
	git init -q "$extra"
	echo "lonely" >"$extra/l"
	git -C "$extra" add l
	git -C "$extra" commit -qm l
	git -C "$extra" repack -adq
	id=$(git -C "$extra" rev-parse HEAD:l)
	mount_odbfs "$repo" "$mnt"
	idx=$(ls "$extra"/.git/objects/pack/*.idx)
	cp "$idx" "$repo/.git/objects/pack/"
	sleep 0.3
	! [ -e "$mnt/objects/$id" ]
	# Once the pack arrives too, it is served.
	cp "${idx%.idx}.pack" "$repo/.git/objects/pack/"
	wait_visible "$mnt/objects/$id"
	[ "$(cat "$mnt/objects/$id")" = lonely ]
}

@test "readers during repeated gc see no wrong byte and no error" {
	for i in $(seq 1 60); do
		seq 1 $((i * 50)) >"$repo/g$((i % 7))"
		git -C "$repo" add -A
		git -C "$repo" commit -qm "g$i"
	done
	all_ids "$repo" >"$BATS_TEST_TMPDIR/ids"
	mkdir "$BATS_TEST_TMPDIR/want"
	while read -r id; do
		git -C "$repo" cat-file -p "$id" >/dev/null
		git -C "$repo" cat-file "$(git -C "$repo" cat-file -t "$id")" "$id" \
			>"$BATS_TEST_TMPDIR/want/$id"
	done <"$BATS_TEST_TMPDIR/ids"
	mount_odbfs "$repo" "$mnt"
	(
		errors=0 wrong=0 reads=0
		while [ ! -e "$BATS_TEST_TMPDIR/stop" ]; do
			while read -r id; do
				reads=$((reads + 1))
				if ! cat "$mnt/objects/$id" >"$BATS_TEST_TMPDIR/got" 2>/dev/null; then
					errors=$((errors + 1))
				elif ! cmp -s "$BATS_TEST_TMPDIR/got" "$BATS_TEST_TMPDIR/want/$id"; then
					wrong=$((wrong + 1))
				fi
			done < <(shuf "$BATS_TEST_TMPDIR/ids")
		done
		echo "$reads $errors $wrong" >"$BATS_TEST_TMPDIR/result"
	) 3>&- &
	LOOP_PID=$!
	for i in $(seq 1 6); do
		git -C "$repo" repack -adfq
		git -C "$repo" prune-packed
		git -C "$repo" gc -q
		git -C "$repo" repack -dq
	done
	touch "$BATS_TEST_TMPDIR/stop"
	wait "$LOOP_PID"
	LOOP_PID=
	read -r reads errors wrong <"$BATS_TEST_TMPDIR/result"
	echo "# $reads reads, $errors errors, $wrong wrong" >&3
	[ "$reads" -gt 0 ]
	[ "$errors" -eq 0 ]
	[ "$wrong" -eq 0 ]
}

@test "refresh=never shows a frozen view; refresh=poll sees changes" {
	mount_odbfs "$repo" "$mnt" -o refresh=never
	id=$(echo frozen | git -C "$repo" hash-object -w --stdin)
	sleep 0.5
	! [ -e "$mnt/objects/$id" ]
	unmount_odbfs "$mnt"
	mount_odbfs "$repo" "$mnt" -o refresh=poll=1,negative_timeout=0
	id=$(echo polled | git -C "$repo" hash-object -w --stdin)
	for _ in $(seq 1 50); do
		[ -e "$mnt/objects/$id" ] && break
		sleep 0.1
	done
	[ "$(cat "$mnt/objects/$id")" = polled ]
}

@test "an invalid refresh mode fails before mounting" {
	mkdir -p "$mnt"
	run "$ODBFS" -f -o refresh=sometimes "$repo" "$mnt"
	[ "$status" -eq 1 ]
	[[ "$output" == *refresh=sometimes* ]]
	! mountpoint -q "$mnt"
}

@test "the idle daemon uses no CPU" {
	mount_odbfs "$repo" "$mnt"
	ls "$mnt/objects" >/dev/null
	sleep 0.5
	before=$(awk '{ print $14 + $15 }' "/proc/$ODBFS_PID/stat")
	sleep 5
	after=$(awk '{ print $14 + $15 }' "/proc/$ODBFS_PID/stat")
	echo "# idle CPU ticks over 5 s: $((after - before))" >&3
	[ "$((after - before))" -eq 0 ]
}
