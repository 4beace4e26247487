# chute: plain Makefile.  `make` builds build/chute, `make check` runs every
# test, `make strict` is CI's warnings-as-errors build; B=DIR builds elsewhere.
#
# A build never reuses an object made differently from a clean build: each
# object depends on the headers it includes (-MMD -MP) and on a stamp file,
# $(B)/flags, that holds every flag it was made with.  A library pkg-config
# cannot find stops make, before anything that needs it is compiled, with one
# line naming the Debian package to install.
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
CC      ?= cc
CFLAGS  ?= -O2 -g
PKG_CONFIG ?= pkg-config
B       := build

# Flags chute adds whatever CFLAGS says.  An implicit declaration is an
# error: a build without libbsd's flags once took strtonum to return int and
# linked a chute that stamped jobs in 1970.
CWARN   := -Wall -Wextra -Wshadow -Wno-unused-parameter \
	-Werror=implicit-function-declaration
XCFLAGS := -std=gnu11 $(CWARN) -D_GNU_SOURCE -Isrc
# The tests also see their own headers.
TEST_CPPFLAGS := -Itests
# The LD_PRELOAD shim the fault-injection suite runs chute under: built the
# same way whatever CFLAGS says (check-asan's sanitizers stay out of it).
FAULT_CFLAGS  := -std=gnu11 $(CWARN) -D_GNU_SOURCE -O2 -shared -fPIC
# More warnings, for `make strict`; none by default.
WARN    :=

# The libraries, as pkg-config name:Debian package; a new one is one word
# here (libpq:libpq-dev, ncurses:libncurses-dev).  Building chute needs PKGS;
# only the tests need TEST_PKGS, so a machine without Check can still `make`.
PKGS      := libbsd-overlay:libbsd-dev
TEST_PKGS := check:check
# chute-pgsql, the PostgreSQL queue, is a program of its own so that a host
# running only spools needs no libpq (fleet.md); only it and
# chute-web-pgsql need PG_PKGS.
PG_PKGS   := libpq:libpq-dev
# `chute top`, the terminal view, is drawn with ncurses: src/top's object
# (TOP_SRC), linked into chute and chute-pgsql but not libchute.a, is the
# only one compiled with its flags, and the two programs link it.
TOP_PKGS  := ncursesw:libncurses-dev
# chute-web, the dashboard (`chute web`), is a program of its own too, so
# that a host that does not want it installs no libmicrohttpd; it checks
# its users' passwords with crypt(3), from libcrypt (libxcrypt, which
# Debian's libc6-dev depends on).  It is built twice: chute-web, a spool's,
# without libpq, and chute-web-pgsql, the same objects and web_pg.o (a
# queue's store), with libpq (PG_PKGS); `chute web` execs the one its
# SPOOL or URL needs.
WEB_PKGS  := libmicrohttpd:libmicrohttpd-dev libcrypt:libcrypt-dev

# pkg-config is asked at parse time, quietly: a library it does not know
# gives empty flags here, and make stops only in $(call need,PKGS), which the
# recipe of a stamp file runs (see "Stamps").  Every object that needs PKGS
# depends on that stamp, so make stops before compiling any of them, and
# only when a target needs them.
pc      = $(foreach p,$1,$(word 1,$(subst :, ,$p)))
deb     = $(foreach p,$1,$(word 2,$(subst :, ,$p)))
pkg     = $(shell $(PKG_CONFIG) $1 2>/dev/null)
missing = $(strip $(foreach p,$1,$(if $(shell \
	$(PKG_CONFIG) --exists $(call pc,$p) 2>/dev/null && echo y),,$p)))
# $(call need,PKGS): nothing, or stop with one line naming what to install.
need    = $(call stop_for,$(call missing,$1))
stop_for = $(if $1,$(error $(PKG_CONFIG) finds no $(call pc,$1): apt-get install $(strip \
	$(if $(shell command -v $(PKG_CONFIG) 2>/dev/null),,pkg-config) $(call deb,$1))))

