#!/usr/bin/env python3
"""packtool: read, patch and forge git packs, indexes and loose objects for
tests/hostile.bats. Only the formats of gitformat-pack(5) with SHA-1 ids.

  packtool.py entries PACK          one line per entry, in pack order:
                                    offset type size szlen hdrlen zlen
                                    (szlen: bytes of type and size; hdrlen:
                                    bytes before the zlib stream, delta
                                    base included; zlen: its length)
  packtool.py idx IDX               one line per index position:
                                    pos id offset field_offset
                                    (field_offset: where the 4-byte offset
                                    of that position sits in IDX)
  packtool.py off64 IDX POS OFFSET  make position POS of the index point
                                    through a new 64-bit offset table entry
  packtool.py patch FILE OFF HEX    overwrite bytes of FILE at OFF
  packtool.py setsize PACK OFF N    rewrite the size of the entry at OFF,
                                    keeping its type and header length
  packtool.py settype PACK OFF T    rewrite the type of the entry at OFF
  packtool.py zlib [--dict]         zlib-compress stdin to stdout; --dict
                                    makes a stream that needs a preset
                                    dictionary
  packtool.py tree                  a tree object's bytes from lines
                                    "MODE NAME ID" on stdin (NAME: s:TEXT
                                    or x:HEX; ID: hex, may be short) or
                                    "raw DATA"; to stdout
  packtool.py explode DIR           write the objects of git cat-file
                                    --batch output on stdin to DIR/xx/<id>
  packtool.py build DIR             forge DIR/pack-<sha>.{pack,idx} from
                                    entry specs on stdin; prints "id offset"
                                    per entry

Entry specs for build, one a line, fields separated by blanks:
  whole TYPE DATA [size=N] [dict] [id=HEX]   TYPE: commit tree blob tag or a
                                             number (any of 0-7)
  ofs N DELTA [opts]                 OFS_DELTA on entry N (0-based)
  ref BASE DELTA [opts]              REF_DELTA on BASE: @N (entry N's id) or
                                     a 40-digit id
DATA and DELTA are x:HEX or s:TEXT (TEXT with Python escapes, \\x20 for a
blank). size=N declares N bytes whatever DATA holds; dict compresses with a
preset dictionary; id=HEX sets the id the index gives the entry, and anon
makes it sha1("hostile entry N") (for chains of equal objects). Otherwise
an entry's id is the real id of what it resolves to, or, when it does not
resolve (a bad delta, a cycle), sha1("hostile entry N").
"""
import hashlib
import os
import struct
import sys
import zlib

TYPES = {"commit": 1, "tree": 2, "blob": 3, "tag": 4}
NAMES = {v: k for k, v in TYPES.items()}


def parse_header(buf, off):
    """(type, size, size bytes, header length with delta base) of the entry
    at off."""
    p = off
    c = buf[p]
    p += 1
    typ = (c >> 4) & 7
    size = c & 15
    shift = 4
    while c & 0x80:
        c = buf[p]
        p += 1
        size |= (c & 0x7F) << shift
        shift += 7
    szlen = p - off
    if typ == 6:
        c = buf[p]
        p += 1
        while c & 0x80:
            c = buf[p]
            p += 1
    elif typ == 7:
        p += 20
    return typ, size, szlen, p - off


def cmd_entries(path):
    buf = open(path, "rb").read()
    nr = struct.unpack(">I", buf[8:12])[0]
    off = 12
    for _ in range(nr):
        typ, size, szlen, hdrlen = parse_header(buf, off)
        d = zlib.decompressobj()
        d.decompress(buf[off + hdrlen:len(buf) - 20])
        zlen = len(buf) - 20 - off - hdrlen - len(d.unused_data)
        print(off, typ, size, szlen, hdrlen, zlen)
        off += hdrlen + zlen


def cmd_idx(path):
    buf = open(path, "rb").read()
    assert buf[:8] == b"\xfftOc\x00\x00\x00\x02", "not a v2 index"
    nr = struct.unpack(">I", buf[8 + 255 * 4:8 + 256 * 4])[0]
    ids = 8 + 1024
    offs = ids + nr * 24
    for i in range(nr):
        field = offs + 4 * i
        print(i, buf[ids + 20 * i:ids + 20 * i + 20].hex(),
              struct.unpack(">I", buf[field:field + 4])[0], field)


