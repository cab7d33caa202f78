# tests/fuzz/fuzz.mk: the store's fuzz targets, included by the Makefile.
# Each tests/fuzz/fuzz_<target>.c feeds inputs to one parser of store/;
# tests/fuzz/corpus/<target>/ holds its inputs worth keeping (seeds made by
# tests/fuzz/make-seeds.sh, and what fuzzing added).
#
#   make fuzz-replay   build tests/fuzz/replay-<target> with $(CC) against
#                      store/libodbstore.a and run each over its corpus;
#                      prints TAP, fails if any input fails (inputs that
#                      show a known store bug are TAP TODOs: see fuzz.h)
#   make fuzz          build each target with clang, libFuzzer, ASan and
#                      UBSan into tests/fuzz/out/, fuzz each for
#                      FUZZ_SECONDS, then merge the inputs that found new
#                      code into its corpus; crashes go to tests/fuzz/crashes/
#                      (-j2 fuzzes two targets at once)
#   make fuzz-build    only build them
#   make fuzz-clean
#
# For example: make -j2 fuzz FUZZ_TARGETS="delta idx" FUZZ_SECONDS=600
# Changing FUZZ_DEFS or FUZZ_CFLAGS needs a make fuzz-clean first.

FUZZ_TARGETS = idx pack delta loose tree commit refs reftable commitgraph
FUZZ_SECONDS ?= 60
FUZZ_TIMEOUT ?= 10
FUZZ_ARGS ?=
FUZZ_CC ?= clang
FUZZ_CFLAGS ?= -O1 -g -fno-omit-frame-pointer
FUZZ_SANITIZE ?= -fsanitize=address,undefined -fno-sanitize-recover=all
# -DFUZZ_SKIP_KNOWN looks past the store bugs the corpus already shows
# (FUZZ_KNOWN in fuzz.h).
FUZZ_DEFS ?=

# The longest input worth trying: a few hundred index entries, a small
# pack, a delta with its base; text objects and packed-refs are shorter.
FUZZ_MAX_LEN_idx = 8192
FUZZ_MAX_LEN_pack = 8192
FUZZ_MAX_LEN_delta = 8192
FUZZ_MAX_LEN_loose = 4096
FUZZ_MAX_LEN_tree = 4096
FUZZ_MAX_LEN_commit = 4096
FUZZ_MAX_LEN_refs = 4096
# A reftable of a few hundred refs in small blocks, with a ref index.
FUZZ_MAX_LEN_reftable = 32768
FUZZ_MAX_LEN_commitgraph = 8192

FUZZ_DIR = tests/fuzz
FUZZ_OUT = $(FUZZ_DIR)/out
FUZZ_STORE_OBJ = $(STORE_SRC:store/%.c=$(FUZZ_OUT)/store/%.o)

$(FUZZ_DIR)/replay-%: $(FUZZ_DIR)/replay.c $(FUZZ_DIR)/fuzz_%.c \
    $(FUZZ_DIR)/fuzz.h $(STORE_HDR) store/libodbstore.a
	$(CC) $(BASE_CFLAGS) $(CFLAGS) $(STORE_CFLAGS) $(STORE_INC) -o $@ \
		$(FUZZ_DIR)/replay.c $(FUZZ_DIR)/fuzz_$*.c store/libodbstore.a \
		$(STORE_LIBS) $(LDFLAGS)

fuzz-replay: $(FUZZ_TARGETS:%=$(FUZZ_DIR)/replay-%)
	@status=0; for t in $(FUZZ_TARGETS); do \
		echo "# fuzz corpus: $$t"; \
		$(FUZZ_DIR)/replay-$$t $(FUZZ_DIR)/corpus/$$t || status=1; \
	done; exit $$status

# The store compiled again, by clang, with coverage for libFuzzer.
$(FUZZ_OUT)/store/%.o: store/%.c $(STORE_HDR)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(BASE_CFLAGS) $(CFLAGS) $(FUZZ_CFLAGS) $(FUZZ_SANITIZE) \
		-fsanitize=fuzzer-no-link $(STORE_CFLAGS) $(STORE_INC) -c -o $@ $<

$(FUZZ_OUT)/libodbstore.a: $(FUZZ_STORE_OBJ)
	$(AR) rcs $@ $^

$(FUZZ_OUT)/fuzz_%: $(FUZZ_DIR)/fuzz_%.c $(FUZZ_DIR)/fuzz.h $(STORE_HDR) \
    $(FUZZ_OUT)/libodbstore.a
	$(FUZZ_CC) $(BASE_CFLAGS) $(CFLAGS) $(FUZZ_CFLAGS) $(FUZZ_SANITIZE) \
		-fsanitize=fuzzer $(FUZZ_DEFS) $(STORE_CFLAGS) $(STORE_INC) -o $@ $< \
		$(FUZZ_OUT)/libodbstore.a $(STORE_LIBS) $(LDFLAGS)

fuzz-build: $(FUZZ_TARGETS:%=$(FUZZ_OUT)/fuzz_%)

fuzz: $(FUZZ_TARGETS:%=fuzz-run-%)

# New inputs go to a scratch directory first; -merge=1 then copies into
# the corpus only those that reach code the corpus did not.
fuzz-run-%: $(FUZZ_OUT)/fuzz_%
	@mkdir -p $(FUZZ_OUT)/new-$* $(FUZZ_DIR)/corpus/$* $(FUZZ_DIR)/crashes
	@echo "fuzz $*: $(FUZZ_SECONDS) s, log in $(FUZZ_OUT)/fuzz_$*.log"
	@log=$(FUZZ_OUT)/fuzz_$*.log; status=0; \
	$(FUZZ_OUT)/fuzz_$* -max_total_time=$(FUZZ_SECONDS) \
		-max_len=$(FUZZ_MAX_LEN_$*) -timeout=$(FUZZ_TIMEOUT) \
		-print_final_stats=1 \
		-artifact_prefix=$(FUZZ_DIR)/crashes/$*- $(FUZZ_ARGS) \
		$(FUZZ_OUT)/new-$* $(FUZZ_DIR)/corpus/$* >$$log 2>&1 || \
		status=$$?; \
	before=$$(ls $(FUZZ_DIR)/corpus/$* | wc -l); \
	$(FUZZ_OUT)/fuzz_$* -merge=1 -max_len=$(FUZZ_MAX_LEN_$*) \
		-timeout=$(FUZZ_TIMEOUT) $(FUZZ_DIR)/corpus/$* \
		$(FUZZ_OUT)/new-$* >>$$log 2>&1; \
	runs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $$log); \
	echo "fuzz $*: $${runs:-?} runs; corpus $$before ->" \
		"$$(ls $(FUZZ_DIR)/corpus/$* | wc -l) files"; \
	if [ $$status -ne 0 ]; then \
		echo "fuzz $*: FAILED (status $$status), see" \
			"$(FUZZ_DIR)/crashes/ and $$log"; \
		grep -E '^(==[0-9]+==ERROR|SUMMARY|.*check failed)' $$log; \
	fi; \
	exit $$status

fuzz-clean:
	rm -rf $(FUZZ_OUT) $(FUZZ_DIR)/crashes \
		$(FUZZ_TARGETS:%=$(FUZZ_DIR)/replay-%)

.PRECIOUS: $(FUZZ_OUT)/fuzz_% $(FUZZ_OUT)/store/%.o $(FUZZ_OUT)/libodbstore.a
.PHONY: fuzz fuzz-build fuzz-replay fuzz-clean
