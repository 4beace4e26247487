/*
 * pg_forward.c: `chute forward SPOOL URL`: a local spool as the fleet's
 * durable edge buffer.  It owns the spool as `chute run` does (the same
 * lock and recovery, through queue_spool.c) and moves each job into the
 * database's queue, a batch per statement.  Its claims stay in new/
 * (queue_conf.in_place: no rename to cur/ and back), and a job leaves new/
 * for done/ only after the statement that inserted it has committed.  fleet.md,
 * "Forwarding from a spool", lists the statements and their crash windows.
 *
 * Idempotent: every row carries its origin (host, spool, local ID, and the
 * file's inode and birth time, which no rename changes and no later job of
 * the same name shares), under a unique index; a batch sent again after a
 * kill -9 or a lost connection finds its jobs there and inserts nothing.
 * No attempt is counted: forwarding writes no `start` line, and a batch
 * that cannot be sent stays claimed in new/ and is sent again.
 *
 * Here: the loop, the options, the process; the batches' spool side is
 * pg_forward_spool.c's, their statement pg_forward_db.c's.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/id.h"
#include "base/notify.h"
#include "base/sigfd.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "queue/pg/pg.h"
#include "chute-pgsql/pg_cmd.h"
#include "chute-pgsql/pg_forward.h"

/* ---- the loop ---- */

/* The process title: what it forwards, and while paused how many wait. */
static void
title(struct fwd *f, const struct counts *c)
{
	if (c->paused == f->title_paused && (!c->paused ||
	    c->queued == f->title_queued))
		return;
	f->title_paused = c->paused;
	f->title_queued = c->queued;
	if (c->paused)
		setproctitle("forward %s -> %s (%s) queued=%zu paused",
		    f->q->name, f->pg.name, f->pg.queue, c->queued);
	else
		setproctitle("forward %s -> %s (%s)", f->q->name, f->pg.name,
		    f->pg.queue);
}

static void
tell_systemd(struct fwd *f)
{
	struct counts c;
	char st[112];

	f->q->be->counts(f->q, &c);
	snprintf(st, sizeof(st), "%zu forwarded; %zu waiting%s%s",
	    f->forwarded, c.queued, c.paused ? "; paused" : "", f->down ?
	    "; database unreachable" : "");
	notify_status(st);
	notify_tick(mono_ms());
	title(f, &c);
}

/*
 * A pipeline of two batches: next is claimed and read while sent's
 * statement runs; then sent's result is taken, next's statement started,
 * and sent's jobs moved to done/ while it runs.  A job reaches done/ only
 * after the commit of the statement that inserted it.  Returns 0 or an
 * exit status.
 */
static int
forward_loop(struct fwd *f)
{
	struct batch *next = &f->b[0], *sent = NULL;
	int rc = 0;

	f->q->be->start(f->q);
	/* systemd (Type=notify): ready once the spool is ours and recovered. */
	notify_send("READY=1");
	say_buffer(true);
	while (!f->stop) {
		tell_systemd(f);
		f->q->be->due(f->q, mono_ms());
		if (fwd_gather(f, next) == -1) {
			rc = fwd_nomem(f);
			break;
		}
		if (sent != NULL && (rc = fwd_complete(f, sent)) != 0) {
			fwd_hand_back(f, sent);
			sent = NULL;
			break;
		}
		if (next->n > 0)
			fwd_launch(f, next);
		if (sent != NULL)
			fwd_batch_done(f, sent);
		if (next->n > 0) {
			sent = next;
			next = sent == &f->b[0] ? &f->b[1] : &f->b[0];
			fwd_wait_for(f, 0);		/* signals, the spool's events */
			continue;
		}
		sent = NULL;
		f->q->be->commit(f->q, false);
		say_flush();
		if (f->drain && f->q->be->drained(f->q))
			break;
		fwd_wait_for(f, f->q->be->next(f->q, mono_ms()) - mono_ms());
	}
	if (sent != NULL && fwd_complete(f, sent) == 0)
		fwd_batch_done(f, sent);
	else if (sent != NULL)
		fwd_hand_back(f, sent);
	fwd_hand_back(f, next);
	f->q->be->commit(f->q, false);
	say_buffer(false);
	notify_send("STOPPING=1");
	return rc == -1 ? 0 : rc;
}