def cmd_off64(path, pos, offset):
    """Add a 64-bit table entry holding offset; point pos at it. The index
    checksum is recomputed, so only the offset itself is hostile."""
    buf = bytearray(open(path, "rb").read())
    nr = struct.unpack(">I", buf[8 + 255 * 4:8 + 256 * 4])[0]
    off32 = 8 + 1024 + nr * 24
    end64 = len(buf) - 40
    n64 = (end64 - (off32 + 4 * nr)) // 8
    field = off32 + 4 * int(pos)
    buf[field:field + 4] = struct.pack(">I", 0x80000000 | n64)
    buf[end64:end64] = struct.pack(">Q", int(offset))
    buf[-20:] = hashlib.sha1(buf[:-20]).digest()
    open(path, "wb").write(buf)


def cmd_patch(path, off, hexbytes):
    with open(path, "r+b") as f:
        f.seek(int(off))
        f.write(bytes.fromhex(hexbytes))


def size_header(typ, size):
    """The type-and-size bytes that open an entry."""
    out = bytearray()
    c = (typ << 4) | (size & 15)
    size >>= 4
    while size:
        out.append(c | 0x80)
        c = size & 0x7F
        size >>= 7
    out.append(c)
    return bytes(out)


def cmd_setsize(path, off, size):
    off, size = int(off), int(size)
    buf = open(path, "rb").read()
    c = buf[off]
    n = 1
    while c & 0x80:
        c = buf[off + n]
        n += 1
    new = size_header((buf[off] >> 4) & 7, size)
    if len(new) != n:
        sys.exit("setsize: %d does not fit in %d header bytes" % (size, n))
    cmd_patch(path, off, new.hex())


def cmd_settype(path, off, typ):
    off = int(off)
    c = open(path, "rb").read()[off]
    cmd_patch(path, off, "%02x" % ((c & 0x8F) | (int(typ) << 4)))


def compress(data, with_dict=False):
    if with_dict:
        z = zlib.compressobj(zdict=b"a preset dictionary nobody has")
        return z.compress(data) + z.flush()
    return zlib.compress(data)


def cmd_zlib(args):
    sys.stdout.buffer.write(compress(sys.stdin.buffer.read(), "--dict" in args))


def payload(text):
    if text.startswith("x:"):
        return bytes.fromhex(text[2:])
    if text.startswith("s:"):
        return text[2:].encode("latin-1").decode("unicode_escape").encode(
            "latin-1")
    sys.exit("payload must be x:HEX or s:TEXT: " + text)


def cmd_tree():
    out = bytearray()
    for line in sys.stdin:
        f = line.split()
        if not f:
            continue
        if f[0] == "raw":
            out += payload(f[1])
        else:
            out += f[0].encode() + b" " + payload(f[1]) + b"\0"
            out += bytes.fromhex(f[2])
    sys.stdout.buffer.write(out)


def cmd_explode(outdir):
    inp = sys.stdin.buffer
    while True:
        head = inp.readline().split()
        if not head:
            break
        oid, size = head[0].decode(), int(head[2])
        os.makedirs(os.path.join(outdir, oid[:2]), exist_ok=True)
        with open(os.path.join(outdir, oid[:2], oid), "wb") as f:
            f.write(inp.read(size))
        inp.read(1)


def varint(buf, p):
    v = shift = 0
    while True:
        c = buf[p]
        p += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, p


def apply_delta(base, delta):
    """git's patch_delta(); None if the delta is bad."""
    try:
        bsize, p = varint(delta, 0)
        rsize, p = varint(delta, p)
        if bsize != len(base):
            return None
        out = bytearray()
        while p < len(delta):
            c = delta[p]
            p += 1
            if c & 0x80:
                off = size = 0
                for i in range(4):
                    if c & (1 << i):
                        off |= delta[p] << (8 * i)
                        p += 1
                for i in range(3):
                    if c & (0x10 << i):
                        size |= delta[p] << (8 * i)
                        p += 1
                size = size or 0x10000
                if off + size > len(base):
                    return None
                out += base[off:off + size]
            elif c:
                if p + c > len(delta):
                    return None
                out += delta[p:p + c]
                p += c
            else:
                return None
        return bytes(out) if len(out) == rsize else None
    except IndexError:
        return None


