#!/usr/bin/env bats
# commits/<id>/: what a commit directory holds, and what its members show.
#
# A commit's message may be any size: git stores what it is given, and
# zlib shrinks 100 MiB of one byte to some 100 KiB on disk. A commit
# directory keeps the header fields its members show, never the object;
# message is read from the object when it is read. Members must show
# git's bytes whatever the header holds (a gpgsig or mergetag header of
# many lines, no message, a message without a final newline), and a
# header past what odbfs reads (COMMIT_HEADER_MAX, COMMIT_PARENTS_MAX in
# store/commit.h) is an EIO and one log line naming the commit.

load lib

setup() {
	REPO=$BATS_TEST_TMPDIR/repo
	MNT=$BATS_TEST_TMPDIR/mnt
}

teardown() {
	unmount_odbfs "$MNT"
}

# rss_anon: the daemon's anonymous resident memory, in KiB.
rss_anon() {
	awk '$1 == "RssAnon:" { print $2 }' "/proc/$ODBFS_PID/status"
}

# under_kib KIB WHAT: the daemon's RssAnon is below KIB.
under_kib() {
	local rss
	rss=$(rss_anon)
	echo "# RssAnon $rss KiB $2" >&3
	if [ "$rss" -ge "$1" ]; then
		echo "RssAnon $rss KiB $2, want under $1 KiB" >&2
		return 1
	fi
}

# message_of ID: the bytes after the first blank line of the commit, as
# git prints it (the message exactly, final newline or none).
message_of() {
	git -C "$REPO" cat-file commit "$1" | sed '1,/^$/d'
}

# header_value ID NAME: the value of header NAME and a newline.
header_value() {
	git -C "$REPO" cat-file commit "$1" | sed -n "/^\$/q; s/^$2 //p"
}

# same_as_git ID: every member of commits/ID/ shows what git says (and is
# not there when git has nothing to say), with the size of what it shows
# and the committer's time.
same_as_git() {
	local id=$1 d=$MNT/commits/$1 parents time name
	parents=$(header_value "$id" parent)
	cmp "$d/message" <(message_of "$id")
	for name in author committer; do
		if [ -n "$(header_value "$id" "$name")" ]; then
			cmp "$d/$name" <(header_value "$id" "$name")
			[ "$(stat -c %s "$d/$name")" -eq "$(wc -c <"$d/$name")" ]
		else
			! [ -e "$d/$name" ]
		fi
	done
	cmp "$d/parents" <(header_value "$id" parent)
	if [ -n "$parents" ]; then
		link_is "$d/parent" "../${parents%%$'\n'*}"
	else
		! [ -e "$d/parent" ] && ! [ -L "$d/parent" ]
	fi
	link_is "$d/raw" "../../objects/$id"
	cmp "$d/raw" <(git -C "$REPO" cat-file commit "$id")
	[ "$(ls "$d/tree" | tr '\n' ' ')" = \
		"$(git -C "$REPO" ls-tree --name-only "$id" | tr '\n' ' ')" ]
	for name in message parents; do
		[ "$(stat -c %s "$d/$name")" -eq "$(wc -c <"$d/$name")" ]
	done
	time=$(header_value "$id" committer | awk '{ print $(NF - 1) }')
	for name in . tree message parents raw; do
		[ "$(stat -c %Y "$d/$name")" -eq "${time:-0}" ]
	done
}

# slice_is ID OFF LEN: LEN bytes of the message at OFF, read alone.
slice_is() {
	cmp <(dd if="$MNT/commits/$1/message" bs=4096 skip="$(($2 / 4096))" \
		count="$(($3 / 4096))" 2>/dev/null) \
		<(message_of "$1" | tail -c +"$(($2 + 1))" | head -c "$3")
}

# commit_literally FILE: the id of a commit object written from FILE as
# it is, which git's own checks might refuse.
commit_literally() {
	git -C "$REPO" hash-object -t commit --literally -w "$1"
}

