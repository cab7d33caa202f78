#!/usr/bin/env bash
# make-seeds.sh: writes the seed inputs in tests/fuzz/corpus/<target>/.
#
# Real inputs come from repositories built here with git (sha1 and sha256):
# pack indexes of version 2, 1 and 2 with 64-bit offsets; whole packs with
# OFS_DELTA and REF_DELTA entries; deltas cut from a pack with their bases;
# loose object files; tree, commit and tag payloads from git cat-file; a
# packed-refs file; the reftables of tests/fixtures/reftable (made by git
# 2.55, which Debian's git cannot write); commit-graph files, single and
# the layers of a chain. Hostile inputs are made by hand below, each named
# for what is wrong with it; the delta ones follow tests/unit/test_delta.c.
# seedtool.c (zlib only) inflates pack entries and deflates hand-made loose
# objects. Seeds keep their names from run to run and are overwritten;
# files named by a SHA-1 were added by `make fuzz` and are left alone.
#
#   tests/fuzz/make-seeds.sh     (from anywhere; needs git, cc, zlib)
set -euo pipefail
cd "$(dirname "$0")"
fz=$PWD
corpus=$fz/corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

${CC:-cc} -O2 -o "$tmp/seedtool" "$fz/seedtool.c" -lz
st=$tmp/seedtool

export HOME=$tmp GIT_CONFIG_NOSYSTEM=1 TZ=UTC LC_ALL=C
export GIT_AUTHOR_NAME='A U Thor' GIT_AUTHOR_EMAIL=author@example.com
export GIT_COMMITTER_NAME='C O Mitter' GIT_COMMITTER_EMAIL=c@example.com
export GIT_AUTHOR_DATE='1700000000 +0100' GIT_COMMITTER_DATE='1700000100 +0100'
git config --global pack.threads 1
git config --global gc.auto 0
git config --global tag.gpgSign false

for t in idx pack delta loose tree commit refs reftable commitgraph; do
	mkdir -p "$corpus/$t"
done

# put TARGET NAME: stdin becomes the seed.
put() {
	cat >"$corpus/$1/$2"
}

# bytes HEX...: the bytes written in hex, e.g. bytes 50 41 43 4b.
bytes() {
	local b

	for b in "$@"; do
		printf "\\x$b"
	done
}

# le16 N: N as two little-endian bytes.
le16() {
	printf "\\x$(printf %02x $(($1 & 255)))\\x$(printf %02x $(($1 >> 8)))"
}

# be32 N
be32() {
	printf "\\x$(printf %02x $(($1 >> 24 & 255)))\\x$(printf %02x \
	    $(($1 >> 16 & 255)))\\x$(printf %02x $(($1 >> 8 & 255)))"
	printf "\\x$(printf %02x $(($1 & 255)))"
}

# loosefile REPO ID: the loose object file of ID.
loosefile() {
	local id=$2

	echo "$1/.git/objects/${id:0:2}/${id:2}"
}

# patch FILE OFFSET HEX...: overwrite bytes of FILE in place.
patch() {
	local f=$1 off=$2

	shift 2
	bytes "$@" | dd of="$f" bs=1 seek="$off" conv=notrunc status=none
}

# --- a sha1 repository: files of every mode, history with deltas -------------

r1=$tmp/r1
git init -q -b main "$r1"
cd "$r1"
seq 1 150 | sed 's/^/line /' >README
mkdir src
seq 1 60 | sed 's/.*/int f&(void) { return &; }/' >src/main.c
printf '#!/bin/sh\necho hi\n' >run.sh
chmod +x run.sh
ln -s README link
: >empty
git add -A
git commit -qm 'first: every kind of file'
first=$(git rev-parse HEAD)

# Loose objects of every type, before anything is packed.
put loose blob-readme.loose <"$(loosefile "$r1" "$(git rev-parse HEAD:README)")"
put loose blob-empty.loose <"$(loosefile "$r1" "$(git rev-parse HEAD:empty)")"
put loose tree-root.loose <"$(loosefile "$r1" "$(git rev-parse HEAD^{tree})")"
put loose commit-root.loose <"$(loosefile "$r1" "$first")"