PKG_CFLAGS        := $(call pkg,--cflags $(call pc,$(PKGS)))
PKG_LIBS          := $(call pkg,--libs $(call pc,$(PKGS)))
PKG_VERSIONS      := $(call pkg,--modversion $(call pc,$(PKGS)))
TEST_PKG_CFLAGS   := $(call pkg,--cflags $(call pc,$(TEST_PKGS)))
TEST_PKG_LIBS     := $(call pkg,--libs $(call pc,$(TEST_PKGS)))
TEST_PKG_VERSIONS := $(call pkg,--modversion $(call pc,$(TEST_PKGS)))
PG_PKG_CFLAGS     := $(call pkg,--cflags $(call pc,$(PG_PKGS)))
PG_PKG_LIBS       := $(call pkg,--libs $(call pc,$(PG_PKGS)))
PG_PKG_VERSIONS   := $(call pkg,--modversion $(call pc,$(PG_PKGS)))
TOP_PKG_CFLAGS    := $(call pkg,--cflags $(call pc,$(TOP_PKGS)))
TOP_PKG_LIBS      := $(call pkg,--libs $(call pc,$(TOP_PKGS)))
TOP_PKG_VERSIONS  := $(call pkg,--modversion $(call pc,$(TOP_PKGS)))
WEB_PKG_CFLAGS    := $(call pkg,--cflags $(call pc,$(WEB_PKGS)))
WEB_PKG_LIBS      := $(call pkg,--libs $(call pc,$(WEB_PKGS)))
WEB_PKG_VERSIONS  := $(call pkg,--modversion $(call pc,$(WEB_PKGS)))

