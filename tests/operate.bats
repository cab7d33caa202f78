#!/usr/bin/env bats
# For the people who run odbfs: install, mount through mount(8) and an
# fstab line, .odbfs/ statistics, logging options, invocation errors.

load lib

setup() {
	repo=$BATS_TEST_TMPDIR/repo
	mnt=$BATS_TEST_TMPDIR/mnt
	git init -q "$repo"
	echo one >"$repo/a"
	git -C "$repo" add a
	git -C "$repo" commit -qm one
	mkdir -p "$mnt"
}

teardown() {
	mountpoint -q "$mnt" && umount "$mnt"
	unmount_odbfs "$mnt"
	if [ -n "${INSTALLED:-}" ]; then
		make -C "$TOP" -s uninstall PREFIX=/usr/local
	fi
}

@test "make install and uninstall honour PREFIX and DESTDIR" {
	dest=$BATS_TEST_TMPDIR/dest
	make -C "$TOP" -s install PREFIX=/opt/odbfs DESTDIR="$dest"
	for f in bin/odbfs bin/odbfs-cat share/man/man1/odbfs.1 share/man/man1/odbfs-cat.1; do
		[ -f "$dest/opt/odbfs/$f" ]
	done
	[ -x "$dest/opt/odbfs/bin/odbfs" ]
	"$dest/opt/odbfs/bin/odbfs-cat" -t "$repo" "$(git -C "$repo" rev-parse HEAD)" | grep -qx commit
	make -C "$TOP" -s uninstall PREFIX=/opt/odbfs DESTDIR="$dest"
	[ -z "$(find "$dest" -type f)" ]
}

@test "mount -t fuse.odbfs and an fstab line mount through mount.fuse3" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to install and mount"
	[ ! -e /usr/local/bin/odbfs ] || skip "an odbfs is installed already"
	make -C "$TOP" -s install PREFIX=/usr/local
	INSTALLED=1
	mount -t fuse.odbfs "$repo" "$mnt"
	mountpoint -q "$mnt"
	grep -q "$mnt fuse.odbfs ro," /proc/mounts
	cmp "$mnt/HEAD/tree/a" "$repo/a"
	umount "$mnt"
	echo "$repo $mnt fuse.odbfs ro,allow_other 0 0" >"$BATS_TEST_TMPDIR/fstab"
	mount --fstab "$BATS_TEST_TMPDIR/fstab" "$mnt"
	grep -q "$mnt fuse.odbfs ro,.*allow_other" /proc/mounts
	cmp "$mnt/HEAD/tree/a" "$repo/a"
	umount "$mnt"
}

@test ".odbfs/stats counts exactly the misses a client made" {
	mount_odbfs "$repo" "$mnt" -o negative_timeout=0
	before=$(stat_of "$mnt" misses)
	for i in $(seq 1 25); do
		! [ -e "$mnt/objects/$(printf '%040x' "$i")" ]
	done
	after=$(stat_of "$mnt" misses)
	[ $((after - before)) -eq 25 ]
	# Hits and bytes follow reads.
	cat "$mnt/objects/$(git -C "$repo" rev-parse HEAD:a)" >/dev/null
	awk '$1 == "hits" && $2 >= 1 { ok = 1 } END { exit !ok }' "$mnt/.odbfs/stats"
	awk '$1 == "bytes_served" && $2 >= 4 { ok = 1 } END { exit !ok }' "$mnt/.odbfs/stats"
	grep -qx "packs 0" "$mnt/.odbfs/stats"
	grep -q "^loose_objects [1-9]" "$mnt/.odbfs/stats"
	[ "$(cat "$mnt/.odbfs/repository")" = "$(cd "$repo/.git" && pwd -P)" ]
	[ "$(cat "$mnt/.odbfs/format")" = sha1 ]
	ls -a "$mnt" | grep -qx .odbfs
}

@test "a corrupt object is logged once per read, and the log is rate-limited" {
	id=$(echo "to be broken" | git -C "$repo" hash-object -w --stdin)
	path=$repo/.git/objects/${id:0:2}/${id:2}
	chmod u+w "$path"
	head -c 10 /dev/urandom >"$path"
	mount_odbfs "$repo" "$mnt"
	t0=${EPOCHREALTIME/./}
	for i in $(seq 1 300); do
		! cat "$mnt/objects/$id" 2>/dev/null
	done
	t1=${EPOCHREALTIME/./}
	lines=$(grep -c "$path" "$mnt.log")
	# A burst of 20, then 10 a second.
	allowed=$(( 20 + 10 * (t1 - t0) / 1000000 + 1 ))
	echo "# $lines log lines for 300 reads in $(( (t1 - t0) / 1000 )) ms" >&3
	[ "$lines" -ge 1 ]
	[ "$lines" -le "$allowed" ]
	[ "$lines" -lt 300 ]
	# Every line held back is counted once the window ends, even with
	# no line after it: what went out and what was held make 300.
	sleep 0.5
	lines=$(grep -c "$path" "$mnt.log")
	held=$(awk '/more lines like this held back/ { n += $2 } END { print n + 0 }' "$mnt.log")
	echo "# $lines lines out, $held held back" >&3
	[ $((lines + held)) -eq 300 ]
	kill -0 "$ODBFS_PID"
}

