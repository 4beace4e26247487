/*
 * util.c: small pure helpers shared by every part of chute: durations,
 * clocks, EINTR-safe I/O, the transition log line and backoff arithmetic.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <syslog.h>
#include <unistd.h>
#define LIBBSD_OPENBSD_VIS 1
#include <vis.h>

#include "base/util.h"

int
dur_parse(const char *s, msec_t *out)
{
	static const struct { const char *suffix; msec_t mult; } units[] = {
		{ "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 },
		{ "d", 86400000 }, { "", 1000 },
	};
	char num[24];
	size_t n = strspn(s, "0123456789");
	const char *err;
	long long v;

	if (n == 0 || n >= sizeof(num))
		goto bad;
	memcpy(num, s, n);
	num[n] = '\0';
	v = strtonum(num, 0, 100LL * 365 * 86400 * 1000, &err);
	if (err != NULL)
		goto bad;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(s + n, units[i].suffix) != 0)
			continue;
		if (v > 100LL * 365 * 86400 * 1000 / units[i].mult)
			goto bad;
		*out = v * units[i].mult;
		return 0;
	}
bad:
	errno = EINVAL;
	return -1;
}

void
dur_format(msec_t ms, char *buf, size_t len)
{
	if (ms < 1000)
		snprintf(buf, len, "%lldms", (long long)ms);
	else if (ms < 60000)
		snprintf(buf, len, "%lld.%03llds", (long long)ms / 1000,
		    (long long)ms % 1000);
	else if (ms < 3600000)
		snprintf(buf, len, "%lldm%llds", (long long)ms / 60000,
		    (long long)ms / 1000 % 60);
	else if (ms < 86400000LL * 2)
		snprintf(buf, len, "%lldh%lldm", (long long)ms / 3600000,
		    (long long)ms / 60000 % 60);
	else
		snprintf(buf, len, "%lldd%lldh", (long long)ms / 86400000,
		    (long long)ms / 3600000 % 24);
}

int
keep_parse(const char *s, msec_t *out)
{
	if (strcmp(s, "forever") == 0) {
		*out = KEEP_FOREVER;
		return 0;
	}
	return dur_parse(s, out);
}

void
keep_format(msec_t ms, char *buf, size_t len)
{
	static const struct { const char *unit; msec_t mult; } units[] = {
		{ "d", 86400000 }, { "h", 3600000 }, { "m", 60000 },
		{ "s", 1000 },
	};

	if (ms < 0) {
		snprintf(buf, len, "forever");
		return;
	}
	for (size_t i = 0; ms > 0 && i < sizeof(units) / sizeof(units[0]); i++)
		if (ms % units[i].mult == 0) {
			snprintf(buf, len, "%lld%s", (long long)(ms /
			    units[i].mult), units[i].unit);
			return;
		}
	if (ms == 0)
		snprintf(buf, len, "0");
	else
		snprintf(buf, len, "%lldms", (long long)ms);
}

static msec_t
clock_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (msec_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

msec_t now_ms(void) { return clock_ms(CLOCK_REALTIME); }
msec_t mono_ms(void) { return clock_ms(CLOCK_MONOTONIC); }

void
iso_time(msec_t ms, char *buf, size_t len)
{
	/* The date and time of the last second asked: two log lines per job. */
	static time_t last = -1;
	static char s[32];
	time_t t = ms / 1000;
	struct tm tm;

	if (t != last || s[0] == '\0') {
		gmtime_r(&t, &tm);
		strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
		last = t;
	}
	snprintf(buf, len, "%s.%03dZ", s, (int)(ms % 1000));
}

ssize_t
write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	size_t left = len;

	while (left > 0) {
		ssize_t n = write(fd, p, left);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return -1;
		p += n;
		left -= n;
	}
	return len;
}

ssize_t
read_full(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, p + got, len - got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return -1;
		if (n == 0)
			break;
		got += n;
	}
	return got;
}

void
vis_name(const char *name, char *buf, size_t len)
{
	size_t n = 0;

	/*
	 * Printable ASCII but the backslash is what strnvis leaves as it is,
	 * in any locale; it costs a mbrtowc per byte, and every job's ID goes
	 * through here twice or more.
	 */
	while (name[n] > ' ' && name[n] < 0x7f && name[n] != '\\')
		n++;
	if (name[n] == '\0' && n < len) {
		memcpy(buf, name, n + 1);
		return;
	}
	strnvis(buf, name, len, VIS_CSTYLE | VIS_OCTAL | VIS_TAB | VIS_NL |
	    VIS_SP);
}

const char *
vis_id(const char *name)
{
	static char buf[4][NAME_MAX * 4 + 1];
	static int i;

	i = (i + 1) % 4;
	vis_name(name, buf[i], sizeof(buf[i]));
	return buf[i];
}

size_t
utf8_seq(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		lo = s[0] == 0xe0 ? 0xa0 : lo;
		hi = s[0] == 0xed ? 0x9f : hi;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		lo = s[0] == 0xf0 ? 0x90 : lo;
		hi = s[0] == 0xf4 ? 0x8f : hi;
	} else
		return 0;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

void
vis_text(const char *text, char *buf, size_t len)
{
	strnvis(buf, text, len, VIS_CSTYLE | VIS_OCTAL | VIS_TAB | VIS_NL);
}

