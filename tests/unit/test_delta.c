/*
 * test_delta: delta.c, git's delta format. delta_sizes() is fed header
 * varints, including ones that run off the end or overflow 64 bits.
 * delta_apply() is fed good deltas, whose results were worked out by hand
 * from gitformat-pack's description, and hostile ones: the corrupt deltas
 * of git's t5303-pack-corruption-resilience.sh, libgit2's regression tests
 * for CVE-2018-10887 and CVE-2018-10888, copies that reach past the base,
 * a base that does not match the header and results above the limit.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "delta.h"
#include "odbstore/log.h"
#include "odbstore/object.h"
#include "unit.h"

/* A byte string literal and its length, NULs included. */
#define BYTES(s) (const unsigned char *)(s), sizeof(s) - 1
#define DELTA(s) BYTES(s), sizeof(s) - 1
/*
 * Its first n bytes only. The rest is still in memory and would complete
 * the delta, so a read past the end shows as a wrong success even without
 * ASan.
 */
#define CUT(s, n) (const unsigned char *)(s), n, sizeof(s) - 1

#define CORRUPT (-EFSCORRUPTED)

struct sizes_case {
	const char *name;
	const unsigned char *delta;
	size_t len;
	int ret;
	uint64_t base_size;
	uint64_t result_size;
	size_t hdrlen;
};

static const struct sizes_case sizes_cases[] = {
	{ "one byte each", BYTES("\4\1"), 0, 4, 1, 2 },
	{ "two bytes each (128, 300)", BYTES("\x80\x01\xac\x02"), 0, 128,
	    300, 4 },
	{ "instructions after the sizes are not read", BYTES("\1\2\x91"), 0,
	    1, 2, 2 },
	{ "UINT64_MAX takes ten bytes",
	    BYTES("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\0"), 0,
	    UINT64_MAX, 0, 11 },
	{ "2^63 has a bare bit 63",
	    BYTES("\0\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01"), 0, 0,
	    (uint64_t)1 << 63, 11 },
	{ "empty delta", BYTES(""), CORRUPT, 0, 0, 0 },
	{ "no result size", BYTES("\5"), CORRUPT, 0, 0, 0 },
	{ "base size runs off the end", BYTES("\x80"), CORRUPT, 0, 0, 0 },
	{ "result size runs off the end", BYTES("\5\x85\x80"), CORRUPT, 0, 0,
	    0 },
	{ "base size overflows 64 bits",
	    BYTES("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02\0"), CORRUPT, 0, 0,
	    0 },
	{ "result size overflows 64 bits",
	    BYTES("\0\x80\x80\x80\x80\x80\x80\x80\x80\x80\x40"), CORRUPT, 0, 0,
	    0 },
	{ "eleven-byte varint of zeros",
	    BYTES("\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\0\0"), CORRUPT, 0,
	    0, 0 },
};

/* The bases the deltas below apply to. */
enum base {
	B_EMPTY,
	B_WORD,		/* "base", as in t5303 */
	B_HELLO,	/* "hello world" */
	B_ZERO16,	/* 16 NULs, as in libgit2's tests/delta/apply.c */
	B_RAMP,		/* 300 bytes of ramp() */
	B_BIG,		/* 0x10010 bytes of ramp() */
};

#define BIG_LEN 0x10010

struct apply_case {
	const char *name;
	enum base base;
	const unsigned char *delta;
	size_t deltalen;
	size_t avail;		/* bytes of delta in memory, >= deltalen */
	uint64_t max;		/* max_result; 0 means OBJ_MAX_INMEM */
	int ret;
	const char *want;	/* the result, or NULL: */
	size_t wantlen;
	size_t want_off;	/* the result is base[want_off, +wantlen) */
};

/* The expected result: a literal, a slice of the base, or none. */
#define WANT(s) s, sizeof(s) - 1, 0
#define SLICE(off, len) NULL, len, off
#define NONE NULL, 0, 0

