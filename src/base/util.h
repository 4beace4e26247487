/*
 * util.h, the interface of util.c: durations, clocks, full reads and
 * writes, escaping, and say(): the owner's lines, on stderr or to syslog.
 */
#ifndef BASE_UTIL_H
#define BASE_UTIL_H

#include <sys/types.h>
#include <stdbool.h>
#include <stdint.h>

typedef int64_t msec_t;		/* milliseconds; durations and deadlines */

/*
 * Parse "250ms", "30s", "5m", "2h", "7d" or plain seconds into
 * milliseconds.  Returns 0, or -1 (EINVAL) for anything else, including
 * negative values and values that would overflow a year's worth of days.
 */
int	 dur_parse(const char *s, msec_t *out);

/* Format a duration the way humans read it back: 250ms, 1.5s, 5m, 2h3m. */
void	 dur_format(msec_t ms, char *buf, size_t len);

/*
 * How long finished jobs are kept (`chute retention`): ms per terminal
 * state, 0 not at all, KEEP_FOREVER until purged (the default).
 */
#define KEEP_FOREVER	((msec_t)-1)
struct retention {
	msec_t	 done, failed;
};
/* A duration as dur_parse takes it, or "forever": 0, or -1 (EINVAL). */
int	 keep_parse(const char *s, msec_t *out);
/* "forever", or the largest exact unit ("90m", "1500ms", "0"): keep_parse
 * reads it back. */
void	 keep_format(msec_t ms, char *buf, size_t len);

msec_t	 now_ms(void);			/* CLOCK_REALTIME */
msec_t	 mono_ms(void);			/* CLOCK_MONOTONIC */
/* 2026-11-30T04:09:40.123Z */
void	 iso_time(msec_t ms, char *buf, size_t len);

/* The one place that retries EINTR and short writes. */
ssize_t	 write_all(int fd, const void *buf, size_t len);

/* Read until len bytes or end of file; returns the count, or -1. */
ssize_t	 read_full(int fd, void *buf, size_t len);

/*
 * Make a name safe for one log line: a crafted file name must not be able
 * to end the line and forge another, so control bytes, spaces and
 * backslashes come out C-style escaped.
 */
void	 vis_name(const char *name, char *buf, size_t len);

/*
 * vis_name into one of a ring of four static buffers: for the owner's
 * lines, which name up to four jobs each.  Not for keeping.
 */
const char	*vis_id(const char *name);

/*
 * How many bytes of s make one valid UTF-8 character (no overlong form,
 * no surrogate, nothing past U+10FFFF), or 0.  s is NUL-terminated: a
 * sequence cut short by the end is not valid.
 */
size_t	 utf8_seq(const unsigned char *s);

/* The same for free text (a worker's reason): spaces stay readable. */
void	 vis_text(const char *text, char *buf, size_t len);

/* One transition line on stderr, prefixed with the UTC time, or to syslog. */
void	 say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * The owner's lines at a syslog priority of their own (with --syslog;
 * on stderr they look alike): a job's transitions and the owner's news
 * are say()'s LOG_INFO; a signal's say_notice; a step that will be
 * retried, or a file refused, say_warn; what cannot be done, say_err.
 */
void	 say_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	 say_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	 say_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void	 say_buffer(bool on);

/* say_syslog() was called */
void	 say_flush(void);

void	 progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Erase the progress line, if one is drawn; the next is drawn at once. */
void	 progress_clear(void);

/* Is a progress line drawn at all (stderr a terminal, not syslog)? */
bool	 progress_wanted(void);

/* The facility called name, or -1. */
int	 say_facility(const char *name);

/*
 * From now on the owner's lines go to syslog(3), ident "chute", with the
 * pid and facility, instead of stderr.  LOG_NDELAY: the socket (which
 * glibc opens close-on-exec) exists before any handler is started.
 */
void	 say_syslog(int facility);


/*
 * Delay before attempt+1 after a temporary failure of attempt `attempt`
 * (1-based): base * 2^(attempt-1), capped, then "equal jitter": uniformly
 * in [d/2, d], so retries of a burst of jobs do not all land together.
 * rnd(n) returns a uniform value in [0, n); tests pass a fixed one.
 */
msec_t	 backoff_delay(msec_t base, msec_t cap, int attempt,
	    uint32_t (*rnd)(uint32_t));

#endif
