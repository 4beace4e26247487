/*
 * web_static.c: the dashboard's two static files, chute.js (the live
 * updates) and chute.css, compiled into the program (.incbin) so that it
 * needs no file beside it; the Makefile makes this object depend on them.
 * The page carries no script of its own: the Content-Security-Policy
 * allows only these, from this server.
 */
#include <string.h>

#include "chute-web/web.h"

/* Each file's bytes between two symbols, in a section of read-only data. */
#define EMBED(sym, file)						\
	__asm__(".section .rodata\n"					\
	    ".global " #sym "_start\n.global " #sym "_end\n"		\
	    ".balign 16\n" #sym "_start:\n.incbin \"" file "\"\n"	\
	    #sym "_end:\n.byte 0\n.previous\n");			\
	extern const char sym##_start[], sym##_end[]

EMBED(web_js, "src/chute-web/chute.js");
EMBED(web_css, "src/chute-web/chute.css");

const char *
web_static(const char *path, size_t *len, const char **type)
{
	if (strcmp(path, "/static/chute.js") == 0) {
		*len = (size_t)(web_js_end - web_js_start);
		*type = "text/javascript; charset=utf-8";
		return web_js_start;
	}
	if (strcmp(path, "/static/chute.css") == 0) {
		*len = (size_t)(web_css_end - web_css_start);
		*type = "text/css; charset=utf-8";
		return web_css_start;
	}
	return NULL;
}