@test "loglevel=error keeps warnings out of the log" {
	printf '0000000000000000000000000000000000000000 refs/heads/bad..name\n' \
		>"$repo/.git/packed-refs"
	mount_odbfs "$repo" "$mnt" -o loglevel=error
	ls "$mnt/refs" >/dev/null
	! grep -q "bad..name" "$mnt.log"
	unmount_odbfs "$mnt"
	mount_odbfs "$repo" "$mnt"
	grep -q "bad..name" "$mnt.log"
}

# one_line_error ARGS...: odbfs fails with status 1 and one stderr line.
one_line_error() {
	run --separate-stderr "$ODBFS" -f "$@"
	[ "$status" -eq 1 ]
	[ "$(printf '%s\n' "$stderr" | grep -c .)" -eq 1 ]
	! mountpoint -q "$mnt"
}

@test "every bad invocation fails with one clear line" {
	bats_require_minimum_version 1.5.0
	one_line_error
	[[ "$stderr" == *"missing REPO and MOUNTPOINT"* ]]
	one_line_error "$repo"
	[[ "$stderr" == *"missing MOUNTPOINT"* ]]
	one_line_error "$BATS_TEST_TMPDIR/nowhere" "$mnt"
	[[ "$stderr" == *nowhere*"No such file"* ]]
	one_line_error "$BATS_TEST_TMPDIR" "$mnt"
	[[ "$stderr" == *"not a git repository"* ]]
	touch "$mnt/file"
	one_line_error "$repo" "$mnt"
	[[ "$stderr" == *"not an empty directory"* ]]
	rm "$mnt/file"
	one_line_error -o no_such_option "$repo" "$mnt"
	[[ "$stderr" == *no_such_option* ]]
	for r in sometimes poll= "poll= 5" poll=+5 poll=0 poll=86401 poll=1x; do
		one_line_error -o "refresh=$r" "$repo" "$mnt"
		[[ "$stderr" == *"refresh=$r:"* ]]
	done
	one_line_error -o loglevel=loud "$repo" "$mnt"
	[[ "$stderr" == *loglevel=loud* ]]
	for t in -1 nan NaN inf -inf 1e999 1x "" -0.5 0x10 1e3 " 1" +1 1..2; do
		one_line_error -o "negative_timeout=$t" "$repo" "$mnt"
		[[ "$stderr" == *"negative_timeout=$t:"* ]]
	done
}

@test "negative_timeout takes a number of seconds, fractions too" {
	mount_odbfs "$repo" "$mnt" -o negative_timeout=0.5
	[ ! -e "$mnt/objects/$(printf '%040d' 0)" ]
}

@test "the manual pages render without warnings" {
	for m in "$TOP"/man/*.1; do
		run groff -ww -z -man "$m"
		[ "$status" -eq 0 ]
		[ -z "$output" ]
	done
}

@test "-o verify catches an object that plain reads would serve" {
	good=$(echo "good" | git -C "$repo" hash-object -w --stdin)
	other=$(echo "other" | git -C "$repo" hash-object -w --stdin)
	# A well-formed loose file under the wrong name: it inflates fine.
	src=$repo/.git/objects/${other:0:2}/${other:2}
	dst=$repo/.git/objects/${good:0:2}/${good:2}
	chmod u+w "$dst"
	cp "$src" "$dst"
	mount_odbfs "$repo" "$mnt"
	[ "$(cat "$mnt/objects/$good")" = other ]
	unmount_odbfs "$mnt"
	mount_odbfs "$repo" "$mnt" -o verify
	run cat "$mnt/objects/$good"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Input/output error"* ]]
	[ "$(cat "$mnt/objects/$other")" = other ]
	grep -q "$good: content does not hash to its id" "$mnt.log"
	run "$ODBFS_CAT" --verify "$repo"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$good: object $good: content does not hash"* ]]
	[[ "$output" == *"1 corrupt"* ]]
}
