# odbfs: a git object database as a read-only FUSE file system.
#
#   make                build odbfs and odbfs-cat (tools/)
#   make check          unit tests, then the bats suites (mounting odbfs-assert,
#                       the build with assertions on); ends "N passed, N failed"
#   make demo           install what is missing, build, mount this repository
#   make bench          speed against git and libgit2 (see bench/)
#   make install        PREFIX=/usr/local DESTDIR=
#   make clean

VERSION = 0.1.0
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
# Where systemd looks for units of a local install (systemd.unit(5)).
UNITDIR ?= $(PREFIX)/lib/systemd/system
UNITS = odbfs@.service odbfs-root@.service

CC ?= cc
PKG_CONFIG ?= pkg-config
# Assertions (programmer errors, invariants the notes state) are compiled
# out here and in by the sanitizer builds below and by any CFLAGS given
# without -DNDEBUG, e.g. make CFLAGS='-O0 -g'.
CFLAGS ?= -O2 -g -DNDEBUG
# What the code needs, kept even when CFLAGS is given on the command line.
BASE_CFLAGS = -std=c11 -Wall -Wextra -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 \
	-DODBFS_VERSION='"$(VERSION)"'

STORE_PKGS = zlib libdeflate liburcu-memb libxxhash libcrypto
FS_PKGS = fuse3 libsystemd libseccomp
STORE_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(STORE_PKGS) 2>/dev/null)
STORE_LIBS := $(shell $(PKG_CONFIG) --libs $(STORE_PKGS) 2>/dev/null) -lpthread
FS_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(FS_PKGS) 2>/dev/null)
FS_LIBS := $(shell $(PKG_CONFIG) --libs $(FS_PKGS) 2>/dev/null)

STORE_SRC = store/alternates.c store/cache.c store/config.c store/file.c store/delta.c store/scan.c store/idx.c store/log.c store/loose.c store/map.c \
	store/commit.c store/commitgraph.c store/object.c store/graph.c store/history.c store/lookup.c store/odb.c store/oid.c store/pack.c \
	store/packtable.c store/reader.c \
	store/refs.c store/reftable.c store/repo.c store/rev.c store/snapshot.c store/tree.c store/unpack.c store/verify.c store/watch.c store/zio.c