@test "commits with 100 MiB messages: the daemon holds their headers only" {
	local msg=$BATS_TEST_TMPDIR/msg ids=() id p=() i
	git init -q "$REPO"
	git -C "$REPO" config gc.auto 0
	head -c $((100 << 20)) /dev/zero | tr '\0' x >"$msg"
	tree=$(git -C "$REPO" mktree </dev/null)
	for i in 1 2 3 4; do
		id=$(GIT_COMMITTER_DATE="$((1700000000 + i)) +0000" \
			git -C "$REPO" commit-tree "$tree" "${p[@]}" -F "$msg")
		ids+=("$id")
		p=(-p "$id")
	done
	rm -f "$msg"
	git -C "$REPO" update-ref refs/heads/main "$id"
	[ "$(git -C "$REPO" cat-file -s "$id")" -gt $((100 << 20)) ]

	# A commit directory that held its commit held 100 MiB: four stats
	# of author held 400 MiB. Its header is a few hundred bytes. What
	# else the daemon has is a few MiB of arenas, and the readers of
	# objects being read that readers.c keeps between reads: a
	# streamed one holds a 4 MiB window, and there are four objects.
	# 64 MiB is above that and well short of one message.
	mount_odbfs "$REPO" "$MNT"
	for id in "${ids[@]}"; do
		stat "$MNT/commits/$id/author" >/dev/null
	done
	under_kib 65536 "after stat of four authors"
	for id in "${ids[@]}"; do
		[ "$(stat -c %s "$MNT/commits/$id/message")" -eq $((100 << 20)) ]
		[ "$(cat "$MNT/commits/$id/author")" = \
			"A U Thor <author@example.com> 1700000000 +0000" ]
		[ "$(stat -c %Y "$MNT/commits/$id/")" -eq \
			"$(git -C "$REPO" log -1 --format=%ct "$id")" ]
	done
	id=${ids[3]}
	cmp "$MNT/commits/$id/message" <(message_of "$id")
	under_kib 65536 "after reading a message whole"
	slice_is "${ids[1]}" $((50 << 20)) 8192
	slice_is "${ids[2]}" $(((100 << 20) - 4096)) 4096
	same_as_git "${ids[0]}"
	under_kib 65536 "after reading every member"
	unmount_odbfs "$MNT"

	# Packed, three of them are deltas on the fourth, each rebuilt whole
	# when it is read, kept for the reads that follow (readers.c), and let
	# go a second or two after the last.
	git -C "$REPO" repack -q -a -d
	[ -z "$(find "$REPO/.git/objects" -path '*/objects/??/*' -type f)" ]
	mount_odbfs "$REPO" "$MNT"
	for id in "${ids[@]}"; do
		cmp "$MNT/commits/$id/author" <(header_value "$id" author)
		cmp "$MNT/commits/$id/parents" \
			<(git -C "$REPO" rev-parse "$id^@")
	done
	under_kib 65536 "after stat of four authors, packed"
	for id in "${ids[@]}"; do
		slice_is "$id" $((70 << 20)) 4096
	done
	for _ in $(seq 1 50); do
		[ "$(rss_anon)" -lt 65536 ] && break
		sleep 0.1
	done
	under_kib 65536 "within 5 s of reading from each message, packed"
}

@test "signed and mergetag headers, no message, no final newline: git's bytes" {
	local f=$BATS_TEST_TMPDIR/c ids=() id tree first
	git init -q "$REPO"
	tree=$(git -C "$REPO" mktree </dev/null)
	first=$(echo first | git -C "$REPO" commit-tree "$tree")
	# A signature as git commit -S writes it, the empty line inside
	# it a lone space, and a message without a final newline.
	printf '%s\n' "tree $tree" "parent $first" \
		"author A U Thor <author@example.com> 1700000000 +0000" \
		"committer C O Mitter <committer@example.com> 1700000500 +0530" \
		"gpgsig -----BEGIN PGP SIGNATURE-----" " " \
		" iHUEABYKAB0WIQRIXYvQxCb4mNYcRfCNR/fwmwi6/QUCZVNzmQAKCRCNR/fwmwi6" \
		" =Xp3S" " -----END PGP SIGNATURE-----" "" "signed" "" >"$f"
	printf 'body without a final newline' >>"$f"
	ids+=("$(commit_literally "$f")")
	# A merge carrying its tag's header and message, as git merge of a
	# signed tag writes it; the message begins with a blank line.
	printf '%s\n' "tree $tree" "parent $first" "parent ${ids[0]}" \
		"author A U Thor <author@example.com> 1700000000 +0000" \
		"committer C O Mitter <committer@example.com> 1700000600 +0000" \
		"mergetag object $first" " type commit" " tag v1" \
		" tagger T <t@example.com> 1700000000 +0000" " " " release" \
		"" "" "Merge tag 'v1'" >"$f"
	ids+=("$(commit_literally "$f")")
	# No blank line at all, then an empty message.
	printf '%s\n' "tree $tree" \
		"committer C O Mitter <committer@example.com> 1700000700 +0000" \
		>"$f"
	ids+=("$(commit_literally "$f")")
	printf '\n' >>"$f"
	ids+=("$(commit_literally "$f")")
	mount_odbfs "$REPO" "$MNT"
	for id in "$first" "${ids[@]}"; do
		same_as_git "$id"
	done
	tail -c 9 "$MNT/commits/${ids[0]}/message" | cmp - <(printf 'l newline')
	cmp <(head -c 1 "$MNT/commits/${ids[1]}/message") <(printf '\n')
	[ "$(stat -c %s "$MNT/commits/${ids[2]}/message")" -eq 0 ]
	[ "$(stat -c %s "$MNT/commits/${ids[3]}/message")" -eq 0 ]
	! [ -e "$MNT/commits/${ids[3]}/author" ]
}

