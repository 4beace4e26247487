/*
 * fuzz_html.c: the dashboard's escapers (src/chute-web/web_html.c), which
 * every hostile string (an ID, a reason, a log, a query's value) goes
 * through on its way into a page.  The first byte picks the mode (bit 0:
 * an ID's rules); the rest is the text.  Properties, checked with code of
 * its own here (never web_html.c's or util.c's helpers):
 *   buf_html: no < > " ' and no & but the five entities it writes; no
 *     control byte (a log's \n and \t aside), DEL, C1 control or mark that
 *     reorders text; valid UTF-8; at most 6 bytes per byte; an ID's
 *     output has no space; and undoing the entities and the C-style
 *     escapes gives the input back, byte for byte (nothing is lost or
 *     made up).
 *   buf_attr: no < > " ' and no & but those entities; undone, the input.
 *     (It keeps control bytes, by its contract: its one caller, the
 *     prefix form, refuses them first, web_jobs.c.)
 *   buf_json: one JSON string that a strict parser reads to the end,
 *     printable ASCII only, no < > &, at most 2 + 12 bytes per byte, and
 *     what it holds is what buf_html shows, entities undone.
 *   buf_url: only A-Z a-z 0-9 - . _ ~ and %XX, at most 3 bytes per byte;
 *     decoded, the input.
 *   every buffer: its length is its string's, within its capacity (and
 *     ASan sees every byte written or read: the text is a copy of its
 *     exact size, with no NUL after it).
 * To see it fail: make shown() in web_html.c let '\x1b' through as
 * printable (s[0] >= 0x1b), or drop the "&#39;" case of entity().
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "chute-web/web.h"

#define must(x)	do { if (!(x)) abort(); } while (0)

/* A well-formed buffer: the escapers' output and nothing past it. */
static void
check_buf(const struct buf *b)
{
	must(!b->oom);
	must(b->p != NULL);
	must(b->len < b->cap);
	must(b->p[b->len] == '\0');
	must(strlen(b->p) == b->len);
}

/* The length of a valid UTF-8 sequence at s (n bytes left), or 0. */
static size_t
utf8_len(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t k;
	uint32_t c, min;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0)
		k = 2, c = s[0] & 0x1f, min = 0x80;
	else if ((s[0] & 0xf0) == 0xe0)
		k = 3, c = s[0] & 0x0f, min = 0x800;
	else if ((s[0] & 0xf8) == 0xf0)
		k = 4, c = s[0] & 0x07, min = 0x10000;
	else
		return 0;
	if (k > n)
		return 0;
	for (size_t i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return k;
}

static size_t
put_utf8(char *o, uint32_t c)
{
	if (c < 0x80) {
		o[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (char)(0xc0 | c >> 6);
		o[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		o[0] = (char)(0xe0 | c >> 12);
		o[1] = (char)(0x80 | (c >> 6 & 0x3f));
		o[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | c >> 18);
	o[1] = (char)(0x80 | (c >> 12 & 0x3f));
	o[2] = (char)(0x80 | (c >> 6 & 0x3f));
	o[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/*
 * s (len bytes) with its entities undone into out (len + 1 bytes at
 * least); aborts on a raw < > " ' or an & that starts none of the five.
 * Returns the length.
 */
static size_t
unentity(const char *s, size_t len, char *out)
{
	static const struct { const char *e; char c; } ent[] = {
		{ "&amp;", '&' }, { "&lt;", '<' }, { "&gt;", '>' },
		{ "&quot;", '"' }, { "&#39;", '\'' },
	};
	size_t n = 0;

	for (size_t i = 0; i < len; ) {
		size_t k;

		must(s[i] != '<' && s[i] != '>' && s[i] != '"' && s[i] != '\'');
		if (s[i] != '&') {
			out[n++] = s[i++];
			continue;
		}
		for (k = 0; k < sizeof(ent) / sizeof(ent[0]); k++)
			if (strncmp(s + i, ent[k].e, strlen(ent[k].e)) == 0)
				break;
		must(k < sizeof(ent) / sizeof(ent[0]));
		out[n++] = ent[k].c;
		i += strlen(ent[k].e);
	}
	out[n] = '\0';
	return n;
}

/* What buf_html shows, entities undone: valid UTF-8 with nothing hidden. */
static void
check_shown(const char *s, size_t len, bool id)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < len; ) {
		uint32_t c;
		size_t k = utf8_len(p + i, len - i, &c);

		must(k > 0);
		must(c >= 0x20 || (!id && (c == '\n' || c == '\t')));
		must(c != 0x7f && !(c >= 0x80 && c < 0xa0));
		must(!(c >= 0x202a && c <= 0x202e) && !(c >= 0x2066 &&
		    c <= 0x2069));
		must(!(id && c == ' '));
		i += k;
	}
}

/* The C-style escapes of shown text undone: the original bytes. */
static size_t
unescape(const char *s, size_t len, char *out)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		if (s[i] != '\\') {
			out[n++] = s[i];
			continue;
		}
		must(++i < len);
		switch (s[i]) {
		case '\\': out[n++] = '\\'; break;
		case 's': out[n++] = ' '; break;
		case 'n': out[n++] = '\n'; break;
		case 't': out[n++] = '\t'; break;
		case 'r': out[n++] = '\r'; break;
		default:
			must(i + 2 < len && s[i] >= '0' && s[i] <= '3' &&
			    s[i + 1] >= '0' && s[i + 1] <= '7' &&
			    s[i + 2] >= '0' && s[i + 2] <= '7');
			out[n++] = (char)((s[i] - '0') << 6 |
			    (s[i + 1] - '0') << 3 | (s[i + 2] - '0'));
			i += 2;
			break;
		}
	}
	return n;
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static uint32_t
hex4(const char *s)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++) {
		int h = hexval(s[i]);

		must(h >= 0);
		v = v << 4 | (uint32_t)h;
	}
	return v;
}

