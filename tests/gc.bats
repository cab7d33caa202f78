#!/usr/bin/env bats
# gc and repack under readers: a reachable object is never ENOENT, whatever
# gc and repack do, and never reads wrong.
#
# git renames the new packs in, then deletes the old ones and the loose
# objects they hold. A scan of the object directory that races with that
# may see neither the old packs nor the new (readdir() passed the new names
# before they came, the old files were gone when opened); the page cache,
# dropped every second, makes the scans slow enough to be caught so.
# Needs root (for drop_caches); about 30 seconds.

load lib

# Seconds of gc under the readers, and how many readers.
GC_SECONDS=${GC_SECONDS:-25}
GC_READERS=${GC_READERS:-4}

setup() {
	repo=$BATS_TEST_TMPDIR/repo
	mnt=$BATS_TEST_TMPDIR/mnt
}

teardown() {
	touch "$BATS_TEST_TMPDIR/stop"
	[ -n "${DROP_PID:-}" ] && kill "$DROP_PID" 2>/dev/null
	[ -z "${READER_PIDS:-}" ] || wait $READER_PIDS 2>/dev/null || :
	unmount_odbfs "$mnt"
}

# make_repo: six commits of 3000 files and 600 edits with incompressible
# text, the first three packed, the rest loose. A smaller window for
# --aggressive keeps each gc short, so that many run in the time.
make_repo() {
	git init -q "$repo"
	git -C "$repo" config gc.auto 0
	git -C "$repo" config gc.aggressiveWindow 10
	for c in 1 2 3 4 5 6; do
		python3 - "$repo" "$c" <<-'EOF'
		import base64, os, random, sys
		repo, c = sys.argv[1], int(sys.argv[2])
		rnd = random.Random(c)
		for f in range(1, 3001 if c == 1 else 601):
		    if c > 1:
		        f = rnd.randrange(1, 3001)
		    d = os.path.join(repo, "d%d" % (f % 16))
		    os.makedirs(d, exist_ok=True)
		    with open(os.path.join(d, "f%d" % f), "w") as out:
		        out.write("file %d version %d\n%s\n" % (f, c,
		            base64.b64encode(rnd.randbytes(450)).decode()))
		EOF
		git -C "$repo" add -A
		GIT_COMMITTER_DATE="$((1700000000 + c * 3600)) +0000" \
			git -C "$repo" commit -q -m "commit $c"
		[ "$c" -ne 3 ] || git -C "$repo" repack -adq
	done
}

# reader N: read every id of ids through the mount, in its own order, over
# and over until stop exists (looked for every 64 reads); check each against its id (the hash of its
# type, size and bytes). Counts go to reader.N: reads, ENOENT, other
# errors, wrong.
reader() {
	python3 - "$mnt" "$BATS_TEST_TMPDIR/ids" "$BATS_TEST_TMPDIR/stop" \
		"$BATS_TEST_TMPDIR/reader.$1" <<-'EOF'
	import errno, hashlib, os, random, sys
	mnt, ids_path, stop, out = sys.argv[1:]
	ids = [line.split() for line in open(ids_path)]
	reads = enoent = other = wrong = 0
	while not os.path.exists(stop):
	    random.shuffle(ids)
	    for oid, kind in ids:
	        if reads % 64 == 63 and os.path.exists(stop):
	            break
	        reads += 1
	        try:
	            with open(os.path.join(mnt, "objects", oid), "rb") as f:
	                data = f.read()
	        except OSError as e:
	            if e.errno == errno.ENOENT:
	                enoent += 1
	            else:
	                other += 1
	            continue
	        h = hashlib.sha1(b"%s %d\0" % (kind.encode(), len(data)))
	        h.update(data)
	        if h.hexdigest() != oid:
	            wrong += 1
	with open(out, "w") as f:
	    f.write("%d %d %d %d\n" % (reads, enoent, other, wrong))
	EOF
}

@test "readers see every reachable object while gc and repack run" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to drop the page cache"
	[ -w /proc/sys/vm/drop_caches ] || skip "cannot drop the page cache"
	make_repo
	git -C "$repo" rev-list --objects --all | cut -d' ' -f1 |
		git -C "$repo" cat-file --batch-check='%(objectname) %(objecttype)' \
		>"$BATS_TEST_TMPDIR/ids"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/ids")" -gt 3000 ]
	[ -n "$(find "$repo/.git/objects" -path '*/objects/??/*' -type f)" ]
	mount_odbfs "$repo" "$mnt"
	READER_PIDS=
	for r in $(seq 1 "$GC_READERS"); do
		reader "$r" 3>&- &
		READER_PIDS="$READER_PIDS $!"
	done
	(
		while [ ! -e "$BATS_TEST_TMPDIR/stop" ]; do
			echo 3 >/proc/sys/vm/drop_caches
			sleep 1
		done
	) 3>&- &
	DROP_PID=$!
	end=$((SECONDS + GC_SECONDS)) loops=0
	while [ "$SECONDS" -lt "$end" ]; do
		if [ $((loops % 2)) -eq 0 ]; then
			git -C "$repo" gc -q --aggressive --prune=now
		else
			git -C "$repo" repack -adq --max-pack-size=256k 2>/dev/null
		fi
		loops=$((loops + 1))
	done
	touch "$BATS_TEST_TMPDIR/stop"
	wait $READER_PIDS "$DROP_PID"
	READER_PIDS= DROP_PID=
	misses=$(stat_of "$mnt" misses)
	read -r reads enoent other wrong < <(cat "$BATS_TEST_TMPDIR"/reader.* |
		awk '{ r += $1; n += $2; o += $3; w += $4 }
		END { print r, n, o, w }')
	echo "# $loops gc/repack, $reads reads: $enoent ENOENT, $other other" \
		"errors, $wrong wrong; $misses misses" >&3
	[ "$reads" -gt 0 ]
	[ "$enoent" -eq 0 ]
	[ "$other" -eq 0 ]
	[ "$wrong" -eq 0 ]
	[ "$misses" -eq 0 ]
}
