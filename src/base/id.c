/*
 * id.c: job IDs.  A generated ID is unique across processes and hosts and
 * sorts by submission time: SSSSSSSSSS.UUUUUU.PPPPPPP_CCCC.HOST, fixed-width
 * numbers, only [A-Za-z0-9._-].  Any ID must be a safe single file name.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/id.h"

int
id_valid(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > ID_MAX || id[0] == '.')
		return 0;
	for (const unsigned char *p = (const unsigned char *)id; *p; p++)
		if (*p == '/' || *p < 0x20 || *p == 0x7f)
			return 0;
	return 1;
}

static int
safe_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

static void
host_part(char *buf, size_t len)
{
	char host[256] = "localhost";
	size_t j = 0;

	gethostname(host, sizeof(host) - 1);
	host[sizeof(host) - 1] = '\0';
	for (size_t i = 0; host[i] && host[i] != '.' && j + 1 < len && j < 32;
	    i++)
		buf[j++] = safe_char(host[i]) ? host[i] : '-';
	buf[j] = '\0';
	if (j == 0)
		strlcpy(buf, "localhost", len);
}

void
id_suffix(char *buf, size_t len)
{
	static unsigned counter;
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(buf, len, "%010lld.%06ld.%07ld_%04u", (long long)ts.tv_sec,
	    ts.tv_nsec / 1000, (long)getpid(), counter++ % 10000);
}

void
id_generate(char *buf, size_t len)
{
	char suffix[48], host[40];

	id_suffix(suffix, sizeof(suffix));
	host_part(host, sizeof(host));
	snprintf(buf, len, "%s.%s", suffix, host);
}

/*
 * Where a name's attributes begin (base/sched.h, ",L=VALUE" at its end):
 * found by their form alone, so that bad ones are kept too.
 */
static size_t
attr_start(const char *name)
{
	size_t end = strlen(name);
	const char *c;

	while (end > 0 && (c = memrchr(name, ',', end)) != NULL &&
	    c != name && c[1] >= 'a' && c[1] <= 'z' && c[2] == '=')
		end = (size_t)(c - name);
	return end;
}

/*
 * The attributes, each byte a key may hold kept and any other made '%',
 * which none may hold: a bad attribute stays bad (its job is refused with
 * its reason), and a good one keeps its meaning.  Too long to fit: one
 * bad key, for the same reason.
 */
static void
attr_tail(const char *tail, char *buf, size_t len)
{
	size_t j = 0;

	if (strlen(tail) >= len) {
		strlcpy(buf, ",k=%", len);
		return;
	}
	for (; *tail; tail++)
		buf[j++] = safe_char((unsigned char)*tail) ||
		    strchr(",=:@+", *tail) != NULL ? *tail : '%';
	buf[j] = '\0';
}

void
id_derive(const char *name, char *buf, size_t len)
{
	char suffix[48], tail[ID_MAX / 2];
	size_t j = 0, at = attr_start(name), room = 160;

	id_suffix(suffix, sizeof(suffix));
	attr_tail(name + at, tail, sizeof(tail));
	/* The whole must stay an ID: the name gives way to the attributes. */
	if (strlen(tail) + 160 + 1 + strlen(suffix) > ID_MAX)
		room = ID_MAX - strlen(tail) - 1 - strlen(suffix);
	for (size_t i = 0; i < at && j < room && j + 1 < len; i++)
		buf[j++] = safe_char(name[i]) ? name[i] : '_';
	if (j > 0 && buf[0] == '.')
		buf[0] = '_';
	buf[j] = '\0';
	if (j > 0)
		strlcat(buf, "-", len);
	strlcat(buf, suffix, len);
	strlcat(buf, tail, len);
}
