# lt_fdw — PostgreSQL foreign data wrapper for Lance datasets.
#
#   make                 the extension (PGXS), the format library and lt-inspect
#   make install         install the extension into the Postgres found by PG_CONFIG
#   make test            everything a change must pass (see test/run-all.sh)
#   make unit            unit tests of src/lance under ASan/UBSan
#   make fuzz-smoke      a short run of every fuzz target
#
PG_CONFIG ?= /usr/lib/postgresql/15/bin/pg_config
# Debian's PGXS sets with_llvm = yes (JIT bitcode via clang); override it so no .bc files are built or installed.
override with_llvm = no

EXTENSION = lt_fdw
MODULE_big = lt_fdw
DATA = lt_fdw--0.1.sql
PGFILEDESC = "lt_fdw - foreign data wrapper for Lance datasets"

# The format library's rooms, lowest first (docs/architecture.md; test/layering.sh checks the includes).
LANCE_ROOMS := util proto io types encoding file blob table namespace index vector assignment txn
PROTOS := $(wildcard src/lance/proto/*.proto)
# protoc-c output lives under build/gen/proto: included as "proto/lt_x.pb-c.h"
PB_C := $(patsubst src/lance/proto/%.proto,build/gen/proto/%.pb-c.c,$(PROTOS))
PB_H := $(PB_C:.c=.h)
LANCE_SRCS := $(sort $(foreach r,$(LANCE_ROOMS),$(wildcard src/lance/$(r)/*.c))) $(PB_C)
FDW_SRCS := $(sort $(wildcard src/fdw/*.c))

# objects of the extension under build/pg (sources stay alone in src/)
OBJS = $(addprefix build/pg/,$(patsubst build/%,%,$(FDW_SRCS:.c=.o) $(LANCE_SRCS:.c=.o)))
PG_CPPFLAGS = -Isrc/lance -Ibuild/gen -Ibuild/gen/proto
PG_CFLAGS = -Werror -Wno-declaration-after-statement -MMD -MP
SHLIB_LINK = -lprotobuf-c -lroaring -lzstd -llz4 -lcurl -lm

REGRESS = $(patsubst sql/%.sql,%,$(sort $(wildcard sql/*.sql)))
REGRESS_OPTS = --inputdir=. --outputdir=build/regress

EXTRA_CLEAN = build

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# --- protobuf-c code generation (one run for all outputs) -------------------
$(PB_C) $(PB_H) &: $(PROTOS)
	@mkdir -p build/gen/proto
	cd src/lance/proto && protoc-c --c_out=$(CURDIR)/build/gen/proto $(notdir $(PROTOS))

# the extension's objects (PGXS's own %.o rule would put them beside the sources)
build/pg/%.o: %.c $(PB_H)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -c -o $@ $<
build/pg/gen/%.o: build/gen/%.c $(PB_H)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(CPPFLAGS) -c -o $@ $<
# protoc-c initialises a oneof whose first member is a struct (bytes) with {0}: not our code to brace
$(filter build/pg/gen/%,$(OBJS)): override CFLAGS += -Wno-missing-braces

# --- the PG-free format library, tools and tests -----------------------------
LIB_CFLAGS = -std=gnu11 -g -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers -Wno-missing-braces \
             -Isrc/lance -Ibuild/gen -Ibuild/gen/proto -fPIC -MMD -MP
LIB_LIBS = -lprotobuf-c -lroaring -lzstd -llz4 -lcurl -lm
SAN_FLAGS = -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

build/opt/%.o: %.c $(PB_H)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -O2 -c $< -o $@

build/san/%.o: %.c $(PB_H)
	@mkdir -p $(dir $@)
	clang $(LIB_CFLAGS) -Wno-unused-command-line-argument $(SAN_FLAGS) -c $< -o $@

build/fuzzobj/%.o: %.c $(PB_H)
	@mkdir -p $(dir $@)
	clang $(LIB_CFLAGS) -O1 -g -fsanitize=fuzzer-no-link,address,undefined -c $< -o $@

LIB_OPT_OBJS := $(addprefix build/opt/,$(LANCE_SRCS:.c=.o))
LIB_SAN_OBJS := $(addprefix build/san/,$(LANCE_SRCS:.c=.o))
LIB_FUZZ_OBJS := $(addprefix build/fuzzobj/,$(LANCE_SRCS:.c=.o))

build/liblt.a: $(LIB_OPT_OBJS)
	ar rcs $@ $^
build/liblt-san.a: $(LIB_SAN_OBJS)
	ar rcs $@ $^
build/liblt-fuzz.a: $(LIB_FUZZ_OBJS)
	ar rcs $@ $^

TOOL_SRCS := tools/lt-inspect.c tools/lt_json.c tools/lt_json_read.c tools/lt_pages.c tools/lt_commit_cmds.c tools/lt_index_cmd.c tools/lt_keys_cmd.c tools/lt_where.c tools/lt_vector_cmd.c
TOOL_HDRS := $(wildcard tools/*.h)
build/lt-inspect: $(TOOL_SRCS) $(TOOL_HDRS) build/liblt.a
	$(CC) $(LIB_CFLAGS) -Itools -O2 $(TOOL_SRCS) build/liblt.a $(LIB_LIBS) -o $@
build/lt-inspect-san: $(TOOL_SRCS) $(TOOL_HDRS) build/liblt-san.a
	clang $(LIB_CFLAGS) -Itools $(SAN_FLAGS) $(TOOL_SRCS) build/liblt-san.a $(LIB_LIBS) -o $@

UNIT_SRCS := $(sort $(wildcard test/unit/test_*.c))
UNIT_BINS := $(patsubst test/unit/%.c,build/unit/%,$(UNIT_SRCS))
build/unit/%: test/unit/%.c test/unit/unit.h build/liblt-san.a
	@mkdir -p $(dir $@)
	clang $(LIB_CFLAGS) $(SAN_FLAGS) $< build/liblt-san.a $(LIB_LIBS) -o $@

# the S3 backend against the test S3 server (test/s3/run.sh starts it)
build/s3/test_s3_store: test/s3/test_s3_store.c test/unit/unit.h build/liblt-san.a
	@mkdir -p $(dir $@)
	clang $(LIB_CFLAGS) $(SAN_FLAGS) $< build/liblt-san.a $(LIB_LIBS) -o $@

FUZZ_SRCS := $(sort $(wildcard test/fuzz/fuzz_*.c))
FUZZ_BINS := $(patsubst test/fuzz/%.c,build/fuzz/%,$(FUZZ_SRCS))
build/fuzz/%: test/fuzz/%.c build/liblt-fuzz.a
	@mkdir -p $(dir $@)
	clang $(LIB_CFLAGS) -O1 -g -fsanitize=fuzzer,address,undefined $< build/liblt-fuzz.a $(LIB_LIBS) -o $@

BENCH_SRCS := $(sort $(wildcard bench/*.c))
BENCH_BINS := $(patsubst bench/%.c,build/bench/%,$(BENCH_SRCS))
build/bench/%: bench/%.c build/liblt.a
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -O2 $< build/liblt.a $(LIB_LIBS) -o $@

all: build/lt-inspect
tools: build/lt-inspect build/lt-inspect-san
unit-build: $(UNIT_BINS) build/s3/test_s3_store
fuzz-build: $(FUZZ_BINS)
bench-build: $(BENCH_BINS)

unit: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done

fuzz-smoke: $(FUZZ_BINS)
	test/fuzz/run.sh smoke

test: all tools unit-build fuzz-build
	test/run-all.sh

.PHONY: tools unit unit-build fuzz-build bench-build fuzz-smoke test

# header dependencies written by -MMD (a changed header rebuilds what includes it)
-include $(OBJS:.o=.d) $(shell find build -name '*.d' 2>/dev/null)
