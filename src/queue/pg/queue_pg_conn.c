/*
 * queue_pg_conn.c: the queue's connection: lost and said once, made again
 * after a backoff, its notices.
 */
#include <sys/stat.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/pump.h"
#include "base/util.h"
#include "store/spool.h"
#include "queue/pg/pg.h"
#include "queue/queue.h"
#include "queue/pg/pgq.h"

/* ---- the connection ---- */

void
pgq_down(struct pgq *pq, const char *what)
{
	msec_t mono = mono_ms();

	if (!pq->said_down)
		say_warn("%s: %s: %s; retrying, jobs keep running until their "
		    "leases need renewing", pq->pg.name, what, pg_error(&pq->pg));
	pq->said_down = true;
	pg_close(&pq->pg);
	pq->up = false;
	pq->flushing = false;	/* its outcomes stay pending: sent again */
	pq->nsent = 0;
	/* Its rows, if it was committed, go back when their leases run out. */
	pq->claiming = false;
	pq->reconnect_delay = pq->reconnect_delay == 0 ? PG_RECONNECT_MIN_MS :
	    pq->reconnect_delay * 2;
	if (pq->reconnect_delay > PG_RECONNECT_MAX_MS)
		pq->reconnect_delay = PG_RECONNECT_MAX_MS;
	pq->reconnect_at = mono + pq->reconnect_delay;
}

void
pgq_failed(struct pgq *pq, const char *what)
{
	if (!pg_ok(&pq->pg) || strcmp(pq->pg.state, PG_READ_ONLY) == 0)
		pgq_down(pq, what);
	else
		say_err("%s: %s: %s", pq->pg.name, what, pg_error(&pq->pg));
}

void
pgq_arm(struct pgq *pq, msec_t mono)
{
	msec_t d = mono + pq->lease / 3;
	msec_t stop = pq->renew_sent + pq->lease * 5 / 6;

	if (pq->renew_sent != 0 && (pq->nheld > 0 || pq->nahead > 0) &&
	    stop < d)
		d = stop > mono + pq->lease / 20 ? stop : mono + pq->lease / 20;
	pq->pg.deadline = d;
}

void
pgq_notice(void *arg, const char *msg)
{
	struct pgq *pq = arg;
	char line[4 * 512 + 1];

	pg_server_text(msg, line, sizeof(line));
	say_warn("%s: %s", pq->pg.name, line);
}