sed -i 's/^line 50$/line fifty/' README
echo 'int main(void) { return f1(); }' >>src/main.c
git update-index --add --cacheinfo "160000,$first,sub"
git commit -qam 'second: a submodule, README edited'
git tag -a v1 -m 'version one'
put loose tag-v1.loose <"$(loosefile "$r1" "$(git rev-parse v1)")"
git checkout -q -b side
echo side >side.txt
git add side.txt
git commit -qm 'side branch'
git checkout -q main
sed -i 's/^line 120$/line 120 changed/' README
git commit -qam 'third'
git merge -q --no-ff -m 'merge side' side
git tag light

# A commit with a multi-line header, as signed commits have.
signed=$(printf '%s\n' "tree $(git rev-parse HEAD^{tree})" \
    "parent $(git rev-parse HEAD)" \
    'author A U Thor <author@example.com> 1700000000 +0100' \
    'committer C O Mitter <c@example.com> 1700000100 +0100' \
    'gpgsig -----BEGIN PGP SIGNATURE-----' ' ' ' iQEzBAABCAAdFiEE' \
    ' -----END PGP SIGNATURE-----' '' 'signed' |
    git hash-object -t commit -w --stdin)
git update-ref refs/heads/signed "$signed"

git cat-file commit "$first" | put commit root.commit
git cat-file commit HEAD | put commit merge.commit
git cat-file commit "$signed" | put commit gpgsig.commit
git cat-file tag v1 | put commit v1.tag
git cat-file tree HEAD^{tree} | put tree root-sha1.tree
git cat-file tree HEAD:src | put tree src-sha1.tree

git pack-refs --all
put refs packed-refs <.git/packed-refs

git repack -adfq --window=50 --depth=50
pack=$(ls .git/objects/pack/pack-*.pack)
put pack ofs-delta-sha1.pack <"$pack"
put idx v2-sha1.idx <"${pack%.pack}.idx"
cp "$pack" "$tmp/p1.pack"
git index-pack --index-version=1 -o "$tmp/v1.idx" "$tmp/p1.pack" >/dev/null
put idx v1-sha1.idx <"$tmp/v1.idx"
git index-pack --index-version=2,200 -o "$tmp/off64.idx" "$tmp/p1.pack" \
    >/dev/null
put idx v2-sha1-off64.idx <"$tmp/off64.idx"
git pack-objects -q --revs --all --no-delta-base-offset "$tmp/ref" </dev/null \
    >/dev/null
put pack ref-delta-sha1.pack <"$tmp"/ref-*.pack
git pack-objects -q "$tmp/empty" </dev/null >/dev/null
put pack empty.pack <"$tmp"/empty-*.pack
put idx empty-v2.idx <"$tmp"/empty-*.idx
head -c 12 "$pack" | put pack header-only.pack

# The first eight deltas of the pack, as: base-length base delta.
n=0
git verify-pack -v "$pack" |
    while read -r id type size packed off depth base; do
	[ -n "${base:-}" ] || continue
	[ "$n" -lt 8 ] || break
	{
		len=$(git cat-file -s "$base")
		le16 "$len"
		git cat-file "$(git cat-file -t "$base")" "$base"
		"$st" entry "$pack" "$off" 20
	} | put delta "git-$type-$id.delta"
	n=$((n + 1))
done

# --- a sha256 repository -----------------------------------------------------

