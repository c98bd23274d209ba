# Giulia - top-level build.
#
#   make            build bin/giulia and bin/giulia-observe (installs what is missing)
#   make test       build and run every test suite; SANITIZE=1 for ASan+UBSan
#   make demo       the end-to-end demo (see README.md)
#   make lint       the package lists' check, clang-format, cppcheck, banned functions
#   make bench      the benchmarks of bench/ (results go to BENCHMARKS.md by hand)
#   make fuzz       build the libFuzzer targets and run each for FUZZ_SECONDS
#   make install    install the binary, giulia-observe, the man page and the
#                   bash/zsh completion under $(DESTDIR)$(PREFIX) (PREFIX=/usr/local)
#   make cli-docs   regenerate docs/CLI.md's command reference from the help
#   make api-docs   regenerate docs/API.md's static query reference and
#                   docs/MCP_TOOLS.md from the registry (src/graph/query_list.h)
#
# Sources are found by directory: every src/**/*.c is part of the library,
# every tests/{unit,integration,e2e}/*.c is a suite, every fuzz/*.c a target.
#
# What each goal installs is scripts/deps.sh's table; the build itself
# needs: build-essential pkg-config erlang-base erlang-dev libsqlite3-dev libmicrohttpd-dev libjansson-dev libcurl4-openssl-dev zlib1g-dev npm libpq-dev

CC ?= cc
SANITIZE ?=
CI ?=
V ?=

# Quiet by default: `make V=1` shows the full commands.
ifeq ($(V),1)
Q :=
say = @true
else
Q := @
say = @printf '  %-6s %s\n' $(1) $(2)
endif

ifeq ($(SANITIZE),1)
VARIANT := asan
BINDIR := build/asan/bin
OPT := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
LDSAN := -fsanitize=address,undefined
else
VARIANT := release
BINDIR := bin
OPT := -O2 -g
LDSAN :=
endif

B := build/$(VARIANT)
GRAMMAR := build/tree-sitter-elixir
# The tree-sitter runtime vendored by the npm `tree-sitter` package (pinned in
# scripts/deps.sh), compiled in as one file: 0.25, faster than Debian's 0.20.
TS_RUNTIME := build/tree-sitter-runtime/vendor/tree-sitter/lib
DEPS_STAMP := build/.deps-build

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wpointer-arith -Wformat=2
ifeq ($(CI),true)
WARN += -Werror
endif

PKGS := sqlite3 libmicrohttpd jansson libcurl zlib libpq
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
EI_LIB := /usr/lib/libei.a

CFLAGS_ALL = -std=c11 -D_GNU_SOURCE -D_REENTRANT $(OPT) $(WARN) -Isrc -Ibuild/gen -I$(TS_RUNTIME)/include $(PKG_CFLAGS) -MMD -MP
LIBS = $(EI_LIB) $(PKG_LIBS) -lpthread -lm
# The binary links only what every command uses, and that statically (the
# -dev packages ship the archives): libcurl, libpq and libmicrohttpd are
# loaded on first use (src/base/dynlib.h), so that a cold query does not pay
# the dynamic linker for them and the libraries they pull in (BENCHMARKS.md
# "Cold queries"). Tests and fuzz targets link them all, as before.
BIN_LIBS = $(EI_LIB) -Wl,-Bstatic -lsqlite3 -ljansson -lz -Wl,-Bdynamic \
           -ldl -lpthread -lm

LIB_SRC := $(filter-out src/cli/main.c,$(shell find src -name '*.c' | sort))
LIB_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(LIB_SRC)) build/obj-gen-$(VARIANT)/probes.o \
           build/obj-gen-$(VARIANT)/dash_assets.o