static const struct apply_case apply_cases[] = {
	/*
	 * Good deltas. In a copy opcode bits 0-3 say which offset bytes
	 * follow and bits 4-6 which size bytes, least significant first.
	 */
	/* t5303 "apply good minimal delta" */
	{ "minimal delta: one literal onto an empty base", B_EMPTY,
	    DELTA("\0\1\1X"), 0, 0, WANT("X") },
	{ "empty result from an empty base", B_EMPTY, DELTA("\0\0"), 0, 0,
	    WANT("") },
	/* copy 6+5 "world", insert ", ", copy 0+5 "hello", insert "!" */
	{ "copies and inserts interleaved", B_HELLO,
	    DELTA("\x0b\x0d" "\x91\x06\x05" "\2, " "\x90\x05" "\1!"), 0, 0,
	    WANT("world, hello!") },
	{ "copy ending on the base's last byte", B_WORD,
	    DELTA("\4\2\x91\2\2"), 0, 0, WANT("se") },
	{ "copy of the whole base", B_WORD, DELTA("\4\4\x90\4"), 0, 0,
	    WANT("base") },
	{ "base longer than what is copied", B_WORD, DELTA("\4\2\x91\1\2"),
	    0, 0, WANT("as") },
	/* offset bytes 0 and 1: 0x0102; size byte 0: 0x20 */
	{ "copy with two offset bytes", B_RAMP,
	    DELTA("\xac\x02\x20\x93\x02\x01\x20"), 0, 0, SLICE(0x102, 0x20) },
	{ "copy with offset byte 1 only", B_RAMP,
	    DELTA("\xac\x02\x04\x92\x01\x04"), 0, 0, SLICE(0x100, 4) },
	{ "copy with all four offset bytes", B_RAMP,
	    DELTA("\xac\x02\x01\x9f\0\x01\0\0\x01"), 0, 0, SLICE(0x100, 1) },
	{ "copy with size byte 1 only", B_RAMP,
	    DELTA("\xac\x02\x80\x02\xa0\x01"), 0, 0, SLICE(0, 0x100) },
	/* the base is 0x10010 (90 80 04) bytes, the result 0x10000 */
	{ "copy without size bytes copies 0x10000", B_BIG,
	    DELTA("\x90\x80\x04\x80\x80\x04\x80"), 0, 0, SLICE(0, 0x10000) },
	{ "copy with size byte 0 equal to 0 copies 0x10000", B_BIG,
	    DELTA("\x90\x80\x04\x80\x80\x04\x91\x10\0"), 0, 0,
	    SLICE(0x10, 0x10000) },
	{ "copy with three size bytes", B_BIG,
	    DELTA("\x90\x80\x04\x80\x80\x04\xf0\0\0\x01"), 0, 0,
	    SLICE(0, 0x10000) },
	{ "result exactly at max_result", B_EMPTY, DELTA("\0\5\5hello"), 5, 0,
	    WANT("hello") },

	/* t5303-pack-corruption-resilience.sh, "apply delta with ..." */
	{ "t5303 too many literal bytes", B_EMPTY, DELTA("\0\1\2XX"), 0,
	    CORRUPT, NONE },
	{ "t5303 too many copied bytes", B_WORD, DELTA("\4\1\x91\0\2"), 0,
	    CORRUPT, NONE },
	{ "t5303 too few literal bytes", B_EMPTY, DELTA("\0\2\2X"), 0, CORRUPT,
	    NONE },
	{ "t5303 too few bytes in base", B_EMPTY, DELTA("\0\1\x91\0\1"), 0,
	    CORRUPT, NONE },
	{ "t5303 truncated copy parameters", B_WORD, DELTA("\4\2\1X\x91"), 0,
	    CORRUPT, NONE },
	{ "t5303 trailing garbage literal", B_EMPTY, DELTA("\0\1\1X\1"), 0,
	    CORRUPT, NONE },
	/* t5303 gives this one an empty base, which trips the size check */
	{ "t5303 trailing garbage copy", B_WORD, DELTA("\4\1\1X\x91\0\1"), 0,
	    CORRUPT, NONE },
	{ "t5303 trailing garbage opcode", B_EMPTY, DELTA("\0\1\1X\0"), 0,
	    CORRUPT, NONE },

	/*
	 * libgit2 tests/delta/apply.c, read_at_off (CVE-2018-10887): offset
	 * 0xffffffff, which sign-extended in 32-bit int arithmetic.
	 */
	{ "CVE-2018-10887 copy from offset 0xffffffff", B_ZERO16,
	    DELTA("\x10\x10\xff\xff\xff\xff\xff\x10\0\0"), 0, CORRUPT, NONE },
	/* the same bug's other face: offset + size wraps in 32 bits */
	{ "copy whose offset plus size wraps 32 bits", B_ZERO16,
	    DELTA("\x10\x20\x9f\xf0\xff\xff\xff\x20"), 0, CORRUPT, NONE },
	/*
	 * libgit2 tests/delta/apply.c, read_after_limit (CVE-2018-10888):
	 * a copy opcode promising seven operand bytes at the delta's end.
	 */
	{ "CVE-2018-10888 copy operands past the delta's end", B_ZERO16,
	    DELTA("\x10\x70\xff"), 0, CORRUPT, NONE },
	{ "copy with two of its seven operand bytes", B_ZERO16,
	    DELTA("\x10\x10\xff\0\0"), 0, CORRUPT, NONE },
	{ "copy missing its size byte", B_WORD, DELTA("\4\1\x91\0"), 0,
	    CORRUPT, NONE },
	{ "copy's size byte just past the delta's end", B_WORD,
	    CUT("\4\2\x91\0\2", 4), 0, CORRUPT, NONE },
	{ "copy's offset byte just past the delta's end", B_BIG,
	    CUT("\x90\x80\x04\x80\x80\x04\x81\x10", 7), 0, CORRUPT, NONE },
	{ "literal's last byte just past the delta's end", B_EMPTY,
	    CUT("\0\2\2XY", 4), 0, CORRUPT, NONE },

	/* more copies that leave the base */
	{ "copy from offset == base size", B_WORD, DELTA("\4\1\x91\4\1"), 0,
	    CORRUPT, NONE },
	{ "copy one byte past the base's end", B_WORD, DELTA("\4\3\x91\2\3"),
	    0, CORRUPT, NONE },
	{ "implicit 0x10000 copy from a small base", B_WORD,
	    DELTA("\4\x80\x80\x04\x80"), 0, CORRUPT, NONE },
	{ "good copy, then one past the base", B_HELLO,
	    DELTA("\x0b\x06\x90\x05\x91\x0b\x01"), 0, CORRUPT, NONE },

	/* opcode 0, header and size mismatches */
	{ "reserved opcode 0 first", B_EMPTY, DELTA("\0\1\0\1X"), 0, CORRUPT,
	    NONE },
	{ "base larger than the header says", B_WORD, DELTA("\3\1\1X"), 0,
	    CORRUPT, NONE },
	{ "base smaller than the header says", B_WORD, DELTA("\5\1\1X"), 0,
	    CORRUPT, NONE },
	{ "empty delta", B_EMPTY, DELTA(""), 0, CORRUPT, NONE },
	{ "header without a result size", B_EMPTY, DELTA("\0"), 0, CORRUPT,
	    NONE },
	{ "result size varint truncated", B_EMPTY, DELTA("\0\x80"), 0,
	    CORRUPT, NONE },
	{ "base size overflowing 64 bits", B_EMPTY,
	    DELTA("\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02\0"), 0, CORRUPT,
	    NONE },
	{ "instructions produce less than the header says", B_EMPTY,
	    DELTA("\0\3\2XY"), 0, CORRUPT, NONE },
	{ "no instructions for a result of one byte", B_EMPTY, DELTA("\0\1"),
	    0, CORRUPT, NONE },
	{ "a literal for a result of zero bytes", B_EMPTY, DELTA("\0\0\1X"),
	    0, CORRUPT, NONE },

	/* results above the limit: refused before anything is allocated */
	{ "result one byte above max_result", B_EMPTY, DELTA("\0\5\5hello"),
	    4, -EFBIG, NONE },
	/* 2^30 + 1 = 81 80 80 80 04 */
	{ "result one byte above OBJ_MAX_INMEM", B_EMPTY,
	    DELTA("\0\x81\x80\x80\x80\x04"), 0, -EFBIG, NONE },
	{ "result of 2^62 bytes with no instructions", B_EMPTY,
	    DELTA("\0\x80\x80\x80\x80\x80\x80\x80\x80\x40"), 0, -EFBIG, NONE },
	/* above INT64_MAX even when the caller allows anything */
	{ "result of 2^63 bytes, max_result UINT64_MAX", B_EMPTY,
	    DELTA("\0\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01"), UINT64_MAX,
	    -EFBIG, NONE },
};