/*
 * A strict reading of one JSON string (RFC 8259), the whole of s, into
 * out as UTF-8.  Returns the length.
 */
static size_t
json_string(const char *s, size_t len, char *out)
{
	size_t n = 0, i = 1;

	must(len >= 2 && s[0] == '"' && s[len - 1] == '"');
	while (i < len - 1) {
		unsigned char c = (unsigned char)s[i];
		uint32_t cp;

		must(c >= 0x20 && c < 0x7f && c != '"');
		if (c != '\\') {
			out[n++] = (char)c;
			i++;
			continue;
		}
		must(i + 1 < len - 1);
		switch (s[i + 1]) {
		case '"': case '\\': case '/':
			out[n++] = s[i + 1]; i += 2; continue;
		case 'b': out[n++] = '\b'; i += 2; continue;
		case 'f': out[n++] = '\f'; i += 2; continue;
		case 'n': out[n++] = '\n'; i += 2; continue;
		case 'r': out[n++] = '\r'; i += 2; continue;
		case 't': out[n++] = '\t'; i += 2; continue;
		case 'u': break;
		default: abort();
		}
		must(i + 6 <= len - 1);
		cp = hex4(s + i + 2);
		i += 6;
		must(cp < 0xdc00 || cp > 0xdfff);	/* no lone low half */
		if (cp >= 0xd800 && cp <= 0xdbff) {
			uint32_t lo;

			must(i + 6 <= len - 1 && s[i] == '\\' && s[i + 1] == 'u');
			lo = hex4(s + i + 2);
			must(lo >= 0xdc00 && lo <= 0xdfff);
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			i += 6;
		}
		n += put_utf8(out + n, cp);
	}
	return n;
}

static void
html_props(const char *text, size_t n, bool id, char *tmp, char *back)
{
	struct buf b = { 0 };
	size_t len, orig;

	buf_html(&b, text, n, id);
	if (n == 0) {
		must(b.len == 0);
		buf_free(&b);
		return;
	}
	check_buf(&b);
	must(b.len <= 6 * n);
	len = unentity(b.p, b.len, tmp);
	check_shown(tmp, len, id);
	orig = unescape(tmp, len, back);
	must(orig == n && memcmp(back, text, n) == 0);
	buf_free(&b);
}

static void
attr_props(const char *text, char *tmp)
{
	struct buf b = { 0 };
	size_t n = strlen(text);

	buf_attr(&b, text);
	if (n == 0) {
		must(b.len == 0);
		buf_free(&b);
		return;
	}
	check_buf(&b);
	must(b.len <= 6 * n);
	must(unentity(b.p, b.len, tmp) == n && memcmp(tmp, text, n) == 0);
	buf_free(&b);
}

static void
json_props(const char *text, bool id, char *tmp, char *shown)
{
	struct buf b = { 0 }, h = { 0 };
	size_t n = strlen(text), len, slen = 0;

	buf_json(&b, text, id);
	check_buf(&b);
	must(b.len <= 2 + 12 * n);
	for (size_t i = 0; i < b.len; i++)
		must(b.p[i] >= 0x20 && b.p[i] < 0x7f && b.p[i] != '<' &&
		    b.p[i] != '>' && b.p[i] != '&');
	len = json_string(b.p, b.len, tmp);
	buf_html(&h, text, n, id);
	if (n > 0) {
		check_buf(&h);
		slen = unentity(h.p, h.len, shown);
	}
	must(len == slen && memcmp(tmp, shown, len) == 0);
	buf_free(&b);
	buf_free(&h);
}

static void
url_props(const char *text)
{
	struct buf b = { 0 };
	size_t n = strlen(text), k = 0;

	buf_url(&b, text);
	if (n == 0) {
		must(b.len == 0);
		buf_free(&b);
		return;
	}
	check_buf(&b);
	must(b.len <= 3 * n);
	for (size_t i = 0; i < b.len; k++) {
		char c = b.p[i];

		if (c == '%') {
			must(i + 2 < b.len && hexval(b.p[i + 1]) >= 0 &&
			    hexval(b.p[i + 2]) >= 0);
			must((char)(hexval(b.p[i + 1]) << 4 |
			    hexval(b.p[i + 2])) == text[k]);
			i += 3;
			continue;
		}
		must(strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		    "0123456789-._~", c) != NULL && c == text[k]);
		i++;
	}
	must(k == n);
	buf_free(&b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool id;
	size_t n;
	char *text, *str, *tmp, *back;

	if (size < 1 || size > 65536)
		return 0;
	id = data[0] & 1;
	n = size - 1;
	/* Exactly n bytes, no NUL after: a read past them is ASan's. */
	text = malloc(n ? n : 1);
	str = malloc(n + 1);
	tmp = malloc(12 * n + 16);
	back = malloc(12 * n + 16);
	must(text && str && tmp && back);
	memcpy(text, data + 1, n);
	memcpy(str, data + 1, n);
	str[n] = '\0';		/* the NUL-terminated escapers: up to a NUL */
	html_props(text, n, id, tmp, back);
	attr_props(str, tmp);
	json_props(str, id, tmp, back);
	url_props(str);
	free(text);
	free(str);
	free(tmp);
	free(back);
	return 0;
}
