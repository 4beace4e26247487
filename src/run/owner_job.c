/*
 * owner_job.c: the life of one job in the owner.  The queue claims it, the
 * supervisor runs its handler, outcome.c says what the ending means, and
 * the queue records it; an outcome the queue could not record yet keeps
 * its slot and is tried again, so the job is neither dropped nor run
 * twice meanwhile.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/chute.h"
#include "base/util.h"
#include "store/joblog.h"
#include "store/spool.h"
#include "run/owner.h"

/* An "@chute" line in the log of job j. */
static void __attribute__((format(printf, 2, 3)))
note(struct ojob *j, const char *fmt, ...)
{
	va_list ap;

	if (j->c.logfd == -1 && !j->c.logmem)
		return;
	va_start(ap, fmt);
	if (j->c.logmem)
		joblog_vmem(&j->c.logbuf, &j->c.loglen, fmt, ap);
	else
		joblog_vnote(j->c.logfd, &j->c.logend, j->c.logshared, fmt, ap);
	va_end(ap);
}

static void
release(struct owner *ow, int i)
{
	ow->q->be->release(ow->q, &ow->jobs[i].c);
	ow->jobs[i].busy = false;
	ow->jobs[i].retry_at = 0;
	sup_release(ow->sup, i);
	ow->running--;
}

/*
 * Ask the queue to record slot i's outcome.  Refused (a cancel or an
 * operator got there first, or the claim was lost): that decision
 * stands.  Any other error keeps the slot and tries again later.
 */
static void
record(struct owner *ow, int i, const char *why)
{
	struct ojob *j = &ow->jobs[i];
	const char *to = state_names[j->out.to];
	char next[40];

	if (ow->q->be->record(ow->q, &j->c, &j->out, j->when) == 0) {
		ow->finished += state_terminal(j->out.to);
		ow->failed += j->out.to == ST_FAILED;
		if (ow->q->says_outcomes)
			;	/* after its commit, by the queue */
		else if (j->out.to == ST_DEFER) {
			iso_time(j->when, next, sizeof(next));
			say("job=%s cur->%s attempt=%d %s next=%s", vis_id(j->c.id),
			    to, j->c.attempt, why, next);
		} else
			say("job=%s cur->%s attempt=%d %s", vis_id(j->c.id), to,
			    j->c.attempt, why);
		release(ow, i);
		return;
	}
	if (errno == ENOENT || errno == ESTALE) {
		say("job=%s cur->(%s) attempt=%d %s cancelled", vis_id(j->c.id),
		    errno == ENOENT ? "moved away" : "lease lost", j->c.attempt,
		    why);
		release(ow, i);
		return;
	}
	say_warn("job=%s cur->%s: %s; will retry", vis_id(j->c.id), to, strerror(errno));
	j->retry_at = mono_ms() + RETRY_MS;
}

void
owner_ended(void *arg, int i, const struct attempt_end *e)
{
	struct owner *ow = arg;
	struct ojob *j = &ow->jobs[i];

	outcome_decide(e, &ow->policy, arc4random_uniform, &j->out);
	note(j, "attempt=%d %s", j->c.attempt, j->out.note);
	j->when = now_ms() + j->out.delay;
	record(ow, i, j->out.why);
}

void
owner_retry_due(struct owner *ow, msec_t mono)
{
	for (int i = 0; i < ow->o->jobs; i++)
		if (ow->jobs[i].busy && ow->jobs[i].retry_at != 0 &&
		    ow->jobs[i].retry_at <= mono)
			record(ow, i, "retried");
}

void
owner_give_up(struct owner *ow)
{
	for (int i = 0; i < ow->o->jobs; i++) {
		struct ojob *j = &ow->jobs[i];

		if (!j->busy || j->retry_at == 0)
			continue;
		record(ow, i, "retried at shutdown");
		if (!j->busy || j->retry_at == 0)
			continue;
		say_err("job=%s outcome not recorded at shutdown; the next owner "
		    "recovers it", vis_id(j->c.id));
		release(ow, i);
	}
}

msec_t
owner_retry_deadline(struct owner *ow)
{
	msec_t t = INT64_MAX;

	for (int i = 0; i < ow->o->jobs; i++)
		if (ow->jobs[i].busy && ow->jobs[i].retry_at != 0 &&
		    ow->jobs[i].retry_at < t)
			t = ow->jobs[i].retry_at;
	return t;
}

void
owner_cancelled(void *arg, const char *id, const char *why, bool now)
{
	struct owner *ow = arg;
	pid_t pid = sup_cancel(ow->sup, id, now);

	if (pid > 0)
		say("job=%s %s: cancelling, %s to pid %ld", vis_id(id), why,
		    now ? "SIGKILL" : "SIGTERM", (long)pid);
}

/* Claimed into slot i: log the attempt and hand it to the supervisor. */
static void
launch(struct owner *ow, int i)
{
	struct ojob *j = &ow->jobs[i];
	struct sup_job sj = { .id = j->c.id, .path = j->c.path, .fd = j->c.fd,
	    .logfd = j->c.logfd, .attempt = j->c.attempt,
	    .payload = j->c.payload, .size = j->c.size };

	j->busy = true;
	ow->running++;
	note(j, "attempt=%d start", j->c.attempt);
	say("job=%s new->cur attempt=%d", vis_id(j->c.id), j->c.attempt);
	if (j->c.logfd == -1 && !j->c.logmem) {
		sup_not_started(ow->sup, i, j->c.attempt, j->c.logerr);
		return;
	}
	/* Without workers the handler's output goes to the log too. */
	j->c.logshared = !ow->o->persistent;
	sup_start(ow->sup, i, &sj);
}

/* Claim jobs for the idle slots, oldest first, and start them. */
void
owner_dispatch(struct owner *ow)
{
	int slot[64], n, got;

	do {
		n = sup_idle_slots(ow->sup, slot, sizeof(slot) / sizeof(slot[0]));
		for (int k = 0; k < n; k++)
			ow->batch[k] = &ow->jobs[slot[k]].c;
		got = n > 0 ? ow->q->be->claim(ow->q, ow->batch, n) : 0;
		for (int k = 0; k < got; k++)
			launch(ow, slot[k]);
	} while (got > 0 && got == n);
}
