/*
 * web_store.c: the dashboard's actions over the store interface
 * (queue/store.h), whichever store it serves: cancel and retry as `chute
 * cancel` and `chute retry` do them, pause and resume as `chute pause`
 * and `chute resume` say them.  The stores' own files (web_spool.c,
 * web_pg.c) only lend their store and what guards it.
 */
#include <stdio.h>

#include "queue/store.h"
#include "chute-web/web.h"

int
web_store_act(struct store *s, enum web_act a, const char *id,
    const char *by, char *msg, size_t len)
{
	bool on = a == WA_PAUSE, changed;
	int rc;

	*msg = '\0';
	if (a == WA_CANCEL)
		return s->ops->cancel(s, id, by, msg, len);
	if (a == WA_RETRY)
		return s->ops->retry(s, id, by, msg, len);
	if ((rc = s->ops->set_pause(s, on, by, &changed, msg, len)) != 0)
		return rc;
	snprintf(msg, len, "%s %s", s->ops->title(s), !changed ? (on ?
	    "already paused" : "not paused") : on ? "paused" : "resumed");
	return 0;
}
