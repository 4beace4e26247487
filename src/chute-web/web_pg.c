/*
 * web_pg.c: the PostgreSQL queue's store for the dashboard, the one
 * object of chute-web-pgsql that chute-web has not: it names
 * store_pg_ops, so that libchutepg.a (and libpq) is linked in (web.h,
 * web_pg_store).
 */
#include "queue/store.h"
#include "chute-web/web.h"

const struct store_ops *
web_pg_store(void)
{
	return &store_pg_ops;
}