# The tree is the design (HACKING.md has the map): src/base, src/store,
# src/queue (the store's interface and a live view's model),
# src/queue/spool and src/run are the layers under the command line,
# src/cli the subcommands; all of them are libchute.a, which every
# program and the tests link.  src/queue/pg is libchutepg.a: the
# PostgreSQL queue and its read and admin side (the connection, the
# schema, the owner's queue, the view, cancel, retry, stats, top's
# source), the library that chute-pgsql and chute-web-pgsql link with
# libpq, and from which the linker takes only what each uses.  src/top
# is chute top's screen, the only object that uses ncurses, linked into
# chute and chute-pgsql.  The programs' own objects are src/chute
# (chute), src/chute-pgsql (chute-pgsql) and src/chute-web (chute-web,
# and chute-web-pgsql with web_pg.o): a program links libraries and its
# own objects, never another program's, so that a host running only
# spools needs no libpq, dashboard included (fleet.md).  New files in
# these folders and in tests/ are picked up as they are.  Objects go to
# $(B)/obj/FOLDER/NAME.o.
LIB_DIRS := base store queue queue/spool run cli
LIB_SRC  := $(wildcard $(LIB_DIRS:%=src/%/*.c))
LIB_OBJ  := $(LIB_SRC:src/%.c=$(B)/obj/%.o)
PG_LIB_SRC := $(wildcard src/queue/pg/*.c)
PG_LIB_OBJ := $(PG_LIB_SRC:src/%.c=$(B)/obj/%.o)
PG_SRC   := $(wildcard src/chute-pgsql/*.c)
PG_OBJ   := $(PG_SRC:src/%.c=$(B)/obj/%.o)
WEB_SRC  := $(wildcard src/chute-web/*.c)
WEB_OBJ  := $(WEB_SRC:src/%.c=$(B)/obj/%.o)
# The queue's store of the dashboard: chute-web-pgsql's only.
WEB_PG_OBJ := $(B)/obj/chute-web/web_pg.o
TOP_SRC  := $(wildcard src/top/*.c)
TOP_OBJ  := $(TOP_SRC:src/%.c=$(B)/obj/%.o)
CHUTE_SRC := $(wildcard src/chute/*.c)
CHUTE_OBJ := $(CHUTE_SRC:src/%.c=$(B)/obj/%.o)
TEST_SRC := $(wildcard tests/check_*.c tests/t_*.c)
TEST_OBJ := $(TEST_SRC:tests/%.c=$(B)/tests/%.o)

COMPILE = $(CC) $(XCFLAGS) $(WARN) $(CPPFLAGS) $(CFLAGS) $(PKG_CFLAGS) -MMD -MP

all: $(B)/chute $(B)/chute-pgsql $(B)/chute-web $(B)/chute-web-pgsql

$(B)/chute: $(CHUTE_OBJ) $(TOP_OBJ) $(B)/libchute.a $(B)/flags $(B)/top/flags
	$(CC) $(LDFLAGS) -o $@ $(filter %.o %.a,$^) $(TOP_PKG_LIBS) $(PKG_LIBS)

$(B)/chute-pgsql: $(PG_OBJ) $(TOP_OBJ) $(B)/libchutepg.a $(B)/libchute.a \
	$(B)/flags $(B)/pg/flags $(B)/top/flags
	$(CC) $(LDFLAGS) -o $@ $(filter %.o %.a,$^) $(PG_PKG_LIBS) \
	    $(TOP_PKG_LIBS) $(PKG_LIBS)

# A spool's dashboard: no libpq.
$(B)/chute-web: $(filter-out $(WEB_PG_OBJ),$(WEB_OBJ)) $(B)/libchute.a \
	$(B)/flags $(B)/web/flags
	$(CC) $(LDFLAGS) -o $@ $(filter %.o %.a,$^) $(WEB_PKG_LIBS) $(PKG_LIBS)

# A queue's dashboard (and a spool's): the same objects and web_pg.o.
$(B)/chute-web-pgsql: $(WEB_OBJ) $(B)/libchutepg.a $(B)/libchute.a \
	$(B)/flags $(B)/pg/flags $(B)/web/flags
	$(CC) $(LDFLAGS) -o $@ $(filter %.o %.a,$^) $(WEB_PKG_LIBS) \
	    $(PG_PKG_LIBS) $(PKG_LIBS)

$(B)/libchutepg.a: $(PG_LIB_OBJ) $(B)/objects
	rm -f $@ && $(AR) rcs $@ $(filter %.o,$^)

# libmicrohttpd's flags, and their stamps, for chute-web's objects only;
# libpq's for web_pg.o only.  The page's script and style sheet are
# compiled into web_static.o (.incbin), which the compiler's dependency
# list does not name.
$(WEB_OBJ): $(B)/web/flags
$(WEB_OBJ): PKG_CFLAGS += $(WEB_PKG_CFLAGS)
$(WEB_PG_OBJ): $(B)/pg/flags
$(WEB_PG_OBJ): PKG_CFLAGS += $(PG_PKG_CFLAGS)
$(B)/obj/chute-web/web_static.o: src/chute-web/chute.js src/chute-web/chute.css

# libpq's flags, and its stamp, for its objects only.
$(PG_LIB_OBJ) $(PG_OBJ): $(B)/pg/flags
$(PG_LIB_OBJ) $(PG_OBJ): PKG_CFLAGS += $(PG_PKG_CFLAGS)

# ncurses's flags, and its stamp, for the screen's object only.
$(TOP_OBJ): $(B)/top/flags
$(TOP_OBJ): PKG_CFLAGS += $(TOP_PKG_CFLAGS)

# rm first: ar would keep the members of objects that are gone.
$(B)/libchute.a: $(LIB_OBJ) $(B)/objects
	rm -f $@ && $(AR) rcs $@ $(filter %.o,$^)

$(B)/obj/%.o: src/%.c $(B)/flags
	@mkdir -p $(@D)
	$(COMPILE) -c -o $@ $<

$(B)/tests/%.o: tests/%.c $(B)/flags $(B)/tests/flags
	$(COMPILE) $(TEST_CPPFLAGS) $(TEST_PKG_CFLAGS) -c -o $@ $<

# check_pg_view.c calls pg_view.c itself, against a real server: it is
# compiled with libpq's flags, and the runner links pg_view.o, the
# objects it uses, and libpq.
TEST_PG_OBJ := $(patsubst %,$(B)/obj/queue/pg/%.o,pg_view pg_queues pg_conn \
	pg_reply)
$(B)/tests/check_pg_view.o: $(B)/pg/flags
$(B)/tests/check_pg_view.o: PKG_CFLAGS += $(PG_PKG_CFLAGS)

$(B)/check_chute: $(TEST_OBJ) $(TEST_PG_OBJ) $(B)/libchute.a $(B)/flags \
	$(B)/tests/flags $(B)/pg/flags $(B)/objects
	$(CC) $(LDFLAGS) -o $@ $(filter %.o %.a,$^) $(TEST_PKG_LIBS) \
	    $(PG_PKG_LIBS) $(PKG_LIBS)

$(B)/libfault.so: tests/fault.c $(B)/flags
	$(CC) $(FAULT_CFLAGS) $(WARN) -MMD -MP -o $@ $< -ldl

# The DevTools client tests/web.sh drives Chromium with: no library.
$(B)/cdp: tests/cdp.c $(B)/flags
	$(CC) $(XCFLAGS) $(WARN) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -MMD -MP -o $@ $<

$(B)/torture: tests/torture.c tests/torture_pg.c tests/torture.h $(B)/flags
	$(COMPILE) $(LDFLAGS) -o $@ $(filter %.c,$^) $(PKG_LIBS)

# Stamps.  $(B)/flags holds CC, the flags and what pkg-config said, one per
# line; every object and link in $(B) depends on it.  Its prerequisite is
# FORCE only when it does not hold their current values, so it is rewritten,
# and what depends on it rebuilt, exactly when one of them changed; an
# unchanged make has nothing to do.  $(B)/tests/flags does the same for
# Check's flags, which only the tests need.  $(B)/objects lists the objects,
# so that libchute.a is rebuilt when a source file goes away.
FLAGS       := CC CPPFLAGS CFLAGS LDFLAGS XCFLAGS FAULT_CFLAGS WARN \
	PKG_CFLAGS PKG_LIBS PKG_VERSIONS
TEST_FLAGS  := TEST_CPPFLAGS TEST_PKG_CFLAGS TEST_PKG_LIBS TEST_PKG_VERSIONS
PG_FLAGS    := PG_PKG_CFLAGS PG_PKG_LIBS PG_PKG_VERSIONS
TOP_FLAGS   := TOP_PKG_CFLAGS TOP_PKG_LIBS TOP_PKG_VERSIONS
WEB_FLAGS   := WEB_PKG_CFLAGS WEB_PKG_LIBS WEB_PKG_VERSIONS
# $(call lines,VARS): a shell command that prints VAR=value for each of VARS.
lines   = printf '%s\n' $(foreach v,$1,'$(subst ','\'',$v=$($v))')
# $(call changed,FILE,VARS): FORCE unless FILE holds those lines.
changed = $(shell $(call lines,$2) | cmp -s - $1 || echo FORCE)

$(B)/flags: $(call changed,$(B)/flags,$(FLAGS))
	$(call need,$(PKGS))
	@mkdir -p $(@D) && $(call lines,$(FLAGS)) > $@

$(B)/tests/flags: $(call changed,$(B)/tests/flags,$(TEST_FLAGS))
	$(call need,$(PKGS) $(TEST_PKGS))
	@mkdir -p $(@D) && $(call lines,$(TEST_FLAGS)) > $@

$(B)/pg/flags: $(call changed,$(B)/pg/flags,$(PG_FLAGS))
	$(call need,$(PKGS) $(PG_PKGS))
	@mkdir -p $(@D) && $(call lines,$(PG_FLAGS)) > $@

$(B)/top/flags: $(call changed,$(B)/top/flags,$(TOP_FLAGS))
	$(call need,$(PKGS) $(TOP_PKGS))
	@mkdir -p $(@D) && $(call lines,$(TOP_FLAGS)) > $@

$(B)/web/flags: $(call changed,$(B)/web/flags,$(WEB_FLAGS))
	$(call need,$(PKGS) $(WEB_PKGS))
	@mkdir -p $(@D) && $(call lines,$(WEB_FLAGS)) > $@

$(B)/objects: $(call changed,$(B)/objects,LIB_OBJ PG_LIB_OBJ TEST_OBJ PG_OBJ WEB_OBJ)
	@mkdir -p $(@D) && $(call lines,LIB_OBJ PG_LIB_OBJ TEST_OBJ PG_OBJ WEB_OBJ) > $@

FORCE:

# The integration suites drive $(B)/chute.  $(B)/tests/flags comes first so
# that a machine without Check stops before compiling anything.
# CHECK_ROUNDS: the reduced crash torture run that every check includes.
CHECK_ROUNDS ?= 20
check: $(B)/tests/flags $(B)/pg/flags $(B)/chute $(B)/chute-pgsql \
	$(B)/chute-web $(B)/chute-web-pgsql $(B)/check_chute $(B)/torture $(B)/libfault.so $(B)/cdp
	tests/build/stale.sh
	tests/build/layers.sh $(B)/libchute.a $(B)/libchutepg.a \
	    $(filter-out %/pg_main.o,$(PG_OBJ)) $(TOP_OBJ) \
	    $(filter-out %/main.o,$(CHUTE_OBJ)) $(WEB_OBJ)
	tests/build/layers.sh --self-test
	tests/units.sh $(abspath $(B)/chute)
	CHUTE_BIN=$(abspath $(B)/chute) CHUTE_FAULT_LIB=$(abspath $(B)/libfault.so) \
	    $(B)/check_chute
	tests/top.sh $(B)/chute
	tests/top_pg.sh $(B)/chute
	tests/progress.sh $(B)/chute
	tests/completion.sh $(B)/chute
	tests/web.sh $(B)/chute $(B)/cdp
	tests/man.sh $(B)/chute
	tests/netns.sh $(B)/chute
	CHUTE_BIN=$(abspath $(B)/chute) $(B)/torture --rounds $(CHECK_ROUNDS)
	CHUTE_BIN=$(abspath $(B)/chute) $(B)/torture --rounds $(CHECK_ROUNDS) --flaky
	CHUTE_BIN=$(abspath $(B)/chute) $(B)/torture --pgsql --rounds 5 --keys

# The unit suites alone (CHUTE_UNIT_ONLY: tests/check_main.c), no
# program driven and no server started: under a minute, for every edit.
check-unit: $(B)/tests/flags $(B)/check_chute
	CHUTE_UNIT_ONLY=1 $(B)/check_chute

# The whole suite again, every binary built with ASan and UBSan.  Its own
# directory and stamp keep its objects apart from build/'s.
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
check-asan:
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:verify_asan_link_order=0 \
	LSAN_OPTIONS=suppressions=$(abspath tests/lsan.supp):print_suppressions=0 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	$(MAKE) B=build/asan CFLAGS="-O1 -g $(SAN)" LDFLAGS="$(SAN)" \
	    CHECK_ROUNDS=5 check

# make strict: what CI builds.  Everything (chute, the tests, torture, the
# fault shim) in its own directory, with OpenSMTPD's smtpd warnings and a few
# more that gcc 12 has, as errors.  Not -Wwrite-strings: with -Wcast-qual it
# leaves no clean way to build an execve argv.  -Wno-unused-parameter:
# callbacks (signal, event, scandir filter) take what they do not use.
# To list every warning without stopping: make -k strict STRICT_WERROR=
STRICT_WARN := -Wall -Wextra -Wstrict-prototypes -Wmissing-prototypes \
	-Wmissing-declarations -Wold-style-definition -Wshadow -Wpointer-arith \
	-Wcast-qual -Wsign-compare -Wformat=2 -Wsuggest-attribute=format \
	-Wundef -Wredundant-decls -Wnested-externs -Wvla -Wdate-time \
	-Wlogical-op -Wduplicated-cond -Wduplicated-branches \
	-Wno-unused-parameter
STRICT_WERROR ?= -Werror
strict:
	$(MAKE) B=build/strict WARN='$(STRICT_WARN) $(STRICT_WERROR)' \
	    $(addprefix build/strict/,chute chute-pgsql chute-web \
	    chute-web-pgsql check_chute \
	    torture libfault.so cdp)

# The owner under valgrind across 10,000 jobs: no leak, no invalid access.
VALGRIND_JOBS ?= 10000
check-valgrind: $(B)/chute
	tests/valgrind.sh $(abspath $(B)/chute) $(VALGRIND_JOBS)

torture: $(B)/chute $(B)/chute-pgsql $(B)/torture
	CHUTE_BIN=$(abspath $(B)/chute) $(B)/torture --rounds 200
	CHUTE_BIN=$(abspath $(B)/chute) $(B)/torture --rounds 50 --flaky
	CHUTE_BIN=$(abspath $(B)/chute) $(B)/torture --pgsql --rounds 60
	CHUTE_BIN=$(abspath $(B)/chute) $(B)/torture --pgsql --rounds 30 --flaky
	CHUTE_BIN=$(abspath $(B)/chute) $(B)/torture --pgsql --rounds 30 --freeze
	CHUTE_BIN=$(abspath $(B)/chute) $(B)/torture --pgsql --rounds 30 --keys
	tests/netns.sh $(B)/chute torture=30

# libFuzzer (clang) on every parser that sees outside input; its objects
# have their own directory and stamps.
FUZZ_SECONDS ?= 30
FUZZERS := names dur joblog disk events args claim html
FUZZ_CC ?= clang
FZ := build/fuzz
FZ_FLAGS := -O1 -g -fsanitize=fuzzer-no-link,address,undefined -D_GNU_SOURCE \
	-std=gnu11 -Werror=implicit-function-declaration -Isrc $(PKG_CFLAGS)
FZ_OBJ := $(LIB_SRC:src/%.c=$(FZ)/obj/%.o)
FZ_FLAGS_VARS := FUZZ_CC FZ_FLAGS PKG_LIBS PKG_VERSIONS PG_PKG_CFLAGS \
	PG_PKG_LIBS
# fuzz_claim reads claim replies through queue_pg.c: chute-pgsql's
# library, every object of it (a list went stale twice as files split),
# with libpq's flags.
FZ_PG_OBJ := $(PG_LIB_SRC:src/%.c=$(FZ)/obj/%.o)

# fuzz_html feeds the dashboard's escapers (web_html.c): that object
# alone, which includes no header of libmicrohttpd's, so none of its flags.
FZ_WEB_OBJ := $(FZ)/obj/chute-web/web_html.o

# Named only in a pattern rule, they would be deleted as intermediate files.
.SECONDARY: $(FZ_OBJ) $(FZ_PG_OBJ) $(FZ_WEB_OBJ)

$(FZ_PG_OBJ) $(FZ)/fuzz_claim: FZ_FLAGS += $(PG_PKG_CFLAGS) -Isrc
$(FZ)/fuzz_claim: PKG_LIBS += $(PG_PKG_LIBS)
$(FZ)/fuzz_claim: $(FZ_PG_OBJ) $(B)/pg/flags
$(FZ)/fuzz_html: $(FZ_WEB_OBJ)

$(FZ)/obj/%.o: src/%.c $(FZ)/flags
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FZ_FLAGS) -MMD -MP -c -o $@ $<

$(FZ)/fuzz_%: tests/fuzz/fuzz_%.c $(FZ_OBJ) $(FZ)/flags $(FZ)/objects
	$(FUZZ_CC) $(FZ_FLAGS) -fsanitize=fuzzer -MMD -MP -o $@ \
	    $(filter %.c %.o,$^) $(PKG_LIBS)

$(FZ)/flags: $(call changed,$(FZ)/flags,$(FZ_FLAGS_VARS))
	$(call need,$(PKGS))
	@mkdir -p $(@D) && $(call lines,$(FZ_FLAGS_VARS)) > $@

$(FZ)/objects: $(call changed,$(FZ)/objects,FZ_OBJ)
	@mkdir -p $(@D) && $(call lines,FZ_OBJ) > $@

fuzz: $(FUZZERS:%=$(FZ)/fuzz_%)
	for f in $(FUZZERS); do \
	    mkdir -p $(FZ)/work-$$f && \
	    $(FZ)/fuzz_$$f $(FZ)/work-$$f tests/fuzz/corpus/$$f \
	        -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	        -artifact_prefix=$(FZ)/crash-$$f- || exit 1; \
	done

install: $(B)/chute $(B)/chute-pgsql $(B)/chute-web $(B)/chute-web-pgsql
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 755 $(B)/chute $(DESTDIR)$(BINDIR)/chute
	install -m 755 $(B)/chute-pgsql $(DESTDIR)$(BINDIR)/chute-pgsql
	install -m 755 $(B)/chute-web $(DESTDIR)$(BINDIR)/chute-web
	install -m 755 $(B)/chute-web-pgsql $(DESTDIR)$(BINDIR)/chute-web-pgsql
	install -m 644 chute.1 $(DESTDIR)$(MANDIR)/man1/chute.1

bench: $(B)/chute $(B)/chute-pgsql
	CHUTE_BIN=$(abspath $(B)/chute) bench/run

# make deb: the Debian packages chute, chute-pgsql, chute-web and
# chute-web-pgsql (debian/), built with debhelper from a copy of the tree,
# into $(B)/deb/.  make check-package
# builds them, installs them with dpkg on this machine (as root), runs a job
# as the chute user, purges them and checks what is left (README).
deb:
	debian/make-deb $(B)/deb

check-package:
	tests/package/check.sh $(B)/deb

clean:
	rm -rf $(B)

# What each object and binary includes, as the compiler saw it last time.
# The dependency files of this tree's objects: under obj/ one per source
# folder (find, not a glob: the folders nest), beside them the tests' and
# the fuzzers'; not build/deb's directories named *.d (tmpfiles.d).
-include $(wildcard $(B)/*.d $(B)/tests/*.d $(FZ)/*.d) \
	$(shell find $(B)/obj $(FZ)/obj -name '*.d' -type f 2>/dev/null)

# A recipe that fails leaves no half-written target behind.
.DELETE_ON_ERROR:
.PHONY: all check check-unit check-asan check-valgrind strict torture fuzz install bench \
	deb check-package clean FORCE
