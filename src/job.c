/*
 * job.c: the life of one job in the owner: start its handler, decide its
 * outcome when the handler exits, stop it on timeout, cancel or shutdown,
 * and recover jobs a dead owner left in cur/.  Every move is asked of
 * state.c; this file only decides which one.
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chute.h"
#include "owner.h"

#define RECHECK_MS	1000
#define RETRY_MS	5000

enum outcome { OUT_DONE, OUT_TEMPFAIL, OUT_FAIL, OUT_REQUEUE };

/* An "@chute" line in the log of the job in slot s. */
static void __attribute__((format(printf, 2, 3)))
slot_note(struct slot *s, const char *fmt, ...)
{
	va_list ap;

	if (s->logfd == -1)
		return;
	va_start(ap, fmt);
	joblog_vnote(s->logfd, &s->logend, s->logshared, fmt, ap);
	va_end(ap);
}

static const char *
vis(const char *name)
{
	static char buf[4][NAME_MAX * 4 + 1];
	static int i;

	i = (i + 1) % 4;
	vis_name(name, buf[i], sizeof(buf[i]));
	return buf[i];
}

static const char *
file_type(mode_t m)
{
	if (S_ISLNK(m)) return "symlink";
	if (S_ISDIR(m)) return "directory";
	if (S_ISFIFO(m)) return "FIFO";
	if (S_ISSOCK(m)) return "socket";
	if (S_ISCHR(m)) return "character device";
	if (S_ISBLK(m)) return "block device";
	return "unknown type";
}

static void
free_slot(struct owner *ow, struct slot *s)
{
	if (s->fd != -1)
		close(s->fd);
	if (s->logfd != -1)
		close(s->logfd);
	memset(s, 0, sizeof(*s));
	s->fd = s->logfd = -1;
	ow->running--;
}

/* ---- finishing ---- */

static const char *arrow[ST_NDIRS] = {
	[ST_NEW] = "cur->new", [ST_DEFER] = "cur->defer",
	[ST_DONE] = "cur->done", [ST_FAILED] = "cur->failed",
};

/*
 * Move the finished job out of cur/.  ENOENT: a cancel (or an operator's
 * mv) got there first and wins.  Any other error keeps the slot and
 * retries later: the job must not be dropped, nor run twice meanwhile.
 */
static void
transition(struct owner *ow, struct slot *s, const char *why)
{
	int rc;

	if (s->to == ST_NEW)
		rc = state_requeue(&ow->sp, s->id);
	else
		rc = state_finish(&ow->sp, s->id, s->to, s->fd, s->when);
	if (rc == 0) {
		if (s->to == ST_DEFER) {
			char next[40];
			iso_time(s->when, next, sizeof(next));
			say("job=%s %s attempt=%d %s next=%s", vis(s->id),
			    arrow[s->to], s->attempt, why, next);
			ow->ndefer++;
			if (ow->next_defer == 0 || s->when < ow->next_defer)
				ow->next_defer = s->when;
		} else
			say("job=%s %s attempt=%d %s", vis(s->id), arrow[s->to],
			    s->attempt, why);
		free_slot(ow, s);
		return;
	}
	if (errno == ENOENT) {
		slot_note(s, "cancelled: moved out of cur/ while its handler "
		    "ran");
		say("job=%s cur->(moved away) attempt=%d %s cancelled",
		    vis(s->id), s->attempt, why);
		free_slot(ow, s);
		return;
	}
	say("job=%s %s: %s; will retry", vis(s->id), arrow[s->to],
	    strerror(errno));
	s->pid = -1;
	s->killat = mono_ms() + RETRY_MS;
}

/* Where an outcome sends the job, counting attempts against the limit. */
static void
settle(struct owner *ow, struct slot *s, enum outcome out, const char *why)
{
	const struct run_opts *o = ow->o;
	char buf[96];

	s->when = now_ms();
	switch (out) {
	case OUT_DONE:
		s->to = ST_DONE;
		break;
	case OUT_FAIL:
		s->to = ST_FAILED;
		break;
	case OUT_REQUEUE:
		s->to = ST_NEW;
		break;
	case OUT_TEMPFAIL:
		if (s->attempt >= o->max_attempts) {
			s->to = ST_FAILED;
			snprintf(buf, sizeof(buf), "%s attempts-exhausted", why);
			why = buf;
			break;
		}
		s->to = ST_DEFER;
		s->when += backoff_delay(o->backoff_base, o->backoff_cap,
		    s->attempt, arc4random_uniform);
		break;
	}
	transition(ow, s, why);
}