def cmd_build(outdir):
    specs = []
    for line in sys.stdin:
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        e = {"kind": f[0], "opts": {}}
        if f[0] == "whole":
            e["type"] = TYPES.get(f[1]) or int(f[1])
            e["data"] = payload(f[2])
        elif f[0] in ("ofs", "ref"):
            e["base"] = f[1]
            e["data"] = payload(f[2])
        else:
            sys.exit("unknown entry kind " + f[0])
        for o in f[3:]:
            k, _, v = o.partition("=")
            e["opts"][k] = v
        specs.append(e)

    content = {}

    def resolve(i):
        """(type, bytes) that entry i stands for, or None. Iterative: a
        chain may be deeper than Python's recursion limit."""
        chain, seen, j = [], set(), i
        while True:
            if j in content:
                got = content[j]
                break
            e = specs[j]
            if e["kind"] == "whole":
                ok = e["type"] in NAMES and "size" not in e["opts"]
                got = content[j] = (e["type"], e["data"]) if ok else None
                break
            if j in seen:  # a cycle
                got = None
                break
            seen.add(j)
            chain.append(j)
            if e["kind"] == "ofs":
                j = int(e["base"])
            elif e["base"].startswith("@"):
                j = int(e["base"][1:])
            else:  # a base outside this pack
                got = None
                break
        for j in reversed(chain):
            if got is not None:
                r = apply_delta(got[1], specs[j]["data"])
                got = (got[0], r) if r is not None else None
            content[j] = got
        return content[i]

    ids = {}

    def oid(i):
        if i not in ids:
            e = specs[i]
            if "id" in e["opts"]:
                ids[i] = bytes.fromhex(e["opts"]["id"])
            elif "anon" in e["opts"]:
                ids[i] = hashlib.sha1(b"hostile entry %d" % i).digest()
            else:
                r = resolve(i)
                if r:
                    raw = b"%s %d\0" % (NAMES[r[0]].encode(), len(r[1])) + r[1]
                else:
                    raw = b"hostile entry %d" % i
                ids[i] = hashlib.sha1(raw).digest()
        return ids[i]

    pack = bytearray(b"PACK" + struct.pack(">II", 2, len(specs)))
    offsets, crcs = [], []
    for i, e in enumerate(specs):
        off = len(pack)
        size = int(e["opts"].get("size", len(e["data"])))
        if e["kind"] == "whole":
            hdr = size_header(e["type"], size)
        elif e["kind"] == "ofs":
            rel = off - offsets[int(e["base"])]
            enc = [rel & 0x7F]
            rel >>= 7
            while rel:
                rel -= 1
                enc.insert(0, 0x80 | (rel & 0x7F))
                rel >>= 7
            hdr = size_header(6, size) + bytes(enc)
        else:
            b = e["base"]
            hdr = size_header(7, size) + (
                oid(int(b[1:])) if b.startswith("@") else bytes.fromhex(b))
        raw = hdr + compress(e["data"], "dict" in e["opts"])
        offsets.append(off)
        crcs.append(zlib.crc32(raw))
        pack += raw
    pack_sum = hashlib.sha1(pack).digest()
    pack += pack_sum

    order = sorted(range(len(specs)), key=oid)
    idx = bytearray(b"\xfftOc" + struct.pack(">I", 2))
    count = [0] * 256
    for i in order:
        count[oid(i)[0]] += 1
    for b in range(256):
        idx += struct.pack(">I", sum(count[:b + 1]))
    for i in order:
        idx += oid(i)
    for i in order:
        idx += struct.pack(">I", crcs[i])
    for i in order:
        idx += struct.pack(">I", offsets[i])  # all below 2 GiB here
    idx += pack_sum
    idx += hashlib.sha1(idx).digest()

    base = os.path.join(outdir, "pack-" + pack_sum.hex())
    open(base + ".pack", "wb").write(pack)
    open(base + ".idx", "wb").write(idx)
    for i in range(len(specs)):
        print(oid(i).hex(), offsets[i])


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "entries":
        cmd_entries(*args)
    elif cmd == "idx":
        cmd_idx(*args)
    elif cmd == "off64":
        cmd_off64(*args)
    elif cmd == "patch":
        cmd_patch(*args)
    elif cmd == "setsize":
        cmd_setsize(*args)
    elif cmd == "settype":
        cmd_settype(*args)
    elif cmd == "tree":
        cmd_tree()
    elif cmd == "zlib":
        cmd_zlib(args)
    elif cmd == "explode":
        cmd_explode(*args)
    elif cmd == "build":
        cmd_build(*args)
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main()