r2=$tmp/r2
git init -q -b main --object-format=sha256 "$r2"
cd "$r2"
seq 1 100 | sed 's/^/row /' >data
mkdir dir
echo nested >dir/file
git add -A
git commit -qm 'sha256 first'
put loose blob-sha256.loose <"$(loosefile "$r2" "$(git rev-parse HEAD:data)")"
put loose commit-sha256.loose <"$(loosefile "$r2" "$(git rev-parse HEAD)")"
sed -i 's/^row 40$/row forty/' data
git commit -qam 'sha256 second'
git tag -a s1 -m 'sha256 tag'
git cat-file commit HEAD | put commit sha256.commit
git cat-file tag s1 | put commit sha256.tag
git cat-file tree HEAD^{tree} | put tree root-sha256.tree
git pack-refs --all
put refs packed-refs-sha256 <.git/packed-refs
git repack -adfq --window=50 --depth=50
pack=$(ls .git/objects/pack/pack-*.pack)
put pack ofs-delta-sha256.pack <"$pack"
put idx v2-sha256.idx <"${pack%.pack}.idx"
cp "$pack" "$tmp/p2.pack"
git index-pack --index-version=1 -o "$tmp/v1-256.idx" "$tmp/p2.pack" >/dev/null
put idx v1-sha256.idx <"$tmp/v1-256.idx"
git verify-pack -v "$pack" |
    while read -r id type size packed off depth base; do
	[ -n "${base:-}" ] || continue
	{
		le16 "$(git cat-file -s "$base")"
		git cat-file "$(git cat-file -t "$base")" "$base"
		"$st" entry "$pack" "$off" 32
	} | put delta "git-sha256-$type.delta"
	break
done
cd "$fz"

# --- hostile index files, edited from the real ones --------------------------
# v2 layout: 8 header, 1024 fan-out, ids, crc32s, offsets, checksums.

v2=$corpus/idx/v2-sha1.idx
nr=$((($(stat -c %s "$v2") - 8 - 1024 - 40) / 28))
cp "$v2" "$tmp/x" && patch "$tmp/x" 4 00 00 00 03
put idx bad-version3.idx <"$tmp/x"
head -c -1 "$v2" | put idx bad-truncated.idx
cp "$v2" "$tmp/x" && patch "$tmp/x" $((8 + 4 * 200)) 00 00 00 00
put idx bad-fanout-decreases.idx <"$tmp/x"
cp "$v2" "$tmp/x" && patch "$tmp/x" $((8 + 4 * 255)) 7f ff ff ff
put idx bad-fanout-huge.idx <"$tmp/x"
# The first offset points at 64-bit entry 5, which does not exist.
cp "$v2" "$tmp/x" && patch "$tmp/x" $((8 + 1024 + nr * 24)) 80 00 00 05
put idx bad-off64-missing.idx <"$tmp/x"
# The first two ids swapped: sorted no more.
cp "$v2" "$tmp/x"
dd if="$v2" of="$tmp/x" bs=1 skip=1032 seek=1052 count=20 conv=notrunc \
    status=none
dd if="$v2" of="$tmp/x" bs=1 skip=1052 seek=1032 count=20 conv=notrunc \
    status=none
put idx bad-unsorted.idx <"$tmp/x"
# The last id's first byte lies about its fan-out bucket.
cp "$v2" "$tmp/x" && patch "$tmp/x" $((1032 + (nr - 1) * 20)) 00
put idx bad-bucket.idx <"$tmp/x"
head -c 1024 /dev/zero | put idx v1-empty-no-checksums.idx
head -c 1064 /dev/zero | put idx v1-empty.idx
{ printf '\377tOc'; be32 2; head -c 1063 /dev/zero; } | put idx v2-short.idx

# --- hostile packs: header, one or two entries, a fake checksum --------------

