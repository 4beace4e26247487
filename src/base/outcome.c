/*
 * outcome.c: the outcome table.  No system calls, no clock, no globals:
 * the caller says how an attempt ended, this file says where the job goes
 * and what to write about it.  check_outcome.c tests every row.
 */
#include <sys/wait.h>
#include <stdio.h>
#include <string.h>

#include "base/chute.h"
#include "base/util.h"
#include "base/jobstate.h"
#include "base/outcome.h"

enum verdict { V_DONE, V_LATER, V_FAIL, V_REQUEUE };

void
outcome_status(int status, char *buf, size_t len)
{
	const char *sig;

	if (WIFEXITED(status))
		snprintf(buf, len, "exit=%d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status)) {
		sig = sigabbrev_np(WTERMSIG(status));
		snprintf(buf, len, "signal=%s", sig ? sig : "?");
	} else
		snprintf(buf, len, "status=%d", status);
}

/* " time=1.2s", or nothing when the caller did not time it. */
static void
took(msec_t elapsed, char *buf, size_t len)
{
	char d[24];

	buf[0] = '\0';
	if (elapsed < 0)
		return;
	dur_format(elapsed, d, sizeof(d));
	snprintf(buf, len, " time=%s", d);
}

/*
 * A process ended (a handler, or a persistent worker that died holding
 * the job).  Stopping it for a shutdown does not count the attempt, unless
 * it succeeded anyway; a timeout is a temporary failure.
 */
static enum verdict
ended(const struct attempt_end *e, struct outcome *out)
{
	char st[48], t[32];
	bool ok, later;

	outcome_status(e->status, st, sizeof(st));
	ok = WIFEXITED(e->status) && WEXITSTATUS(e->status) == 0;
	later = WIFEXITED(e->status) && WEXITSTATUS(e->status) == EX_TEMPFAIL;
	if (e->end == END_WORKER_DIED) {
		strlcat(st, " worker-died", sizeof(st));
		ok = false;
		later = true;
	}
	took(e->elapsed, t, sizeof(t));
	if (e->stop == STOP_SHUTDOWN && !ok) {
		snprintf(out->note, sizeof(out->note), "interrupted by shutdown "
		    "(%s; not counted)", st);
		snprintf(out->why, sizeof(out->why), "interrupted %s", st);
		return V_REQUEUE;
	}
	if (e->stop == STOP_TIMEOUT && !ok) {
		snprintf(out->note, sizeof(out->note), "timeout %s%s", st, t);
		snprintf(out->why, sizeof(out->why), "timeout %s", st);
		return V_LATER;
	}
	snprintf(out->note, sizeof(out->note), "%s%s", st, t);
	strlcpy(out->why, st, sizeof(out->why));
	if (e->stop == STOP_CANCEL)
		return V_FAIL;
	return ok ? V_DONE : later ? V_LATER : V_FAIL;
}

static bool
word(const char *line, const char *w)
{
	size_t n = strlen(w);

	return strncmp(line, w, n) == 0 && (line[n] == '\0' || line[n] == ' ');
}

/* "ok", "retry [REASON]", "fail [REASON]"; anything else is a failure. */
static enum verdict
replied(const struct attempt_end *e, struct outcome *out)
{
	char reason[160], t[32];

	vis_text(e->reply, reason, sizeof(reason));
	took(e->elapsed, t, sizeof(t));
	snprintf(out->note, sizeof(out->note), "reply=%s%s", reason, t);
	snprintf(out->why, sizeof(out->why), "reply=%.*s",
	    (int)strcspn(reason, " \\"), reason);
	if (word(e->reply, "ok"))
		return V_DONE;
	return word(e->reply, "retry") ? V_LATER : V_FAIL;
}

void
outcome_decide(const struct attempt_end *e, const struct retry_policy *p,
    uint32_t (*rnd)(uint32_t), struct outcome *out)
{
	enum verdict v;
	size_t n;

	memset(out, 0, sizeof(*out));
	out->counted = true;
	switch (e->end) {
	case END_EXIT:
	case END_WORKER_DIED:
		v = ended(e, out);
		break;
	case END_REPLY:
		v = replied(e, out);
		break;
	case END_SPAWN_FAILED:
		snprintf(out->note, sizeof(out->note), "spawn-failed: %s",
		    strerror(e->error));
		strlcpy(out->why, "spawn-failed", sizeof(out->why));
		v = V_LATER;
		break;
	case END_ABANDONED:
	default:
		/* Its start line counted it; only the limit decides. */
		strlcpy(out->why, "recovered from a dead owner", sizeof(out->why));
		strlcpy(out->note, "abandoned: its owner died", sizeof(out->note));
		if (e->attempt < p->max_attempts) {
			out->to = ST_NEW;
			return;
		}
		strlcat(out->note, "; attempts exhausted", sizeof(out->note));
		out->to = ST_FAILED;
		return;
	}
	switch (v) {
	case V_DONE:
		out->to = ST_DONE;
		break;
	case V_FAIL:
		out->to = ST_FAILED;
		break;
	case V_REQUEUE:
		out->to = ST_NEW;
		out->counted = false;
		break;
	case V_LATER:
		if (e->attempt >= p->max_attempts) {
			out->to = ST_FAILED;
			n = strlen(out->why);
			snprintf(out->why + n, sizeof(out->why) - n,
			    " attempts-exhausted");
			break;
		}
		out->to = ST_DEFER;
		out->delay = backoff_delay(p->backoff_base, p->backoff_cap,
		    e->attempt, rnd);
		break;
	}
}