static void
describe(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exit=%d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "signal=%s", sigabbrev_np(WTERMSIG(status)) ?
		    sigabbrev_np(WTERMSIG(status)) : "?");
	else
		snprintf(buf, len, "status=%d", status);
}

/*
 * The handler exited: log its status, pick the outcome.  For a persistent
 * worker, dying before it answered is never success: its job's attempt
 * ends as a temporary failure.
 */
static void
finished(struct owner *ow, struct slot *s, int status)
{
	char st[48], el[24], why[64];
	bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	bool later = WIFEXITED(status) && WEXITSTATUS(status) == EX_TEMPFAIL;
	enum outcome out;

	if (ow->o->persistent) {
		ok = false;
		later = true;
	}
	describe(status, st, sizeof(st));
	if (ow->o->persistent)
		strlcat(st, " worker-died", sizeof(st));
	dur_format(mono_ms() - s->started, el, sizeof(el));
	if (s->stop == STOP_SHUTDOWN && !ok) {
		slot_note(s, "attempt=%d interrupted by shutdown "
		    "(%s; not counted)", s->attempt, st);
		snprintf(why, sizeof(why), "interrupted %s", st);
		out = OUT_REQUEUE;
	} else if (s->stop == STOP_TIMEOUT && !ok) {
		slot_note(s, "attempt=%d timeout %s time=%s",
		    s->attempt, st, el);
		snprintf(why, sizeof(why), "timeout %s", st);
		out = OUT_TEMPFAIL;
	} else {
		slot_note(s, "attempt=%d %s time=%s", s->attempt,
		    st, el);
		snprintf(why, sizeof(why), "%s", st);
		out = ok ? OUT_DONE : later ? OUT_TEMPFAIL : OUT_FAIL;
	}
	settle(ow, s, out, why);
}

/* Children we have not reaped yet: handlers and workers. */
static int
children(struct owner *ow)
{
	int n = 0;

	for (int i = 0; i < ow->o->jobs; i++) {
		n += ow->slots[i].pid > 0;
		n += ow->workers != NULL && ow->workers[i].pid > 0;
	}
	return n;
}

/*
 * Reap every child that has exited.  Once none of ours is left there is
 * nothing to wait for (saves a failing waitpid per job at -j 1); a child we
 * do not track would still raise SIGCHLD and be reaped then.
 */
