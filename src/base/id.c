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

void
id_derive(const char *name, char *buf, size_t len)
{
	char suffix[48];
	size_t j = 0;

	id_suffix(suffix, sizeof(suffix));
	for (size_t i = 0; name[i] && j < 160 && j + 1 < len; i++)
		buf[j++] = safe_char(name[i]) ? name[i] : '_';
	if (j > 0 && buf[0] == '.')
		buf[0] = '_';
	buf[j] = '\0';
	if (j > 0)
		strlcat(buf, "-", len);
	strlcat(buf, suffix, len);
}
