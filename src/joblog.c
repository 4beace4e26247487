/*
 * joblog.c: log/ID, the job's history.  The handler's stdout and stderr are
 * appended to it, and chute appends its own lines, each starting with
 * "@chute " and the UTC time.  The attempt count is not stored anywhere
 * else: it is read back from these lines (see spool-layout.md).
 */
#include <sys/mman.h>
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chute.h"

#define MARK	"@chute "

/* Append-only, never through a symlink; group-readable in a group spool. */
int
joblog_open(struct spool *sp, const char *id)
{
	struct stat st;
	mode_t mode = 0600;

	if (fstat(sp->dir[ST_LOG], &st) == 0 && (st.st_mode & 0070))
		mode = 0640;
	/* O_RDWR, not O_WRONLY: joblog_fnote reads back the last byte. */
	return openat(sp->dir[ST_LOG], id, O_RDWR | O_APPEND | O_CREAT |
	    O_NOFOLLOW | O_CLOEXEC, mode);
}

/*
 * Append one "@chute TIME text" line.  The handler may have left its last
 * line without a newline; start a fresh line so ours stays parseable.
 */
int
joblog_fnote(int fd, const char *fmt, ...)
{
	char line[1024], ts[40];
	struct stat st;
	va_list ap;
	size_t n = 0;
	char last = '\n';

	if (fstat(fd, &st) == 0 && st.st_size > 0 &&
	    pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n')
		line[n++] = '\n';
	iso_time(now_ms(), ts, sizeof(ts));
	n += snprintf(line + n, sizeof(line) - n, MARK "%s ", ts);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	strlcat(line, "\n", sizeof(line));
	return write_all(fd, line, strlen(line)) == -1 ? -1 : 0;
}

int
joblog_note(struct spool *sp, const char *id, const char *fmt, ...)
{
	char text[900];
	va_list ap;
	int fd, rc;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if ((fd = joblog_open(sp, id)) == -1)
		return -1;
	rc = joblog_fnote(fd, "%s", text);
	close(fd);
	return rc;
}

/* One "@chute" line, without the marker and the time stamp. */
static void
parse_line(const char *p, size_t len, struct joblog_info *ji)
{
	const char *sp = memchr(p, ' ', len);
	char text[128];
	size_t n;

	if (sp == NULL)
		return;
	n = len - (sp + 1 - p);
	if (n >= sizeof(text))
		n = sizeof(text) - 1;
	memcpy(text, sp + 1, n);
	text[n] = '\0';
	if (strncmp(text, "reset", 5) == 0) {
		ji->attempts = 0;
		ji->last[0] = '\0';
		return;
	}
	if (strncmp(text, "cancelled", 9) == 0) {
		strlcpy(ji->last, "cancelled", sizeof(ji->last));
		return;
	}
	if (strncmp(text, "rejected", 8) == 0) {
		strlcpy(ji->last, "rejected", sizeof(ji->last));
		return;
	}
	if (strncmp(text, "attempt=", 8) != 0)
		return;
	char *rest = strchr(text, ' ');
	if (rest == NULL)
		return;
	rest++;
	if (strcmp(rest, "start") == 0)
		ji->attempts++;
	else if (strncmp(rest, "interrupted", 11) == 0)
		ji->attempts--;
	else {
		char *t = strstr(rest, " time=");
		if (t)
			*t = '\0';
		strlcpy(ji->last, rest, sizeof(ji->last));
	}
}

/* Scan a log's bytes for our lines; handler output in between is skipped. */
void
joblog_parse(const char *buf, size_t len, struct joblog_info *ji)
{
	const char *p = buf, *end = buf + len;

	ji->attempts = 0;
	ji->last[0] = '\0';
	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);
		const char *eol = nl ? nl : end;

		if ((size_t)(eol - p) > sizeof(MARK) - 1 &&
		    memcmp(p, MARK, sizeof(MARK) - 1) == 0)
			parse_line(p + sizeof(MARK) - 1,
			    eol - p - (sizeof(MARK) - 1), ji);
		p = eol + 1;
	}
	if (ji->attempts < 0)
		ji->attempts = 0;
}

/*
 * Fill ji from log/ID.  A job that never ran has no log: that is attempts=0,
 * not an error.  Returns 0, or -1 with errno set.
 */
int
joblog_read(struct spool *sp, const char *id, struct joblog_info *ji)
{
	struct stat st;
	void *map;
	int fd;

	ji->attempts = 0;
	ji->last[0] = '\0';
	fd = openat(sp->dir[ST_LOG], id, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		return errno == ENOENT ? 0 : -1;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	if (st.st_size == 0) {
		close(fd);
		return 0;
	}
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -1;
	joblog_parse(map, st.st_size, ji);
	munmap(map, st.st_size);
	return 0;
}