void
owner_reap(struct owner *ow)
{
	int status;
	pid_t pid;

	while (children(ow) > 0 && (pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (int i = 0; i < ow->o->jobs; i++) {
			if (ow->slots[i].pid == pid)
				finished(ow, &ow->slots[i], status);
			if (ow->workers != NULL && ow->workers[i].pid == pid)
				worker_exited(ow, i, status);
		}
	}
}

/*
 * Worker i answered its job: "ok", "retry [REASON]" or "fail [REASON]".
 * A job being stopped (timeout, cancel, shutdown) ignores late answers:
 * its outcome comes from the worker's exit, as in the exec mode.
 */
void
owner_answered(struct owner *ow, int i, const char *line)
{
	struct slot *s = &ow->slots[i];
	char el[24], why[96], reason[160];
	enum outcome out;

	if (s->pid <= 0) {
		say("worker %d: reply with no job: %.60s; stopping it", i, line);
		kill(-ow->workers[i].pid, SIGKILL);
		return;
	}
	if (s->stop != STOP_NONE)
		return;
	vis_text(line, reason, sizeof(reason));
	if (strcmp(line, "ok") == 0 || strncmp(line, "ok ", 3) == 0)
		out = OUT_DONE;
	else if (strcmp(line, "retry") == 0 || strncmp(line, "retry ", 6) == 0)
		out = OUT_TEMPFAIL;
	else
		out = OUT_FAIL;		/* "fail", and anything unexpected */
	dur_format(mono_ms() - s->started, el, sizeof(el));
	slot_note(s, "attempt=%d reply=%s time=%s", s->attempt,
	    reason, el);
	snprintf(why, sizeof(why), "reply=%.*s", (int)strcspn(reason, " \\"),
	    reason);
	s->pid = 0;
	settle(ow, s, out, why);
}

/* ---- stopping ---- */

static void
stop_slot(struct owner *ow, struct slot *s, enum stop why, int sig)
{
	if (s->pid <= 0)
		return;
	if (s->stop == STOP_NONE || why == STOP_SHUTDOWN)
		s->stop = why;
	/* The whole process group: whatever the handler started goes too. */
	if (kill(-s->pid, sig) == -1)
		kill(s->pid, sig);
	s->killat = sig == SIGKILL ? 0 : mono_ms() + ow->o->grace;
}

/* IN_MOVED_FROM/IN_DELETE on cur/: a cancel, if it was one of ours. */
void
owner_job_left(struct owner *ow, const char *name)
{
	struct stat st;

	for (int i = 0; i < ow->o->jobs; i++) {
		struct slot *s = &ow->slots[i];

		if (s->pid <= 0 || s->stop != STOP_NONE ||
		    strcmp(s->id, name) != 0)
			continue;
		/* A stale event from an earlier life of this job in cur/. */
		if (fstatat(ow->sp.dir[ST_CUR], name, &st,
		    AT_SYMLINK_NOFOLLOW) == 0)
			return;
		say("job=%s left cur/ while running: cancelling, SIGTERM to "
		    "pid %ld", vis(name), (long)s->pid);
		stop_slot(ow, s, STOP_CANCEL, SIGTERM);
		return;
	}
}

/* SIGTERM/SIGINT: stop claiming, grace, then SIGKILL; twice: now. */
void
owner_shutdown(struct owner *ow, int sig)
{
	bool again = ow->stopping;

	ow->stopping = true;
	say("signal %s: %s", sigabbrev_np(sig), again ?
	    "killing handlers now" : "stopping; handlers get the grace period");
	for (int i = 0; i < ow->o->jobs; i++)
		stop_slot(ow, &ow->slots[i], STOP_SHUTDOWN,
		    again ? SIGKILL : SIGTERM);
	if (ow->workers != NULL)
		owner_close_workers(ow, again);
}

/*
 * No more jobs for the workers: EOF on their stdin asks them to exit;
 * any still running after the grace period (or at once, if now) gets
 * SIGKILL from owner_check_slots.
 */
void
owner_close_workers(struct owner *ow, bool now)
{
	if (!ow->closing)
		ow->close_deadline = mono_ms() + ow->o->grace;
	ow->closing = true;
	worker_close_all(ow);
	if (now)
		ow->close_deadline = mono_ms();
}

/* Timeouts, SIGKILL after the grace, and transitions to retry. */
void
owner_check_slots(struct owner *ow, msec_t mono)
{
	if (ow->workers != NULL && ow->closing && mono >= ow->close_deadline)
		for (int i = 0; i < ow->o->jobs; i++)
			if (ow->workers[i].pid > 0)
				kill(-ow->workers[i].pid, SIGKILL);
	if (ow->workers != NULL)
		worker_restart_due(ow, mono);
	for (int i = 0; i < ow->o->jobs; i++) {
		struct slot *s = &ow->slots[i];

		if (s->pid == -1 && s->killat <= mono) {
			transition(ow, s, "retried");
			continue;
		}
		if (s->pid <= 0)
			continue;
		if (s->killat != 0 && s->killat <= mono) {
			say("job=%s pid %ld still running after the grace "
			    "period: SIGKILL", vis(s->id), (long)s->pid);
			stop_slot(ow, s, s->stop, SIGKILL);
		} else if (s->stop == STOP_NONE && s->deadline != 0 &&
		    s->deadline <= mono) {
			say("job=%s timed out: SIGTERM to pid %ld", vis(s->id),
			    (long)s->pid);
			stop_slot(ow, s, STOP_TIMEOUT, SIGTERM);
		}
	}
}

msec_t
owner_slots_deadline(struct owner *ow)
{
	msec_t t = INT64_MAX;

	for (int i = 0; ow->workers != NULL && i < ow->o->jobs; i++) {
		if (ow->closing && ow->workers[i].pid > 0 && ow->close_deadline < t)
			t = ow->close_deadline;
		if (!ow->closing && !ow->stopping && ow->workers[i].pid == 0 &&
		    ow->workers[i].restart_at < t)
			t = ow->workers[i].restart_at;
	}

	for (int i = 0; i < ow->o->jobs; i++) {
		struct slot *s = &ow->slots[i];

		if (s->pid == 0)
			continue;
		if (s->killat != 0 && s->killat < t)
			t = s->killat;
		if (s->pid > 0 && s->stop == STOP_NONE && s->deadline != 0 &&
		    s->deadline < t)
			t = s->deadline;
	}
	return t;
}

/* ---- starting ---- */

/*
 * Is the name used by a job in another state directory?  cur/ is not
 * looked at: the claim's RENAME_NOREPLACE finds that one for free.
 */
static int
taken_elsewhere(struct owner *ow, const char *name)
{
	static const int others[] = { ST_DEFER, ST_DONE, ST_FAILED };
	struct stat st;

	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		if (fstatat(ow->sp.dir[others[i]], name, &st,
		    AT_SYMLINK_NOFOLLOW) == 0)
			return others[i];
	return ST_NONE;
}

/*
 * A dropped file whose name is not a valid ID, or is already some other
 * job's, gets a derived ID; nothing is ever overwritten.
 */
static void
rename_dropped(struct owner *ow, const char *name, unsigned flags, int other)
{
	char id[NAME_MAX + 1], reason[64];

	if (other != ST_NONE)
		snprintf(reason, sizeof(reason), "name taken by a job in %s/",
		    state_names[other]);
	else
		strlcpy(reason, "not a valid job ID", sizeof(reason));
	if (state_rename_new(&ow->sp, name, id, sizeof(id)) == -1) {
		if (errno != ENOENT) {
			say("job=%s cannot rename (%s): %s; will retry",
			    vis(name), reason, strerror(errno));
			queue_add(ow->waiting, name, mono_ms() + RETRY_MS, flags);
		}
		return;
	}
	say("job=%s renamed from=%s (%s)", vis(id), vis(name), reason);
	joblog_note(&ow->sp, id, "renamed from %s (%s)", vis(name), reason);
	owner_admit(ow, id, flags | RF_MOVED);
}

/* new -> failed without ever running it (nor following a symlink). */
static void
reject(struct owner *ow, const char *name, const struct stat *st,
    enum ready r)
{
	char why[96];

	if (r == READY_DENIED)
		strlcpy(why, "unreadable by the owner (permission denied)",
		    sizeof(why));
	else if (r == READY_LINKED)
		snprintf(why, sizeof(why), "has other hard links (st_nlink=%lu)",
		    (unsigned long)st->st_nlink);
	else
		snprintf(why, sizeof(why), "not a regular file (%s)",
		    file_type(st->st_mode));
	if (state_reject(&ow->sp, name) == -1) {
		if (errno != ENOENT) {
			say("job=%s new->failed: %s; will retry", vis(name),
			    strerror(errno));
			queue_add(ow->waiting, name, mono_ms() + RETRY_MS, 0);
		}
		return;
	}
	joblog_note(&ow->sp, name, "rejected: %s", why);
	say("job=%s new->failed rejected: %s", vis(name), why);
}

/* Not ready yet: look again at the given time (or on its next event). */
static void
later(struct owner *ow, const char *name, unsigned flags, enum ready r,
    const struct stat *st)
{
	msec_t at = mono_ms() + RECHECK_MS;

	if (r == READY_SETTLE) {
		msec_t age = now_ms() - ((msec_t)st->st_mtim.tv_sec * 1000 +
		    st->st_mtim.tv_nsec / 1000000);
		at = mono_ms() + (SETTLE_MS - age > 0 ? SETTLE_MS - age : 0) + 1;
	} else if (r == READY_ERR) {
		say("job=%s: %s; will retry", vis(name), strerror(errno));
		at = mono_ms() + RETRY_MS;
	}
	queue_add(ow->waiting, name, at, flags);
}

/* A free slot; with --persistent, one whose worker is up and idle. */
static struct slot *
free_slot_get(struct owner *ow)
{
	for (int i = 0; i < ow->o->jobs; i++) {
		if (ow->slots[i].pid != 0)
			continue;
		if (ow->workers != NULL && (ow->workers[i].pid <= 0 ||
		    ow->workers[i].in == -1))
			continue;
		return &ow->slots[i];
	}
	return NULL;
}

/* Claimed, with the job file and its log open: log the attempt and spawn. */
static void
launch(struct owner *ow, struct slot *s)
{
	int logerr = errno;	/* open_log's, when it failed */

	slot_note(s, "attempt=%d start", s->attempt);
	s->started = mono_ms();
	s->deadline = ow->o->timeout ? s->started + ow->o->timeout : 0;
	say("job=%s new->cur attempt=%d", vis(s->id), s->attempt);
	if (s->logfd != -1 && ow->workers != NULL)
		s->pid = worker_send(ow, (int)(s - ow->slots));
	else if (s->logfd != -1) {
		s->pid = spawn_handler(&ow->sp, ow->o, s->id, s->attempt,
		    s->fd, s->logfd);
		s->logshared = true;	/* the handler's output goes there too */
	}
	if (s->logfd == -1 || s->pid == -1) {
		char why[96];
		snprintf(why, sizeof(why), "spawn-failed: %s",
		    strerror(s->logfd == -1 ? logerr : errno));
		slot_note(s, "attempt=%d %s", s->attempt, why);
		s->pid = -1;
		settle(ow, s, OUT_TEMPFAIL, "spawn-failed");
	}
}

/*
 * Open log/ID (creating it) and read the attempts so far from it.  A log
 * that is not a regular file is never written to: the job cannot start.
 */
static int
open_log(struct owner *ow, struct slot *s)
{
	struct joblog_info ji;
	int saved;

	s->attempt = 1;
	s->logend = -1;
	if ((s->logfd = joblog_open(&ow->sp, s->id)) == -1) {
		saved = errno;
		say("job=%s log/: %s", vis(s->id), strerror(errno));
		errno = saved;
		return -1;
	}
	if (joblog_fread(s->logfd, &ji, &s->logend) == -1) {
		saved = errno;
		say("job=%s log/: %s", vis(s->id), errno == EINVAL ?
		    "not a regular file" : strerror(errno));
		close(s->logfd);
		s->logfd = -1;
		errno = saved;
		return -1;
	}
	s->attempt = ji.attempts + 1;
	return 0;
}

static void
start(struct owner *ow, const char *name, unsigned flags)
{
	struct stat st;
	struct slot *s;
	enum ready r;
	int fd, other = ST_NONE;

	if (!id_valid(name) || (other = taken_elsewhere(ow, name)) != ST_NONE) {
		rename_dropped(ow, name, flags, id_valid(name) ? other : ST_NONE);
		return;
	}
	r = ready_check(&ow->sp, name, flags, &fd, &st);
	if (r == READY_GONE) {
		say("job=%s left new/ before its claim (cancelled or moved "
		    "away)", vis(name));
		return;
	}
	if (r == READY_NOTREG || r == READY_DENIED || r == READY_LINKED) {
		reject(ow, name, &st, r);
		return;
	}
	if (r != READY_YES) {
		later(ow, name, flags, r, &st);
		return;
	}
	if (state_claim(&ow->sp, name) == -1) {
		int saved = errno;

		close(fd);
		if (saved == EEXIST)
			rename_dropped(ow, name, flags, ST_CUR);
		else if (saved != ENOENT) {
			errno = saved;
			later(ow, name, flags, READY_ERR, &st);
		}
		return;
	}
	s = free_slot_get(ow);
	ow->running++;
	strlcpy(s->id, name, sizeof(s->id));
	s->fd = fd;
	open_log(ow, s);
	launch(ow, s);
}

/* Start the oldest ready jobs while there are free slots. */
void
owner_dispatch(struct owner *ow)
{
	char name[NAME_MAX + 1];
	unsigned flags;

	while (ow->running < ow->o->jobs && free_slot_get(ow) != NULL) {
		owner_refill(ow);
		if (!queue_pop(ow->ready, name, sizeof(name), &flags))
			break;
		start(ow, name, flags);
	}
}