# The session's text is one sequence of expressions kept in parts
# (src/observe/probe/session/, one per section), joined in name order.
SESSION_PARTS := $(sort $(wildcard src/observe/probe/session/*.erl))
PROBES := $(sort $(wildcard src/observe/probe/*.erl)) build/gen/session.erl
# The dashboard's page, script and styles (docs/DASHBOARD.md), served from the binary.
WEB := $(sort $(shell find web -type f \( -name '*.html' -o -name '*.js' -o -name '*.css' -o -name '*.svg' \)))
GRAMMAR_OBJ := build/grammar/tree_sitter.o
SUPPORT_SRC := tests/harness.c $(sort $(wildcard tests/support/*.c))
SUPPORT_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(SUPPORT_SRC))
SUITES := $(foreach k,unit integration e2e,$(patsubst tests/$(k)/%.c,$(B)/tests/$(k)_%,$(sort $(wildcard tests/$(k)/*.c))))

.PHONY: all deps test demo lint bench fuzz clean distclean install cli-docs api-docs
.DEFAULT_GOAL := all

all: $(BINDIR)/giulia $(BINDIR)/giulia-observe

$(DEPS_STAMP): scripts/deps.sh
	@scripts/deps.sh build
	@mkdir -p build && touch $@

deps: $(DEPS_STAMP)

# The grammar and the runtime are third-party C: compiled once, without our
# warnings or sanitizers, into one ordinary object that every variant and
# linker takes (gcc, clang for the fuzz targets). The parse is most of a
# fresh index's CPU, so they are optimised from a profile (BENCHMARKS.md,
# "Index against Elixir's parser and incremental"): compiled instrumented, trained by
# tools/ts_train on the repository's own Elixir (TS_TRAIN: fixtures and
# examples, a fresh checkout has them; one thread, so the counters and the
# build are the same every time), compiled again from the counters at -O3
# with link-time optimisation across the three files (the hot paths laid
# out and inlined as the counters say), and merged by a relocatable link.
# -march is left generic: the binary runs on any x86-64.
TS_SRC := $(TS_RUNTIME)/src/lib.c $(GRAMMAR)/src/parser.c $(GRAMMAR)/src/scanner.c
TS_OPT := -std=c11 -O3 -flto -flto-partition=one -g0 -w -D_DEFAULT_SOURCE \
          -I$(TS_RUNTIME)/include -I$(TS_RUNTIME)/src -I$(GRAMMAR)/src
TS_PGO := build/grammar/pgo
TS_TRAIN := $(sort $(shell find tests/fixtures examples -name '*.ex' -o -name '*.exs' 2>/dev/null))
TS_TRAINER_SRC := tools/ts_train.c src/source/elixir_arena.c src/base/alloc.c
# Compiles the three files with the extra flags $(1) into $(TS_PGO), the
# same object paths in both passes (the counters are found by them).
ts_compile = $(foreach f,$(TS_SRC),$(CC) $(TS_OPT) $(1) -c $(f) -o $(TS_PGO)/$(notdir $(basename $(f))).o &&) true

build/grammar/tree_sitter.o: $(DEPS_STAMP) $(TS_TRAINER_SRC) $(TS_TRAIN)
	@rm -rf $(TS_PGO) && mkdir -p $(TS_PGO)/trainer
	$(call say,PGO,$@)
	$(Q)$(call ts_compile,-fprofile-generate -fprofile-dir=$(TS_PGO)/profile)
	$(Q)for f in $(TS_TRAINER_SRC); do $(CC) -std=c11 -D_GNU_SOURCE -O2 -Isrc -I$(TS_RUNTIME)/include \
	  -c $$f -o $(TS_PGO)/trainer/$$(basename $$f .c).o || exit 1; done
	$(Q)$(CC) -O3 -flto -flto-partition=one -fprofile-generate -o $(TS_PGO)/trainer/ts_train $(TS_PGO)/trainer/*.o \
	  $(TS_PGO)/*.o -lpthread
	$(call say,TRAIN,$(TS_PGO)/trainer/ts_train)
	$(Q)$(TS_PGO)/trainer/ts_train $(TS_TRAIN) >/dev/null
	$(call say,CC,$@)
	$(Q)$(call ts_compile,-fprofile-use -fprofile-dir=$(TS_PGO)/profile)
	$(Q)$(CC) $(TS_OPT) -r -nostdlib -flinker-output=nolto-rel -o $@ $(TS_PGO)/lib.o \
	  $(TS_PGO)/parser.o $(TS_PGO)/scanner.o

# The same, kept as the compiler's intermediate form for the release binary's
# link-time optimisation (below).
build/grammar/tree_sitter_lto.o: build/grammar/tree_sitter.o
	$(call say,LD,$@)
	$(Q)$(CC) $(TS_OPT) -r -nostdlib -flinker-output=rel -o $@ $(TS_PGO)/lib.o \
	  $(TS_PGO)/parser.o $(TS_PGO)/scanner.o

# The release binary links the extraction's walk (src/source/elixir*.c, the
# runtime's cursor and node calls on every node) with link-time optimisation
# across it and the parser, so those calls are inlined into the walk; the
# same files stay ordinary objects in libgiulia.a for the tests and the
# other variants, whose links stay quick.
ifeq ($(VARIANT),release)
LTO_SRC := $(sort $(wildcard src/source/elixir*.c))
LTO_OBJ := $(patsubst %.c,$(B)/lto/%.o,$(LTO_SRC)) build/grammar/tree_sitter_lto.o
LTO_LD := -flto -flto-partition=one
endif

$(B)/lto/%.o: %.c $(DEPS_STAMP) build/gen/probes.h | build/gen/dash_assets.h
	@mkdir -p $(dir $@)
	$(call say,LTO,$<)
	$(Q)$(CC) $(CFLAGS_ALL) -flto -c $< -o $@

$(B)/obj/%.o: %.c $(DEPS_STAMP) build/gen/probes.h | build/gen/dash_assets.h
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(CFLAGS_ALL) -c $< -o $@

build/tools/embed: tools/embed.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -Wall -Wextra -o $@ $<

build/gen/session.erl: $(SESSION_PARTS)
	@mkdir -p build/gen
	cat $(SESSION_PARTS) > $@

build/gen/probes.c build/gen/probes.h: build/tools/embed $(PROBES)
	@mkdir -p build/gen
	build/tools/embed build/gen/probes.c build/gen/probes.h $(PROBES)

build/obj-gen-$(VARIANT)/probes.o: build/gen/probes.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(CFLAGS_ALL) -c $< -o $@

build/tools/embed_assets: tools/embed_assets.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -Wall -Wextra -o $@ $<

build/gen/dash_assets.c build/gen/dash_assets.h: build/tools/embed_assets $(WEB)
	@mkdir -p build/gen
	build/tools/embed_assets build/gen/dash_assets.c build/gen/dash_assets.h web $(WEB)

build/obj-gen-$(VARIANT)/dash_assets.o: build/gen/dash_assets.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(CFLAGS_ALL) -c $< -o $@

$(B)/libgiulia.a: $(LIB_OBJ) $(GRAMMAR_OBJ)
	@rm -f $@
	$(call say,AR,$@)
	$(Q)ar rcs $@ $^

$(BINDIR)/giulia: $(B)/obj/src/cli/main.o $(LTO_OBJ) $(B)/libgiulia.a
	@mkdir -p $(BINDIR)
	$(call say,LD,$@)
	$(Q)$(CC) $(LDSAN) $(LTO_LD) -Wl,--as-needed -o $@ $^ $(BIN_LIBS)

$(BINDIR)/giulia-observe: $(BINDIR)/giulia
	ln -sf giulia $@

# One executable per suite: tests/unit/x.c becomes $(B)/tests/unit_x.
define SUITE_RULE
$(B)/tests/$(1)_$(basename $(notdir $(2))): $(B)/obj/$(basename $(2)).o $(SUPPORT_OBJ) $(B)/libgiulia.a
	@mkdir -p $$(dir $$@)
	$$(call say,LD,$$@)
	$$(Q)$$(CC) $$(LDSAN) -o $$@ $$^ $$(LIBS)
endef
$(foreach k,unit integration e2e,$(foreach f,$(sort $(wildcard tests/$(k)/*.c)),$(eval $(call SUITE_RULE,$(k),$(f)))))

$(B)/obj/tests/%.o: tests/%.c $(DEPS_STAMP) build/gen/probes.h | build/gen/dash_assets.h
	@mkdir -p $(dir $@)
	$(call say,CC,$<)
	$(Q)$(CC) $(CFLAGS_ALL) -Itests -Itests/support -c $< -o $@

test: $(BINDIR)/giulia $(BINDIR)/giulia-observe $(SUITES)
	@scripts/deps.sh test
	@GIULIA_BIN=$${GIULIA_BIN:-$(CURDIR)/$(BINDIR)} tests/run.sh $(B) $(SUITE)

demo: all
	@scripts/deps.sh demo
	@scripts/demo.sh

# The package lists are checked with the code: every goal must install what
# its targets declare in their needs: lines (scripts/deps.sh).
lint:
	@scripts/deps.sh lint
	@scripts/deps.sh --check
	@scripts/lint.sh

bench: all
	@scripts/deps.sh bench
	@bench/run.sh

FUZZ_SECONDS ?= 60
FUZZ_SRC := $(sort $(wildcard fuzz/*.c))
FUZZ_BIN := $(patsubst fuzz/%.c,build/fuzz/bin/%,$(FUZZ_SRC))
FUZZ_CFLAGS = -std=c11 -D_GNU_SOURCE -D_REENTRANT -O1 -g -fsanitize=fuzzer-no-link,address,undefined -Isrc -Ibuild/gen -I$(TS_RUNTIME)/include $(PKG_CFLAGS)
# The targets themselves with our warnings (errors under CI=true): a
# positional initialiser that misses a field, as api_http.c's did when the
# worker's configuration grew, is -Wmissing-field-initializers.
build/fuzz/obj/fuzz/%.o: FUZZ_WARN = $(WARN) -Wmissing-field-initializers

build/fuzz/obj/%.o: %.c $(DEPS_STAMP) build/gen/probes.h | build/gen/dash_assets.h
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) $(FUZZ_WARN) -c $< -o $@

# Linked through an archive, like the binaries, so that a target pulls in only
# the objects it needs (the CLI's files refer to main.c, which is not there).
FUZZ_LIB_OBJ := $(patsubst %.c,build/fuzz/obj/%.o,$(LIB_SRC)) build/fuzz/obj/build/gen/probes.o \
                build/fuzz/obj/build/gen/dash_assets.o
build/fuzz/libgiulia.a: $(FUZZ_LIB_OBJ)
	@rm -f $@
	$(call say,AR,$@)
	$(Q)ar rcs $@ $^

build/fuzz/bin/%: build/fuzz/obj/fuzz/%.o build/fuzz/libgiulia.a $(GRAMMAR_OBJ)
	@mkdir -p $(dir $@)
	clang -fsanitize=fuzzer,address,undefined -o $@ $^ $(LIBS)

fuzz:
	@scripts/deps.sh fuzz
	@$(MAKE) --no-print-directory $(FUZZ_BIN)
	@scripts/fuzz.sh $(FUZZ_SECONDS) $(FUZZ_BIN)

# The man page and the completion scripts are generated from the commands'
# help (src/cli/help.c), so they cannot drift from it.
PREFIX ?= /usr/local
DESTDIR ?=
SHARE := build/share

$(SHARE)/giulia.1 $(SHARE)/giulia.bash $(SHARE)/_giulia: $(BINDIR)/giulia
	@mkdir -p $(SHARE)
	$(BINDIR)/giulia help --man > $(SHARE)/giulia.1
	$(BINDIR)/giulia help --completion bash > $(SHARE)/giulia.bash
	$(BINDIR)/giulia help --completion zsh > $(SHARE)/_giulia

install: $(BINDIR)/giulia $(SHARE)/giulia.1 $(SHARE)/giulia.bash $(SHARE)/_giulia
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DESTDIR)$(PREFIX)/share/zsh/site-functions
	install -m 755 $(BINDIR)/giulia $(DESTDIR)$(PREFIX)/bin/giulia
	ln -sf giulia $(DESTDIR)$(PREFIX)/bin/giulia-observe
	install -m 644 $(SHARE)/giulia.1 $(DESTDIR)$(PREFIX)/share/man/man1/giulia.1
	echo '.so man1/giulia.1' > $(DESTDIR)$(PREFIX)/share/man/man1/giulia-observe.1
	install -m 644 $(SHARE)/giulia.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/giulia
	ln -sf giulia $(DESTDIR)$(PREFIX)/share/bash-completion/completions/giulia-observe
	install -m 644 $(SHARE)/_giulia $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_giulia

cli-docs: $(BINDIR)/giulia
	@scripts/cli_docs.sh $(BINDIR)/giulia docs/CLI.md

api-docs: $(BINDIR)/giulia
	@scripts/api_docs.sh $(BINDIR)/giulia docs/API.md
	@$(BINDIR)/giulia mcp --list-tools --format markdown > docs/MCP_TOOLS.md

clean:
	rm -rf build/release build/asan build/fuzz bin

distclean:
	rm -rf build bin

-include $(shell find build/$(VARIANT)/obj build/$(VARIANT)/lto -name '*.d' 2>/dev/null)
