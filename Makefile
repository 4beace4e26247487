# chute: plain Makefile; flags from pkg-config (libbsd overlay, Check).
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
CC      ?= cc
CFLAGS  ?= -O2 -g
# Flags chute needs whatever CFLAGS the user passes.
XCFLAGS := -std=gnu11 -Wall -Wextra -Wshadow -Wno-unused-parameter -D_GNU_SOURCE -Iinclude
BSD_CFLAGS   := $(shell pkg-config --cflags libbsd-overlay)
BSD_LIBS     := $(shell pkg-config --libs libbsd-overlay)
CHECK_CFLAGS := $(shell pkg-config --cflags check)
CHECK_LIBS   := $(shell pkg-config --libs check)

B := build
LIB_SRC  := $(filter-out src/main.c,$(wildcard src/*.c))
LIB_OBJ  := $(LIB_SRC:src/%.c=$(B)/%.o)
TEST_SRC := $(wildcard tests/check_*.c)
TEST_OBJ := $(TEST_SRC:tests/%.c=$(B)/tests/%.o)
HDR      := $(wildcard include/*.h)

all: $(B)/chute

$(B)/chute: $(B)/main.o $(B)/libchute.a
	$(CC) $(LDFLAGS) -o $@ $^ $(BSD_LIBS)

$(B)/libchute.a: $(LIB_OBJ)
	rm -f $@ && $(AR) rcs $@ $^

$(B)/%.o: src/%.c $(HDR) | $(B)
	$(CC) $(XCFLAGS) $(CFLAGS) $(BSD_CFLAGS) -c -o $@ $<

$(B)/tests/%.o: tests/%.c $(HDR) src/owner.h $(wildcard tests/*.h) | $(B)/tests
	$(CC) $(XCFLAGS) $(CFLAGS) $(BSD_CFLAGS) $(CHECK_CFLAGS) -Itests -Isrc -c -o $@ $<

$(B)/check_chute: $(TEST_OBJ) $(B)/libchute.a
	$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(BSD_LIBS)

$(B) $(B)/tests:
	mkdir -p $@

# The LD_PRELOAD shim the fault-injection suite runs chute under.
$(B)/libfault.so: tests/fault.c | $(B)
	$(CC) -shared -fPIC -O2 -D_GNU_SOURCE -o $@ $< -ldl

$(B)/torture: tests/torture.c | $(B)
	$(CC) $(XCFLAGS) $(CFLAGS) $(BSD_CFLAGS) $(LDFLAGS) -o $@ $< $(BSD_LIBS)

# The integration suites drive $(B)/chute, so it is built first.
# CHECK_ROUNDS: the reduced crash torture run that every check includes.
CHECK_ROUNDS ?= 20
check: $(B)/chute $(B)/check_chute $(B)/torture $(B)/libfault.so
	CHUTE_BIN=$(abspath $(B)/chute) CHUTE_FAULT_LIB=$(abspath $(B)/libfault.so) \
	    $(B)/check_chute
	CHUTE_BIN=$(abspath $(B)/chute) $(B)/torture --rounds $(CHECK_ROUNDS)
	CHUTE_BIN=$(abspath $(B)/chute) $(B)/torture --rounds $(CHECK_ROUNDS) --flaky

# The whole suite again, every binary built with ASan and UBSan.
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
check-asan:
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:verify_asan_link_order=0 \
	LSAN_OPTIONS=suppressions=$(abspath tests/lsan.supp):print_suppressions=0 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	$(MAKE) B=build/asan CFLAGS="-O1 -g $(SAN)" LDFLAGS="$(SAN)" \
	    CHECK_ROUNDS=5 check

# The owner under valgrind across 10,000 jobs: no leak, no invalid access.
VALGRIND_JOBS ?= 10000
check-valgrind: $(B)/chute
	tests/valgrind.sh $(abspath $(B)/chute) $(VALGRIND_JOBS)

torture: $(B)/chute $(B)/torture
	CHUTE_BIN=$(abspath $(B)/chute) $(B)/torture --rounds 200
	CHUTE_BIN=$(abspath $(B)/chute) $(B)/torture --rounds 50 --flaky

# libFuzzer (clang) on every parser that sees outside input.
FUZZ_SECONDS ?= 30
FUZZERS := names dur joblog disk events args
FZ := build/fuzz
FZ_FLAGS := -O1 -g -fsanitize=fuzzer-no-link,address,undefined -D_GNU_SOURCE \
	-std=gnu11 -Iinclude $(BSD_CFLAGS)
FZ_OBJ := $(LIB_SRC:src/%.c=$(FZ)/%.o)

$(FZ)/%.o: src/%.c $(HDR)
	@mkdir -p $(FZ)
	clang $(FZ_FLAGS) -c -o $@ $<

$(FZ)/fuzz_%: tests/fuzz/fuzz_%.c $(FZ_OBJ)
	clang $(FZ_FLAGS) -fsanitize=fuzzer -o $@ $^ $(BSD_LIBS)

fuzz: $(FUZZERS:%=$(FZ)/fuzz_%)
	for f in $(FUZZERS); do \
	    mkdir -p $(FZ)/work-$$f && \
	    $(FZ)/fuzz_$$f $(FZ)/work-$$f tests/fuzz/corpus/$$f \
	        -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	        -artifact_prefix=$(FZ)/crash-$$f- || exit 1; \
	done

install: $(B)/chute
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 755 $(B)/chute $(DESTDIR)$(BINDIR)/chute
	install -m 644 chute.1 $(DESTDIR)$(MANDIR)/man1/chute.1

clean:
	rm -rf $(B)

.PHONY: all check check-asan check-valgrind torture fuzz install clean bench

bench: $(B)/chute
	CHUTE_BIN=$(abspath $(B)/chute) bench/run