/* Bytes that do not repeat with a period of 256, to catch offset slips. */
static unsigned char
ramp(size_t i)
{
	return (unsigned char)(i * 131 + (i >> 8) * 7 + 1);
}

static const unsigned char *
get_base(enum base b, size_t *len)
{
	static unsigned char zero16[16], rampbuf[300], big[BIG_LEN];
	static bool filled;

	if (!filled) {
		for (size_t i = 0; i < sizeof(rampbuf); i++)
			rampbuf[i] = ramp(i);
		for (size_t i = 0; i < sizeof(big); i++)
			big[i] = ramp(i);
		filled = true;
	}
	switch (b) {
	case B_EMPTY:
		*len = 0;
		return (const unsigned char *)"";
	case B_WORD:
		*len = 4;
		return (const unsigned char *)"base";
	case B_HELLO:
		*len = 11;
		return (const unsigned char *)"hello world";
	case B_ZERO16:
		*len = sizeof(zero16);
		return zero16;
	case B_RAMP:
		*len = sizeof(rampbuf);
		return rampbuf;
	case B_BIG:
		*len = sizeof(big);
		return big;
	}
	*len = 0;
	return NULL;
}

static void
test_sizes(void)
{
	for (size_t i = 0; i < sizeof(sizes_cases) / sizeof(sizes_cases[0]);
	    i++) {
		const struct sizes_case *c = &sizes_cases[i];
		uint64_t base = 0xdead, result = 0xbeef;
		size_t hdrlen = 0xfeed;
		const char *why = NULL;
		int ret;

		ret = delta_sizes(c->delta, c->len, &base, &result, &hdrlen,
		    &why);
		if (!check_int(ret, c->ret, "delta_sizes: %s: return",
		    c->name) || ret < 0) {
			if (ret < 0)
				check(why && *why, "delta_sizes: %s: says why",
				    c->name);
			continue;
		}
		check(base == c->base_size && result == c->result_size &&
		    hdrlen == c->hdrlen, "delta_sizes: %s: sizes", c->name);
	}
}