sum=$(head -c 20 /dev/zero | tr '\0' '\1')
hello=$(printf hello | "$st" deflate | od -An -tx1 | tr -d '\n')
pk() {
	printf PACK
	be32 2
	be32 "$1"
}
{ pk 1; bytes 35; bytes $hello; printf %s "$sum"; } | put pack blob.pack
{ pk 1; bytes ff ff ff ff ff ff ff ff ff ff ff 01; printf %s "$sum"; } |
    put pack bad-size-varint.pack
{ pk 1; bytes 50 00; printf %s "$sum"; } | put pack bad-type5.pack
{ pk 1; bytes 00 00; printf %s "$sum"; } | put pack bad-type0.pack
{ pk 1; bytes 35; printf %s "$sum"; } | put pack bad-no-data.pack
# An OFS_DELTA whose base would lie before the pack header.
{ pk 2; bytes 35 $hello 65 14 $hello; printf %s "$sum"; } |
    put pack bad-ofs-before-header.pack
{ pk 2; bytes 35 $hello 65 ff ff ff ff ff ff ff ff ff 7f; printf %s "$sum"; } |
    put pack bad-ofs-overflow.pack
{ pk 2; bytes 35 $hello 75 01 02 03; } | put pack bad-ref-truncated.pack
# A blob that claims 2^60 bytes.
{ pk 1; bytes b5 80 80 80 80 80 80 80 10 $hello; printf %s "$sum"; } |
    put pack bad-size-huge.pack
{ pk 4294967295; bytes 35 $hello; printf %s "$sum"; } |
    put pack bad-count-huge.pack

# --- hostile deltas: le16 base length, base, delta ---------------------------
# Vectors of tests/unit/test_delta.c, which cites where each comes from:
# git's t5303-pack-corruption-resilience.sh and libgit2's tests/delta/apply.c.