STORE_OBJ = $(STORE_SRC:.c=.o)
# store/'s public face: fs/ and tools/ are compiled against these headers
# alone (-I store/include, never -I store), so that including a private
# header of the store from them fails to compile. The store itself, and
# the unit tests and fuzzers that test its insides, see both.
PUBLIC_HDR = store/include/odbstore/*.h
PUBLIC_INC = -Istore/include
STORE_HDR = store/*.h $(PUBLIC_HDR)
STORE_INC = -Istore -Istore/include
FS_SRC = $(wildcard fs/*.c)
FS_OBJ = $(FS_SRC:.c=.o)
UNIT_SRC = $(wildcard tests/unit/*.c)
# The part of fs/ that needs no FUSE session (its headers only), tested
# with the store.
UNIT_FS_SRC = fs/cell.c fs/dirlist.c fs/fingerprint.c fs/forge.c fs/layout.c fs/rescan.c fs/roster.c fs/served.c fs/metrics.c fs/miss.c fs/node.c fs/owner.c fs/readers.c \
	fs/treecache.c fs/trim.c \
	fs/reflinks.c fs/stats.c $(wildcard fs/view*.c)

all: odbfs odbfs-cat

store/libodbstore.a: $(STORE_OBJ)
	$(AR) rcs $@ $^

store/%.o: store/%.c $(STORE_HDR)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(STORE_CFLAGS) $(STORE_INC) -c -o $@ $<

fs/%.o: fs/%.c fs/*.h $(PUBLIC_HDR)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(FS_CFLAGS) $(STORE_CFLAGS) $(PUBLIC_INC) -c -o $@ $<

tools/%.o: tools/%.c $(PUBLIC_HDR)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(STORE_CFLAGS) $(PUBLIC_INC) -c -o $@ $<

odbfs: $(FS_OBJ) store/libodbstore.a
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $(FS_OBJ) store/libodbstore.a $(FS_LIBS) \
		$(STORE_LIBS) $(LDFLAGS)

odbfs-cat: tools/odbfs-cat.o store/libodbstore.a
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $^ $(STORE_LIBS) $(LDFLAGS)

tests/unit/unit: $(UNIT_SRC) $(UNIT_FS_SRC) tests/unit/*.h fs/*.h \
		$(STORE_HDR) store/libodbstore.a
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(FS_CFLAGS) $(STORE_CFLAGS) $(STORE_INC) -Ifs -o $@ \
		$(UNIT_SRC) $(UNIT_FS_SRC) store/libodbstore.a $(FS_LIBS) \
		$(STORE_LIBS) $(LDFLAGS)

deps:
	@.ci/deps

check: deps
	@$(MAKE) --no-print-directory all odbfs-assert tests/unit/unit-asan odbfs-asan
	@tests/run

demo: deps
	@$(MAKE) --no-print-directory all
	@tests/demo

# The units name the installed odbfs and carry systemd/hardening.conf.
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(UNITDIR)
	install -m 0755 odbfs odbfs-cat $(DESTDIR)$(BINDIR)
	install -m 0644 man/odbfs.1 man/odbfs-cat.1 $(DESTDIR)$(MANDIR)/man1
	for u in $(UNITS); do \
		sed -e 's|@BINDIR@|$(BINDIR)|g' -e '/^@HARDENING@$$/{' \
			-e 'r systemd/hardening.conf' -e 'd' -e '}' systemd/$$u \
			>$(DESTDIR)$(UNITDIR)/$$u && \
		chmod 0644 $(DESTDIR)$(UNITDIR)/$$u || exit 1; \
	done

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/odbfs $(DESTDIR)$(BINDIR)/odbfs-cat \
		$(DESTDIR)$(MANDIR)/man1/odbfs.1 $(DESTDIR)$(MANDIR)/man1/odbfs-cat.1 \
		$(addprefix $(DESTDIR)$(UNITDIR)/,$(UNITS))

clean:
	rm -f odbfs odbfs-cat odbfs-asan odbfs-tsan odbfs-assert store/*.o store/*.a \
		fs/*.o tools/*.o tests/unit/unit tests/unit/unit-asan
	rm -rf obj-assert

.PHONY: all deps check demo install uninstall clean

bench/lookup: bench/lookup.c store/libodbstore.a
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(STORE_CFLAGS) $(PUBLIC_INC) $(shell $(PKG_CONFIG) --cflags libgit2) \
		-o $@ $< store/libodbstore.a $(STORE_LIBS) \
		$(shell $(PKG_CONFIG) --libs libgit2) $(LDFLAGS)

bench/floorfs: bench/floorfs.c
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(FS_CFLAGS) -o $@ $< $(FS_LIBS) $(LDFLAGS)

bench/fsbench: bench/fsbench.c
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -o $@ $< -lpthread $(LDFLAGS)

bench:
	@.ci/deps libgit2-dev borgbackup restic
	@$(MAKE) --no-print-directory all bench/lookup bench/floorfs bench/fsbench
	@bench/run.sh $(BENCH_ARGS)

.PHONY: bench
include tests/fuzz/fuzz.mk

# odbfs with its assertions live: the release's sources and CFLAGS but
# -DNDEBUG, its objects in obj-assert/. The bats suites mount it in make
# check (tests/run), so that what the notes state and assert() checks is
# checked end to end, not only by the unit tests.
ASSERT_CFLAGS = $(filter-out -DNDEBUG,$(CFLAGS))
ASSERT_OBJ = $(FS_SRC:%.c=obj-assert/%.o) $(STORE_SRC:%.c=obj-assert/%.o)

obj-assert/store/%.o: store/%.c $(STORE_HDR)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(ASSERT_CFLAGS) $(STORE_CFLAGS) $(STORE_INC) -c -o $@ $<

obj-assert/fs/%.o: fs/%.c fs/*.h $(PUBLIC_HDR)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(ASSERT_CFLAGS) $(FS_CFLAGS) $(STORE_CFLAGS) $(PUBLIC_INC) \
		-c -o $@ $<

odbfs-assert: $(ASSERT_OBJ)
	$(CC) $(BASE_CFLAGS) $(ASSERT_CFLAGS) -o $@ $(ASSERT_OBJ) $(FS_LIBS) $(STORE_LIBS) \
		$(LDFLAGS)

# Sanitizer builds, next to the normal one (every source compiled again).
SAN_CFLAGS = -O1 -g -fno-omit-frame-pointer
ASAN = -fsanitize=address,undefined -fno-sanitize-recover=undefined
TSAN = -fsanitize=thread

tests/unit/unit-asan: $(UNIT_SRC) $(UNIT_FS_SRC) $(STORE_SRC) tests/unit/*.h \
		fs/*.h $(STORE_HDR)
	$(CC) $(BASE_CFLAGS) $(SAN_CFLAGS) $(ASAN) $(FS_CFLAGS) $(STORE_CFLAGS) $(STORE_INC) -Ifs \
		-o $@ $(UNIT_SRC) $(UNIT_FS_SRC) $(STORE_SRC) $(FS_LIBS) $(STORE_LIBS)

odbfs-asan: $(FS_SRC) $(STORE_SRC) fs/*.h $(STORE_HDR)
	$(CC) $(BASE_CFLAGS) $(SAN_CFLAGS) $(ASAN) $(FS_CFLAGS) $(STORE_CFLAGS) \
		$(STORE_INC) -o $@ $(FS_SRC) $(STORE_SRC) $(FS_LIBS) $(STORE_LIBS)

odbfs-tsan: $(FS_SRC) $(STORE_SRC) fs/*.h $(STORE_HDR)
	$(CC) $(BASE_CFLAGS) $(SAN_CFLAGS) $(TSAN) $(FS_CFLAGS) $(STORE_CFLAGS) \
		$(STORE_INC) -o $@ $(FS_SRC) $(STORE_SRC) $(FS_LIBS) $(STORE_LIBS)

# make asan / make tsan: 8 parallel readers for LOAD_SECONDS under each.
LOAD_SECONDS ?= 60
asan: odbfs-asan tests/unit/unit-asan
	tests/unit/unit-asan >/dev/null
	tests/load.sh ./odbfs-asan $(LOAD_SECONDS)

tsan: odbfs-tsan
	TSAN_OPTIONS=suppressions=tests/tsan.supp \
		tests/load.sh ./odbfs-tsan $(LOAD_SECONDS)

.PHONY: asan tsan