static void
test_apply(void)
{
	for (size_t i = 0; i < sizeof(apply_cases) / sizeof(apply_cases[0]);
	    i++) {
		const struct apply_case *c = &apply_cases[i];
		static unsigned char sentinel[1];
		unsigned char *out = sentinel;
		size_t baselen, outlen = 0xfeed;
		const unsigned char *base = get_base(c->base, &baselen);
		const char *why = NULL;
		unsigned char *delta;
		int ret;

		/* on the heap and no longer than it is, for ASan */
		if (!(delta = malloc(c->avail ? c->avail : 1)))
			abort();
		memcpy(delta, c->delta, c->avail);
		ret = delta_apply(base, baselen, delta, c->deltalen,
		    c->max ? c->max : OBJ_MAX_INMEM, &out, &outlen, &why);
		free(delta);
		check_int(ret, c->ret, "delta_apply: %s: return", c->name);
		if (ret == 0 && c->ret == 0) {
			const void *want = c->want ? (const void *)c->want :
			    (const void *)(base + c->want_off);

			check_mem(out, outlen, want, c->wantlen,
			    "delta_apply: %s: result", c->name);
		} else if (ret < 0) {
			check(out == NULL && outlen == 0 && why && *why,
			    "delta_apply: %s: no result, says why", c->name);
		}
		if (ret == 0)
			free(out);
	}
}

void
test_delta(void)
{
	test_sizes();
	test_apply();
}
