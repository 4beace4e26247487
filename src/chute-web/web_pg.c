/*
 * web_pg.c: a PostgreSQL queue as the dashboard's store (in progress).
 */
#include <stdio.h>

#include "base/chute.h"
#include "chute-web/web.h"

int
web_pg_open(const char *uri, const char *queue,
    const struct web_store_ops **ops, void **st, const char **name)
{
	fprintf(stderr, "chute: web: a queue's dashboard is in progress\n");
	return EX_UNAVAILABLE;
}