@test "a header past 1 MiB or past 1024 parents: EIO and one log line" {
	local f=$BATS_TEST_TMPDIR/c tree fixed id i
	git init -q "$REPO"
	tree=$(git -C "$REPO" mktree </dev/null)
	# header_of LEN: a header of LEN bytes before the blank line.
	header_of() {
		printf 'tree %s\nx-pad ' "$tree"
		head -c $(($1 - 53)) /dev/zero | tr '\0' y
		printf '\n'
	}
	{ header_of $((1 << 20)); printf '\nat the cap\n'; } >"$f"
	at=$(commit_literally "$f")
	{ header_of $(((1 << 20) + 1)); printf '\npast the cap\n'; } >"$f"
	past=$(commit_literally "$f")
	{
		printf 'tree %s\n' "$tree"
		for i in $(seq 1 1025); do
			printf 'parent %s\n' "$at"
		done
		printf '\nan octopus of 1025\n'
	} >"$f"
	many=$(commit_literally "$f")
	sed -i '2d' "$f"
	most=$(commit_literally "$f")
	mount_odbfs "$REPO" "$MNT"
	same_as_git "$at"
	[ "$(wc -l <"$MNT/commits/$most/parents")" -eq 1024 ]
	cmp "$MNT/commits/$most/message" <(printf 'an octopus of 1025\n')
	log_mark
	run stat "$MNT/commits/$past/"
	[ "$status" -ne 0 ]
	[[ $output == *"Input/output error"* ]]
	one_log_line "commit $past" 1048576
	log_mark
	run stat "$MNT/commits/$many/"
	[[ $output == *"Input/output error"* ]]
	one_log_line "commit $many" "more than 1024 parents"
	# What a header too long for a commit directory is, objects/ serves.
	cmp "$MNT/objects/$past" <(git -C "$REPO" cat-file commit "$past")
}

@test "tags with 20 MiB messages peel without being read whole" {
	local msg=$BATS_TEST_TMPDIR/msg
	make_history "$REPO"
	head -c $((20 << 20)) /dev/zero | tr '\0' t >"$msg"
	git -C "$REPO" tag -a -F "$msg" big HEAD~2
	git -C "$REPO" tag -a -F "$msg" bigger big 2>/dev/null
	mount_odbfs "$REPO" "$MNT"
	link_is "$MNT/refs/tags/big" "../../tags/$(git -C "$REPO" rev-parse big)"
	link_is "$MNT/refs/tags/bigger" "../../tags/$(git -C "$REPO" rev-parse bigger)"
	link_is "$MNT/refs/tags/bigger/tree" \
		"../../trees/$(git -C "$REPO" rev-parse 'HEAD~2^{tree}')"
	[ "$(stat -c %s "$MNT/refs/tags/bigger/message")" -eq \
		"$(git -C "$REPO" cat-file tag bigger | sed '1,/^$/d' | wc -c)" ]
	under_kib 65536 "after peeling two tags"
	diff -r "$MNT/refs/tags/bigger/tree" "$MNT/commits/$(git -C "$REPO" rev-parse HEAD~2)/tree"
	cmp "$MNT/refs/tags/bigger/object/message" \
		<(git -C "$REPO" cat-file tag big | sed '1,/^$/d')
	under_kib 65536 "after reading a tag's message"
	cmp "$MNT/refs/tags/big/object/message" <(message_of "$(git -C "$REPO" rev-parse HEAD~2)")
}