/*
 * The owner's lines, batched into one write per turn of its event loop:
 * say_flush() runs before every poll(2), so a line is never held while
 * the owner sleeps.  A kill -9 can lose the lines of the current turn;
 * the spool itself, not this log, is the record of what happened.
 */
static struct {
	bool	 on;
	size_t	 len;
	char	 buf[16384];
} saybuf;

static bool say_to_syslog;	
void
say_flush(void)
{
	if (saybuf.len > 0) {
		progress_clear();
		write_all(STDERR_FILENO, saybuf.buf, saybuf.len);
	}
	saybuf.len = 0;
}

/*
 * A progress line for a person watching (run --drain, wait): drawn on
 * stderr only when it is a terminal, at most ten times a second, with a
 * carriage return and no escape sequence, and erased (spaces) before any
 * other line is written there, so that it never mixes with them.
 */
static struct {
	int	 tty;		/* -1: not asked yet */
	int	 width;		/* of the line on screen; 0: none */
	msec_t	 last;
} prog = { .tty = -1 };

bool
progress_wanted(void)
{
	if (prog.tty == -1)
		prog.tty = isatty(STDERR_FILENO);
	return prog.tty && !say_to_syslog;
}

void
progress(const char *fmt, ...)
{
	char line[160];
	msec_t now = mono_ms();
	va_list ap;
	int n;

	if (!progress_wanted() || now - prog.last < 100)
		return;
	prog.last = now;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n >= (int)sizeof(line))
		n = (int)sizeof(line) - 1;
	dprintf(STDERR_FILENO, "\r%s%*s", line, prog.width > n ?
	    prog.width - n : 0, "");
	prog.width = prog.width > n ? prog.width : n;
}

void
progress_clear(void)
{
	if (prog.width == 0)
		return;
	dprintf(STDERR_FILENO, "\r%*s\r", prog.width, "");
	prog.width = 0;
	prog.last = 0;
}

void
say_buffer(bool on)
{
	say_flush();
	saybuf.on = on;
}

/* --syslog's facilities, by the names logger(1) and syslog.conf use. */
static const struct {
	const char	*name;
	int		 code;
} facilities[] = {
	{ "daemon", LOG_DAEMON }, { "user", LOG_USER }, { "mail", LOG_MAIL },
	{ "cron", LOG_CRON }, { "news", LOG_NEWS }, { "uucp", LOG_UUCP },
	{ "lpr", LOG_LPR }, { "local0", LOG_LOCAL0 }, { "local1", LOG_LOCAL1 },
	{ "local2", LOG_LOCAL2 }, { "local3", LOG_LOCAL3 },
	{ "local4", LOG_LOCAL4 }, { "local5", LOG_LOCAL5 },
	{ "local6", LOG_LOCAL6 }, { "local7", LOG_LOCAL7 },
};

int
say_facility(const char *name)
{
	for (size_t i = 0; i < sizeof(facilities) / sizeof(facilities[0]); i++)
		if (strcmp(facilities[i].name, name) == 0)
			return facilities[i].code;
	return -1;
}

void
say_syslog(int facility)
{
	say_flush();
	openlog("chute", LOG_PID | LOG_NDELAY, facility);
	say_to_syslog = true;
}

/*
 * One of the owner's lines, at syslog priority prio (say and its
 * siblings choose it where the line is written).
 */
static void __attribute__((format(printf, 2, 0)))
say_v(int prio, const char *fmt, va_list ap)
{
	char line[1024], ts[40];
	size_t len;
	int n;

	iso_time(now_ms(), ts, sizeof(ts));
	n = snprintf(line, sizeof(line), "%s ", ts);
	vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	if (say_to_syslog) {
		/* syslog stamps the time itself. */
		syslog(prio, "%s", line + n);
		return;
	}
	strlcat(line, "\n", sizeof(line));
	len = strlen(line);
	if (!saybuf.on) {
		progress_clear();
		write_all(STDERR_FILENO, line, len);
		return;
	}
	if (saybuf.len + len > sizeof(saybuf.buf))
		say_flush();
	memcpy(saybuf.buf + saybuf.len, line, len);
	saybuf.len += len;
}

#define SAY_AT(prio) do {		\
	va_list ap;			\
	va_start(ap, fmt);		\
	say_v((prio), fmt, ap);		\
	va_end(ap);			\
} while (0)

void
say(const char *fmt, ...)
{
	SAY_AT(LOG_INFO);
}

void
say_notice(const char *fmt, ...)
{
	SAY_AT(LOG_NOTICE);
}

void
say_warn(const char *fmt, ...)
{
	SAY_AT(LOG_WARNING);
}

void
say_err(const char *fmt, ...)
{
	SAY_AT(LOG_ERR);
}

msec_t
backoff_delay(msec_t base, msec_t cap, int attempt, uint32_t (*rnd)(uint32_t))
{
	msec_t d = base;
	msec_t half;

	for (int i = 1; i < attempt && d < cap; i++)
		d *= 2;
	if (d > cap)
		d = cap;
	half = d / 2;
	if (half <= 0)
		return d;
	if (half > UINT32_MAX - 1)
		half = UINT32_MAX - 1;
	return d - half + rnd((uint32_t)half + 1);
}