static int
signals_open(void)
{
	signal(SIGPIPE, SIG_IGN);
	return sigfd_open(SIGTERM, SIGINT, SIGHUP, 0);
}

/* One option of forward; 0, or an exit status (said). */
static int
option(void *arg, int c, char *v)
{
	struct fwd *f = arg;
	const char *err;

	if (c == 'b') {
		f->batch = (int)strtonum(v, 1, FWD_BATCH_MAX, &err);
		return err == NULL ? 0 : usage_error("forward", "--batch %s: not "
		    "a number from 1 to %d", v, FWD_BATCH_MAX);
	}
	if (c == 'o') {
		f->origin = v;
		return id_valid(v) && strlen(v) <= 253 ? 0 :
		    usage_error("forward", "--origin %s: not a host name", v);
	}
	f->drain = true;
	return 0;
}

static int
parse(int argc, char **argv, struct fwd *f, const char **spool)
{
	static const struct option longopts[] = {
		{ "batch", required_argument, NULL, 'b' },
		{ "origin", required_argument, NULL, 'o' },
		{ "drain", no_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	int rc;

	if ((rc = pgcmd_options(argc, argv, "forward", longopts, option, f)) != 0)
		return rc;
	if (argc - optind != 1)
		return usage_error("forward", argc == optind ? "no spool given" :
		    "more than one spool given");
	*spool = argv[optind];
	return 0;
}

static int
fwd_free(struct fwd *f, int rc)
{
	if (f->q != NULL)
		f->q->be->close(f->q);
	if (f->sigfd != -1)
		close(f->sigfd);
	notify_close();
	pg_close(&f->pg);
	free(f->pg.uri);
	fwd_batch_free(&f->b[0]);
	fwd_batch_free(&f->b[1]);
	return rc;
}

/*
 * chute forward SPOOL URL [--queue NAME] [--batch N] [--origin NAME]
 * [--drain].  Runs until SIGTERM (0), or with --drain until the spool is
 * empty (0) or the database is unreachable (75, the jobs back in new/).
 */
int
pgcmd_forward(int argc, char **argv)
{
	static char host[256];
	/* No attempt is counted, and a job left claimed is sent again. */
	struct queue_conf qc = { .policy = { .max_attempts = INT_MAX },
	    .in_place = true, .recovered = "resent after forward's restart" };
	struct fwd f = { .batch = FWD_BATCH, .sigfd = -1, .origin = host };
	const char *spool = NULL;
	int rc;

	if (gethostname(host, sizeof(host) - 1) == -1 || host[0] == '\0')
		strlcpy(host, "localhost", sizeof(host));
	if ((rc = pgcmd_take(&argc, argv, "forward", &f.pg, true)) != 0)
		return rc;
	if ((rc = parse(argc, argv, &f, &spool)) != 0)
		return fwd_free(&f, rc);
	/* One statement, run for every batch: prepared. */
	f.pg.prepare = true;
	if (fwd_batch_alloc(&f.b[0], (size_t)f.batch) == -1 ||
	    fwd_batch_alloc(&f.b[1], (size_t)f.batch) == -1 ||
	    (f.sigfd = signals_open()) == -1) {
		fprintf(stderr, "chute: forward: %s\n", strerror(errno));
		return fwd_free(&f, EX_SOFTWARE);
	}
	notify_init();
	if ((rc = queue_spool_open(spool, false, &qc, &f.q)) != 0)
		return fwd_free(&f, rc);
	setproctitle("forward %s -> %s (%s)", f.q->name, f.pg.name, f.pg.queue);
	say("forward %s -> %s queue=%s origin=%s batch=%d", f.q->name,
	    f.pg.name, f.pg.queue, f.origin, f.batch);
	rc = forward_loop(&f);
	say("forward %s: stopping; %zu jobs forwarded", f.q->name, f.forwarded);
	return fwd_free(&f, rc);
}