d() {
	local name=$1 base=$2

	shift 2
	{ le16 ${#base}; printf %s "$base"; bytes "$@"; } |
	    put delta "$name.delta"
}
zero16() {
	local name=$1

	shift
	{ le16 16; head -c 16 /dev/zero; bytes "$@"; } | put delta "$name.delta"
}
d minimal '' 00 01 01 58
d empty-result '' 00 00
d interleaved 'hello world' 0b 0d 91 06 05 02 2c 20 90 05 01 21
d copy-whole base 04 04 90 04
d copy-two-offset-bytes abcdefghijklmnopqrstuvwxyz 1a 04 93 02 00 04
d copy-all-offset-bytes abcdefghijklmnopqrstuvwxyz 1a 01 9f 01 00 00 00 01
d t5303-too-many-literal '' 00 01 02 58 58
d t5303-too-many-copied base 04 01 91 00 02
d t5303-too-few-literal '' 00 02 02 58
d t5303-too-few-in-base '' 00 01 91 00 01
d t5303-truncated-copy base 04 02 01 58 91
d t5303-garbage-literal '' 00 01 01 58 01
d t5303-garbage-copy base 04 01 01 58 91 00 01
d t5303-garbage-opcode '' 00 01 01 58 00
zero16 cve-2018-10887-offset-ffffffff 10 10 ff ff ff ff ff 10 00 00
zero16 copy-offset-plus-size-wraps 10 20 9f f0 ff ff ff 20
zero16 cve-2018-10888-operands-past-end 10 70 ff
zero16 copy-two-of-seven-operands 10 10 ff 00 00
d copy-offset-at-base-end base 04 01 91 04 01
d copy-64k-from-small-base base 04 80 80 04 80
d reserved-opcode '' 00 01 00 01 58
d base-larger-than-header base 03 01 01 58
d base-size-overflows base ff ff ff ff ff ff ff ff ff 02 00
d result-size-2-63 base 04 80 80 80 80 80 80 80 80 80 01
d result-size-max base 04 ff ff ff ff ff ff ff ff ff 01
bytes 00 | put delta one-byte.delta

# --- hostile loose objects ---------------------------------------------------

z() {
	printf "$2" | "$st" deflate | put loose "$1.loose"
}
z blob-hello 'blob 5\0hello'
z blob-zero 'blob 0\0'
z commit-tiny 'commit 3\0abc'
z bad-shorter-than-header 'blob 9\0hello'
z bad-longer-than-header 'blob 3\0hello'
z bad-leading-zero 'blob 05\0hello'
z bad-size-overflow 'blob 18446744073709551616\0x'
z size-max 'blob 18446744073709551615\0x'
z bad-type 'blobx 1\0a'
z bad-no-space 'blob1\0a'
z bad-no-size 'blob \0'
z bad-no-nul 'blob 1234567890123456789012345678901234567890'
z bad-nul-in-type 'bl\0ob 1\0a'
{ printf 'blob 5\0hello' | "$st" deflate; printf garbage; } |
    put loose bad-trailing-garbage.loose
printf 'blob 5\0hello' | "$st" deflate | head -c -4 |
    put loose bad-truncated-checksum.loose
printf 'blob 5\0hello' | "$st" deflate | head -c 6 |
    put loose bad-truncated.loose
# A stream that asks for a preset dictionary.
bytes 78 bb 00 00 00 01 4b ca c9 4f 02 00 | put loose bad-preset-dict.loose
bytes 78 9c 03 00 00 00 00 01 | put loose empty-stream.loose
# Zeros inflate 1000:1: a small file with a big claim.
{ printf 'blob 1048576\0'; head -c 1048576 /dev/zero; } | "$st" deflate |
    put loose blob-1mib-zeros.loose

# --- hostile trees -----------------------------------------------------------

id20=$(printf '\x11%.0s' $(seq 20))
{
	printf '100644 .\0%s' "$id20"
	printf '40000 ..\0%s' "$id20"
	printf '100644 a/b\0%s' "$id20"
	printf '100644 \0%s' "$id20"
	printf '100664 old-mode\0%s' "$id20"
	printf '1006440 long-mode\0%s' "$id20"
	printf '10064x bad-digit\0%s' "$id20"
	printf '644 short-mode\0%s' "$id20"
	printf '100644 ok\0%s' "$id20"
} | put tree bad-names-modes.tree
{ printf '100644 file\0%s' "$id20"; printf '100644 cut\0abc'; } |
    put tree bad-truncated-id.tree
{ printf '100644 file\0%s' "$id20"; printf '100644 no-nul'; } |
    put tree bad-no-nul.tree
printf '100644' | put tree bad-no-space.tree

# --- hostile commits and tags ------------------------------------------------

h40=0123456789abcdef0123456789abcdef01234567
c() {
	printf "$2" | put commit "$1"
}
c bad-no-tree.commit "parent $h40\nauthor a <a> 1 +0000\n\nmsg\n"
c bad-uppercase-tree.commit "tree ${h40^^}\n\nmsg\n"
c bad-short-tree.commit "tree ${h40:1}\n\nmsg\n"
c bad-parent.commit "tree $h40\nparent nothex\n\nmsg\n"
parents=$(printf '\\nparent %s' $h40 $h40 $h40 $h40 $h40)
c many-parents.commit "tree $h40$parents\n\n"
c huge-time.commit \
    "tree $h40\ncommitter c <c> 99999999999999999999999 +0000\n\nm"
c no-message.commit "tree $h40\nauthor a <a> 1 +0000"
c tree-only.commit "tree $h40\n"
c bad-tag-type.tag "object $h40\ntype tree2\ntag x\n\nm\n"
c bad-tag-no-type.tag "object $h40\ntag x\n"

# --- hostile packed-refs ------------------------------------------------------

{
	printf '# pack-refs with: peeled fully-peeled sorted \n'
	printf '%s refs/heads/main\n' "$h40"
	printf '%s refs/heads/main\n' "${h40/0/1}"
	printf '%s refs/heads/dup\n%s refs/heads/dup\n' "$h40" "$h40"
	printf '^%s\n' "$h40"
	printf '%s refs/heads/crlf\r\n' "$h40"
	printf '%s refs/heads/a..b\n' "$h40"
	printf '%s refs/heads/x.lock\n' "$h40"
	printf '%s refs/heads/@{x}\n' "$h40"
	printf '%s refs/heads/\n' "$h40"
	printf '%s refs//heads\n' "$h40"
	printf '%s refs/.hidden\n' "$h40"
	printf '%s refs/heads/sp ace\n' "$h40"
	printf '%s refs/heads/tilde~1\n' "$h40"
	printf '%s refs/heads/end.\n' "$h40"
	printf '%s onelevel\n' "$h40"
	printf '%s @\n' "$h40"
	printf '%s refs/heads/UPPER\n' "${h40^^}"
	printf '%s refs/heads/short\n' "${h40:2}"
	printf '%srefs/heads/nospace\n' "$h40"
	printf '%s a/b\n' "$h40"
	printf '%s refs/tags/last' "$h40"
} | put refs bad-names
{ printf '%s refs/heads/a\n' "$h40"; printf '%s refs/heads/b\0c\n' "$h40"; } |
    put refs bad-nul-inside
printf 'refs/heads/main\nrefs/heads/feature/x\nHEAD\nrefs/tags/v1.0\n' |
    put refs names

# --- reftables, real and hostile -----------------------------------------------

# Each table of the fixtures, by its place in the stack: sha1 tables are of
# version 1, sha256 ones of version 2. The big one (300 branches) has many
# ref blocks, a ref index, obj and log blocks.
for fx in sha1 sha256; do
	tar -xzf "$fz/../fixtures/reftable/$fx.tar.gz" -C "$tmp"
	i=0
	while read -r table; do
		i=$((i + 1))
		put reftable "$fx-table-$i" <"$tmp/$fx.git/reftable/$table"
	done <"$tmp/$fx.git/reftable/tables.list"
done
big=$corpus/reftable/sha1-table-2
len=$(($(od -An -tu1 -j 25 -N 1 "$big") * 65536 +
    $(od -An -tu1 -j 26 -N 1 "$big") * 256 + $(od -An -tu1 -j 27 -N 1 "$big")))
# damage NAME OFFSET BYTES: the big table with BYTES (printf escapes) at OFFSET.
damage() {
	cp "$big" "$corpus/reftable/$1"
	printf "$3" | dd of="$corpus/reftable/$1" bs=1 seek="$2" conv=notrunc \
	    status=none
}
head -c 5000 "$big" | put reftable bad-truncated
damage bad-prefix-too-long 28 '\x09'
damage bad-block-len-past-file 25 '\xff\xff\x00'
damage bad-restart-count-zero $((len - 2)) '\x00\x00'
damage bad-restart-out-of-range $((len - 5)) '\xff\xff\xff'
damage bad-value-type 29 '\x0f'
damage bad-block-type 24 'x'

# --- commit-graphs: a single file, the two layers of a chain, sha256 --------
# History by commit-tree, dates fixed: merges, an octopus (EDGE chunk), a
# commit dated past 2^32 (CDAT's 34-bit time).

mkdir -p "$corpus/commitgraph"
cgrepo() {
	local fmt=$1 tree p a b oct i

	git init -q --bare $fmt "$tmp/cg"
	cd "$tmp/cg"
	tree=$(git mktree </dev/null)
	mk() {
		local t=$1 args=
		shift
		for i in "$@"; do args="$args -p $i"; done
		echo "c$t" | GIT_AUTHOR_DATE="@$t +0000" \
		    GIT_COMMITTER_DATE="@$t +0000" git commit-tree $tree $args
	}
	p=; for i in $(seq 1 12); do p=$(mk $((1700000000 + i)) $p); done
	a=$(mk 1700000100 "$(git rev-parse "$p~4")")
	b=$(mk 1700000200 "$(git rev-parse "$p~6")")
	oct=$(mk 1700000300 "$p" "$a" "$b" "$(git rev-parse "$p~9")")
	p=$(mk 5000000000 "$oct")
	git update-ref refs/heads/main "$p"
	git commit-graph write --reachable
}
cgrepo ""
put commitgraph single-sha1.graph <objects/info/commit-graph
cg=$corpus/commitgraph/single-sha1.graph
rm objects/info/commit-graph
git rev-parse main~3 | git commit-graph write --split=no-merge --stdin-commits
git commit-graph write --reachable --split=no-merge
n=0
for h in $(cat objects/info/commit-graphs/commit-graph-chain); do
	put commitgraph "layer$n-sha1.graph" \
	    <"objects/info/commit-graphs/graph-$h.graph"
	n=$((n + 1))
done
cd "$fz"
rm -rf "$tmp/cg"
cgrepo --object-format=sha256
put commitgraph single-sha256.graph <objects/info/commit-graph
cd "$fz"

# --- hostile commit-graphs, edited from the sha1 one -------------------------
# Header 8, table (C + 1) * 12: chunk i's id at 8 + 12 i, its offset after.

chunk() {	# chunk ID: the offset of the chunk ID in $cg
	local i

	for i in $(seq 0 $(($(od -An -tu1 -j6 -N1 "$cg") - 1))); do
		if [ "$(dd if="$cg" bs=1 skip=$((8 + 12 * i)) count=4 \
		    status=none)" = "$1" ]; then
			od -An -tu8 --endian=big -j$((12 + 12 * i)) -N8 "$cg" |
			    tr -d ' '
			return
		fi
	done
}
toc() {		# toc ID: where the table's entry for ID is
	local i

	for i in $(seq 0 $(($(od -An -tu1 -j6 -N1 "$cg") - 1))); do
		if [ "$(dd if="$cg" bs=1 skip=$((8 + 12 * i)) count=4 \
		    status=none)" = "$1" ]; then
			echo $((8 + 12 * i))
			return
		fi
	done
}
oidl=$(chunk OIDL)
cdat=$(chunk CDAT)
edge=$(chunk EDGE)
head -c $(($(stat -c %s "$cg") / 2)) "$cg" | put commitgraph bad-truncated
cp "$cg" "$tmp/x" && patch "$tmp/x" 4 02
put commitgraph bad-version2 <"$tmp/x"
cp "$cg" "$tmp/x" && patch "$tmp/x" 5 02
put commitgraph bad-hash-version <"$tmp/x"
cp "$cg" "$tmp/x" && patch "$tmp/x" $(($(toc CDAT) + 4)) 00 00 00 00 7f ff ff ff
put commitgraph bad-chunk-offset <"$tmp/x"
cp "$cg" "$tmp/x" && patch "$tmp/x" "$(toc CDAT)" 4f 49 44 4c
put commitgraph bad-chunk-twice <"$tmp/x"
cp "$cg" "$tmp/x" && patch "$tmp/x" 6 40
put commitgraph bad-chunk-count <"$tmp/x"
cp "$cg" "$tmp/x" && patch "$tmp/x" $((cdat + 20)) 00 00 03 e8
put commitgraph bad-parent-range <"$tmp/x"
cp "$cg" "$tmp/x" && patch "$tmp/x" $((cdat + 24)) 80 00 00 7f
put commitgraph bad-edge-past-end <"$tmp/x"
# The EDGE run never ends: no entry has its top bit set.
cp "$cg" "$tmp/x" && patch "$tmp/x" $((edge + 8)) 00 00 00 01
put commitgraph bad-edge-unended <"$tmp/x"
cp "$cg" "$tmp/x" && patch "$tmp/x" $(($(chunk OIDF) + 4 * 100)) 00 00 00 00
put commitgraph bad-fanout-decreases <"$tmp/x"
cp "$cg" "$tmp/x"
dd if="$cg" of="$tmp/x" bs=1 skip=$oidl seek=$((oidl + 20)) count=20 \
    conv=notrunc status=none
put commitgraph bad-ids-repeat <"$tmp/x"
cp "$cg" "$tmp/x" && patch "$tmp/x" 7 01
put commitgraph bad-base-count <"$tmp/x"

# --- sizes -------------------------------------------------------------------

total=0
for t in "$corpus"/*; do
	n=$(find "$t" -type f | wc -l)
	s=$(du -cb "$t"/* | tail -n 1 | cut -f 1)
	big=$(find "$t" -type f -size +64k)
	if [ -n "$big" ]; then
		echo "make-seeds.sh: over 64 KiB: $big" >&2
		exit 1
	fi
	echo "$(basename "$t"): $n files, $s bytes"
	total=$((total + s))
done
echo "total: $total bytes"
