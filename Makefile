# chute: plain Makefile; flags from pkg-config (libbsd overlay, Check).
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
CC      ?= cc
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 -Wall -Wextra -Wshadow -Wno-unused-parameter -D_GNU_SOURCE -Iinclude
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
	$(CC) $(CFLAGS) $(BSD_CFLAGS) -c -o $@ $<

$(B)/tests/%.o: tests/%.c $(HDR) $(wildcard tests/*.h) | $(B)/tests
	$(CC) $(CFLAGS) $(BSD_CFLAGS) $(CHECK_CFLAGS) -Itests -c -o $@ $<

$(B)/check_chute: $(TEST_OBJ) $(B)/libchute.a
	$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(BSD_LIBS)

$(B) $(B)/tests:
	mkdir -p $@

# The integration suites drive $(B)/chute, so it is built first.
check: $(B)/chute $(B)/check_chute
	CHUTE_BIN=$(abspath $(B)/chute) $(B)/check_chute

install: $(B)/chute
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 755 $(B)/chute $(DESTDIR)$(BINDIR)/chute
	install -m 644 chute.1 $(DESTDIR)$(MANDIR)/man1/chute.1

clean:
	rm -rf $(B)

.PHONY: all check install clean
