/*
 * web_html.c: the dashboard's pages are built in a growing buffer, and
 * everything that came from a job (its ID, its reason, its log) goes in
 * through one of the escapers here, for the place it goes: HTML text and
 * attribute values, a query string's value, a JSON string.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "queue/view.h"
#include "chute-web/web.h"

static bool
buf_room(struct buf *b, size_t n)
{
	size_t cap;
	char *p;

	if (b->oom)
		return false;
	if (b->len + n + 1 <= b->cap)
		return true;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + n + 1)
		cap *= 2;
	if ((p = realloc(b->p, cap)) == NULL) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void
buf_addn(struct buf *b, const char *s, size_t n)
{
	if (!buf_room(b, n))
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void
buf_add(struct buf *b, const char *s)
{
	buf_addn(b, s, strlen(s));
}

void
buf_fmt(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !buf_room(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void
buf_free(struct buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

void
buf_age(struct buf *b, msec_t ms)
{
	char age[32];

	if (ms < 0) {
		buf_add(b, "-");
		return;
	}
	top_age(ms, age, sizeof(age));
	buf_add(b, age);
}

/*
 * Characters shown as their bytes' escapes although they are valid
 * UTF-8: the C1 controls, and the marks that reorder text (bidi
 * embeddings, overrides and isolates), which could make one ID look like
 * another.
 */
static bool
invisible(const unsigned char *s, size_t n)
{
	if (n == 2)
		return s[0] == 0xc2 && s[1] < 0xa0;
	if (n == 3 && s[0] == 0xe2 && s[1] == 0x80)
		return s[2] >= 0xaa && s[2] <= 0xae;
	if (n == 3 && s[0] == 0xe2 && s[1] == 0x81)
		return s[2] >= 0xa6 && s[2] <= 0xa9;
	return false;
}

/*
 * The next character of s (n bytes left, not NUL-terminated: a log) as it
 * is shown, into out (NUL-terminated, at most 16 bytes); the bytes it
 * took in *used.  out is then printable ASCII or one UTF-8 character,
 * still to be escaped for where it goes (& < > " ' in HTML...).
 */
static void
shown(const unsigned char *s, size_t n, bool id, char *out, size_t *used)
{
	unsigned char tmp[5] = { 0 };
	size_t k;

	*used = 1;
	if (s[0] == '\\') {
		strcpy(out, "\\\\");
		return;
	}
	if (s[0] >= 0x20 && s[0] < 0x7f && !(id && s[0] == ' ')) {
		out[0] = (char)s[0];
		out[1] = '\0';
		return;
	}
	if (s[0] == ' ') {		/* an ID's, as vis_name shows it */
		strcpy(out, "\\s");
		return;
	}
	if (!id && (s[0] == '\n' || s[0] == '\t')) {
		out[0] = (char)s[0];
		out[1] = '\0';
		return;
	}
	memcpy(tmp, s, n < 4 ? n : 4);
	if (s[0] >= 0x80 && (k = utf8_seq(tmp)) > 0 && k <= n &&
	    !invisible(tmp, k)) {
		memcpy(out, s, k);
		out[k] = '\0';
		*used = k;
		return;
	}
	if (s[0] == '\n' || s[0] == '\t' || s[0] == '\r')
		strcpy(out, s[0] == '\n' ? "\\n" : s[0] == '\t' ? "\\t" : "\\r");
	else
		snprintf(out, 16, "\\%03o", s[0]);
}

static void
entity(struct buf *b, char c)
{
	switch (c) {
	case '&': buf_add(b, "&amp;"); break;
	case '<': buf_add(b, "&lt;"); break;
	case '>': buf_add(b, "&gt;"); break;
	case '"': buf_add(b, "&quot;"); break;
	case '\'': buf_add(b, "&#39;"); break;
	default: buf_addn(b, &c, 1); break;
	}
}

void
buf_html(struct buf *b, const char *s, size_t n, bool id)
{
	const unsigned char *p = (const unsigned char *)s;
	char out[16];
	size_t used;

	while (n > 0) {
		shown(p, n, id, out, &used);
		if (out[1] == '\0')
			entity(b, out[0]);
		else
			buf_add(b, out);
		p += used;
		n -= used;
	}
}

void
buf_attr(struct buf *b, const char *s)
{
	for (; *s != '\0'; s++)
		entity(b, *s);
}

void
buf_url(struct buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char e[3] = { '%', hex[*p >> 4], hex[*p & 15] };

		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' ||
		    *p == '_' || *p == '~')
			buf_addn(b, (const char *)p, 1);
		else
			buf_addn(b, e, 3);
	}
}

/*
 * Outside the printable ASCII, and for < > & too (the text may end up in
 * HTML by some later hand), a character goes as \uXXXX: what the page
 * shows is then what the JSON holds, whoever reads it.
 */
void
buf_json(struct buf *b, const char *s, bool id)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), used;
	char out[16];

	buf_add(b, "\"");
	while (n > 0) {
		shown(p, n, id, out, &used);
		for (const unsigned char *o = (const unsigned char *)out; *o; ) {
			size_t k = *o < 0x80 ? 1 : utf8_seq(o);
			unsigned c = *o;

			if (k == 0)	/* shown() gives none: never */
				k = 1;
			if (k == 2)
				c = (o[0] & 0x1fu) << 6 | (o[1] & 0x3fu);
			else if (k == 3)
				c = (o[0] & 0x0fu) << 12 | (o[1] & 0x3fu) << 6 |
				    (o[2] & 0x3fu);
			else if (k == 4) {
				c = ((o[0] & 0x07u) << 18 | (o[1] & 0x3fu) << 12 |
				    (o[2] & 0x3fu) << 6 | (o[3] & 0x3fu)) - 0x10000;
				buf_fmt(b, "\\u%04x\\u%04x", 0xd800 + (c >> 10),
				    0xdc00 + (c & 0x3ff));
				o += 4;
				continue;
			}
			if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\' &&
			    c != '<' && c != '>' && c != '&')
				buf_addn(b, (const char *)o, 1);
			else
				buf_fmt(b, "\\u%04x", c);
			o += k;
		}
		p += used;
		n -= used;
	}
	buf_add(b, "\"");
}
