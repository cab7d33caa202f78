/*
 * cell: the compact form of the most numerous nodes.
 *
 * A client that looks up every object of a large repository makes a
 * million nodes whose key is a tag and a 20-byte id and whose attributes,
 * beyond the key, are only a size and a type. A cell holds exactly that,
 * and a lookup count, in 32 bytes:
 *
 *    0                      21     22             28          32
 *   +-----+------------------+------+--------------+-----------+
 *   | tag | id (SHA-1)       | type | size (LE 48) | nlookup   |
 *   +-----+------------------+------+--------------+-----------+
 *
 * Cells live in chunks of CELL_CHUNK, mapped whole (no allocator header
 * per cell), and are named by a 32-bit index; index 0 is never a cell.
 * A free cell goes back to its chunk, a chunk with no cell left goes back
 * to the system, and new cells are taken from the lowest chunk with room,
 * so that the live ones gather in few chunks.
 *
 * An open-addressing table of indices (linear probing, backward-shift
 * deletion) finds a cell by its key. It doubles when more than half full
 * and halves when less than an eighth, so it costs 8 to 16 bytes a cell
 * as cells are added: 40 to 48 bytes a node in all.
 *
 * node.c keeps in cells the nodes that a cell reproduces exactly, and
 * calls everything here under its lock: nothing here is thread-safe but
 * cell_get(), which reads a live cell without a lock (its key, type and
 * size never change while it lives).
 */
#ifndef ODBFS_CELL_H
#define ODBFS_CELL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CELL_KEYLEN 21			/* a tag, a SHA-1 id */
#define CELL_SIZE_MAX (((uint64_t)1 << 48) - 1)
#define CELL_CHUNK 4096			/* cells in a chunk: 128 KiB */
#define CELL_CHUNKS_MAX 65536		/* 2^28 cells: 8 GiB of them */
#define CELL_SLOTS_MIN 1024

struct cell {
	unsigned char key[CELL_KEYLEN];
	uint8_t type;
	uint8_t size[6];		/* little-endian */
	uint32_t nlookup;		/* protected by the caller's lock */
};

/* The index of the cell with key, or 0 if there is none. */
uint32_t cell_find(const unsigned char *key);

/*
 * A new cell for key, which no cell has, with a lookup count of 1: its
 * index, or 0 when none can be had (out of memory, every chunk full, a
 * size over CELL_SIZE_MAX); the caller then keeps the node another way.
 */
uint32_t cell_add(const unsigned char *key, uint64_t size, uint8_t type);

/*
 * The live cell idx, without a lock: valid until the cell is freed by
 * cell_forget(), which only the kernel's forget of its node can cause.
 */
const struct cell *cell_get(uint32_t idx);

uint64_t cell_size(const struct cell *c);

/*
 * One more lookup of cell idx. The count stops at UINT32_MAX: the kernel
 * counts in 64 bits, so a cell that reaches it is never freed, rather than
 * freed while the kernel still holds it.
 */
void cell_ref(uint32_t idx);

/* The kernel forgot n lookups of idx; true if that freed the cell. */
bool cell_forget(uint32_t idx, uint64_t n);

/* Cells in use, and slots in the table that finds them. */
size_t cell_count(void);
size_t cell_slots(void);

#endif
