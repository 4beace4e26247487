/*
 * top_view.c: `chute top`'s screen (top_view.h): the model of queue/view.h
 * drawn with ncurses, redrawn every second and after each refresh its
 * source asks for, in one poll(2) loop over the terminal, a signalfd and
 * the source's descriptor; keys to cancel and retry; the same lines as a
 * one-shot summary when stdout is not a terminal.  The only code that
 * uses ncurses, linked into chute and chute-pgsql.
 */
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/chute.h"
#include "base/sched.h"
#include "base/sigfd.h"
#include "base/util.h"
#include "cli/cmd.h"
#include "store/spool.h"
#include "queue/view.h"
#include "top/top_view.h"

/* curses.h names a type WINDOW; chute.h's, the owner's limit, is not used here. */
#undef WINDOW
#include <curses.h>

#define MIN_COLS	40
#define MIN_LINES	12
#define VIS_MAX		(NAME_MAX * 4 + 1)
#define WORKER_W	20	/* a running job's worker, in a column this wide */

struct view {
	struct top_source *src;
	struct top	*t;
	int		 sigfd;
	int		 sel;		/* the selected row: running, then failed */
	char		 sel_id[NAME_MAX + 1];	/* ... and its job, kept across refreshes */
	int		 nrun_shown, nfail_shown, nwork_shown, nkey_shown;
	char		 msg[512];	/* the last key's result */
	bool		 quit;
};

/* ---- lines shared by the summary and the view ---- */

/* Beside the title: paused or not, and who works: a spool's owner, a queue's workers. */
static void
line_who(const struct top *t, char *buf, size_t len)
{
	const char *p = t->paused ? "paused   " : "";

	if (t->claims)
		snprintf(buf, len, "%s%d worker%s", p, t->workers_alive,
		    t->workers_alive == 1 ? "" : "s");
	else if (t->unknown_owner)
		snprintf(buf, len, "%sowner unknown (lock held)", p);
	else if (t->nworker == 0)
		snprintf(buf, len, "%sno owner", p);
	else
		snprintf(buf, len, "%sowner %ld", p, t->worker[0].pid);
}

static void
line_counts(const struct top *t, char *buf, size_t len)
{
	char n[32];
	size_t at = 0;

	buf[0] = '\0';
	for (int st = ST_FIRST; st < ST_END && at < len; st++) {
		top_count(t, st, n, sizeof(n));
		at += (size_t)snprintf(buf + at, len - at, "%s%s %s",
		    st != ST_FIRST ? "   " : "", state_names[st], n);
	}
}

/* The last minute, or the seconds of it a bounded read counted in full. */
static void
line_rate(const struct top *t, char *buf, size_t len)
{
	unsigned done, failed;
	int secs = top_rate(t, now_ms(), &done, &failed);

	if (secs >= TOP_WINDOW)
		snprintf(buf, len, "last minute: %u done, %u failed, %.2f/s",
		    done, failed, (done + failed) / (double)TOP_WINDOW);
	else
		snprintf(buf, len, "last %ds: %u done, %u failed, ~%.2f/s",
		    secs, done, failed, secs > 0 ? (done + failed) /
		    (double)secs : 0.0);
}

/*
 * The schedules' next ticks, by name: "next tick: hb in 4s, nightly in
 * 8h0m0s (2 more)"; "due" for a tick no scheduler has made yet.  "" when
 * there is no schedule.
 */
static void
line_scheds(const struct top *t, msec_t now, char *buf, size_t len)
{
	size_t o;
	char in[32];

	buf[0] = '\0';
	if (t->nsched == 0)
		return;
	o = (size_t)snprintf(buf, len, "next tick:");
	for (size_t i = 0; i < t->nsched && o < len; i++) {
		if (t->sched[i].next > now)
			top_age(t->sched[i].next - now + 999, in + 3,
			    sizeof(in) - 3);
		memcpy(in, "in ", 3);
		o += (size_t)snprintf(buf + o, len - o, "%s %s %s",
		    i > 0 ? "," : "", t->sched[i].name,
		    t->sched[i].next > now ? in : "due");
	}
	if (o < len && t->scheds_all > (long long)t->nsched)
		snprintf(buf + o, len - o, " (%lld more)", t->scheds_all -
		    (long long)t->nsched);
}

/* "ELAPSED  ID", or on a queue "ELAPSED  WORKER  LEASE  ID". */
static void
line_running(const struct top *t, const struct top_job *j, msec_t now,
    char *buf, size_t len)
{
	char age[32] = "-", lease[32] = "gone", vis[VIS_MAX], w[WORKER_W * 4];

	if (j->since > 0)
		top_age(now - j->since, age, sizeof(age));
	vis_name(j->id, vis, sizeof(vis));
	if (!t->claims) {
		snprintf(buf, len, "%8s  %s", age, vis);
		return;
	}
	if (j->lease_until > now)
		top_age(j->lease_until - now + 999, lease, sizeof(lease));
	vis_name(j->worker, w, sizeof(w));
	snprintf(buf, len, "%8s  %-*.*s %6s  %s", age, WORKER_W, WORKER_W, w,
	    lease, vis);
}

/* "AGE  ATT  REASON  ID", the reason in a column of rw. */
static void
line_failed(const struct top_job *j, msec_t now, int rw, char *buf,
    size_t len)
{
	char age[32], vis[VIS_MAX], why[sizeof(j->reason) * 4];

	top_age(now - j->since, age, sizeof(age));
	vis_name(j->id, vis, sizeof(vis));
	vis_text(j->reason, why, sizeof(why));
	snprintf(buf, len, "%8s  %3d  %-*.*s  %s", age, j->attempts, rw, rw,
	    why, vis);
}

/* "NAME  STATE  RUNNING[/SLOTS]  SEEN  UP  VERSION"; a state as `chute workers` says it. */
static void
line_worker(const struct top_worker *w, msec_t now, char *buf, size_t len)
{
	char name[WORKER_W * 4 + 8], run[32], seen[32] = "-", up[32] = "-";
	char ver[sizeof(w->version) * 4];

	vis_name(w->name, name, sizeof(name));
	vis_text(w->version, ver, sizeof(ver));
	if (w->slots >= 0)
		snprintf(run, sizeof(run), "%d/%d", w->running, w->slots);
	else
		snprintf(run, sizeof(run), "%d", w->running);
	if (w->seen > 0)
		top_age(now - w->seen, seen, sizeof(seen));
	if (w->started > 0)
		top_age(now - w->started, up, sizeof(up));
	snprintf(buf, len, "%-24s %-7s %7s %8s %8s  %s", name, w->alive ?
	    "alive" : w->stopped ? "stopped" : "gone", run, seen, up,
	    ver[0] ? ver : "-");
}

/* The workers' title and columns; "WORKER (32 of 90)" when not all are kept. */
static void
head_workers(const struct top *t, int shown, char *buf, size_t len)
{
	char w[64] = "OWNER";

	if (t->claims && t->workers_all > shown)
		snprintf(w, sizeof(w), "WORKER (%d of %d)", shown,
		    t->workers_all);
	else if (t->claims)
		snprintf(w, sizeof(w), "WORKER");
	snprintf(buf, len, "%-24s %-7s %7s %8s %8s  %s", w, "STATE", "RUNNING",
	    "SEEN", "UP", "VERSION");
}

/* The keys' title and columns; "KEYS 16 of 250" when not all are kept. */
static void
head_keys(const struct top *t, int shown, char *buf, size_t len)
{
	char n[64];

	if (t->keys_all > shown)
		snprintf(n, sizeof(n), "%d of %lld (the most waiting)", shown,
		    t->keys_all);
	else
		snprintf(n, sizeof(n), "%lld", t->keys_all);
	snprintf(buf, len, "%-24s %7s %7s %7s %10s  KEYS %s", "KEY", "RUNNING",
	    "WAITING", "MAX", "RATE", n);
}

/* A key in use: its jobs running and waiting, and the limit on it. */
static void
line_key(const struct top_key *k, char *buf, size_t len)
{
	char max[24] = "-", rate[48];

	if (k->max > 0)
		snprintf(max, sizeof(max), "%ld", k->max);
	limit_format_rate(k->rate_n, k->rate_ms, rate, sizeof(rate));
	snprintf(buf, len, "%-24s %7lld %7lld %7s %10s", k->key, k->running,
	    k->waiting, max, rate);
}

/* ---- the one-shot summary ---- */

static void
print_lists(const struct top *t, msec_t now, char *buf, size_t len)
{
	char n[32];

	top_count(t, ST_CUR, n, sizeof(n));
	printf("running %s%s\n", n, (long long)t->nrun < t->count[ST_CUR] ?
	    " (the longest-running shown)" : "");
	for (size_t i = 0; i < t->nrun; i++) {
		line_running(t, &t->run[i], now, buf, len);
		printf("%s\n", buf);
	}
	top_count(t, ST_FAILED, n, sizeof(n));
	printf("failed %s%s\n", n, (long long)t->nfail < t->count[ST_FAILED] ?
	    " (the newest shown)" : "");
	for (size_t i = 0; i < t->nfail; i++) {
		line_failed(&t->fail[i], now, 24, buf, len);
		printf("%s\n", buf);
	}
	head_workers(t, (int)t->nworker, buf, len);
	printf("%s\n", buf);
	for (size_t i = 0; i < t->nworker; i++) {
		line_worker(&t->worker[i], now, buf, len);
		printf("%s\n", buf);
	}
	if (t->nkey == 0)
		return;
	head_keys(t, (int)t->nkey, buf, len);
	printf("%s\n", buf);
	for (size_t i = 0; i < t->nkey; i++) {
		line_key(&t->key[i], buf, len);
		printf("%s\n", buf);
	}
}

int
top_view_print(const struct top *t)
{
	char buf[2048], title[sizeof(t->title) * 4];

	vis_text(t->title, title, sizeof(title));
	line_who(t, buf, sizeof(buf));
	printf("chute top %s   %s\n", title, buf);
	if (t->paused && t->paused_by[0]) {
		vis_text(t->paused_by, buf, sizeof(buf));
		printf("paused by %s\n", buf);
	}
	line_counts(t, buf, sizeof(buf));
	printf("%s\n", buf);
	line_rate(t, buf, sizeof(buf));
	printf("%s\n", buf);
	line_scheds(t, now_ms(), buf, sizeof(buf));
	if (buf[0] != '\0')
		printf("%s\n", buf);
	print_lists(t, now_ms(), buf, sizeof(buf));
	return cmd_flush_stdout(0);
}

/* ---- the selection ---- */

/* The selected job, in its list; NULL if none is selected. */
static const struct top_job *
selected(const struct view *v, bool *running)
{
	*running = v->sel < v->nrun_shown;
	if (v->sel < 0)
		return NULL;
	if (*running)
		return &v->t->run[v->sel];
	if (v->sel - v->nrun_shown < v->nfail_shown)
		return &v->t->fail[v->sel - v->nrun_shown];
	return NULL;
}

static void
select_row(struct view *v, int row)
{
	const struct top_job *j;
	int rows = v->nrun_shown + v->nfail_shown;
	bool running;

	if (rows == 0) {
		v->sel = -1;
		v->sel_id[0] = '\0';
		return;
	}
	v->sel = row < 0 ? 0 : row >= rows ? rows - 1 : row;
	j = selected(v, &running);
	strlcpy(v->sel_id, j != NULL ? j->id : "", sizeof(v->sel_id));
}

/*
 * Keep the selection on its job while the lists change under it; when the
 * job has left them, on the job now in its row.
 */
static void
follow_selection(struct view *v)
{
	for (int i = 0; i < v->nrun_shown; i++)
		if (strcmp(v->t->run[i].id, v->sel_id) == 0) {
			v->sel = i;
			return;
		}
	for (int i = 0; i < v->nfail_shown; i++)
		if (strcmp(v->t->fail[i].id, v->sel_id) == 0) {
			v->sel = v->nrun_shown + i;
			return;
		}
	if (v->sel >= 0)
		select_row(v, v->sel);
}

/* ---- drawing ---- */

/* Text at row y from column x, cut at the right edge. */
static void
put(int y, int x, const char *s)
{
	if (y >= 0 && y < LINES && x < COLS)
		mvaddnstr(y, x, s, COLS - x);
}

/* "chute top TITLE" on the left, who works and the clock on the right. */
static void
draw_title(const struct view *v)
{
	char right[160], who[128], clock[16], vis[sizeof(v->t->title) * 4];
	const char *title = vis;
	time_t now = time(NULL);
	struct tm tm;
	int room;

	vis_text(v->t->title, vis, sizeof(vis));
	line_who(v->t, who, sizeof(who));
	strftime(clock, sizeof(clock), "%H:%M:%S", localtime_r(&now, &tm));
	snprintf(right, sizeof(right), "%s   %s", who, clock);
	room = COLS - (int)strlen(right) - (int)strlen("chute top ") - 2;
	/* A long title keeps its end, where the spool's (or queue's) name is. */
	if (room > 3 && (int)strlen(title) > room)
		title += strlen(title) - room;
	attron(A_BOLD);
	put(0, 0, "chute top ");
	attroff(A_BOLD);
	addnstr(title, room > 0 ? room : 0);
	put(0, COLS - (int)strlen(right), right);
}

/*
 * How many rows each list gets of those between the head and the foot:
 * all it has (or one, for "(none)") if they fit; else one row each in
 * turn, running jobs, failures, workers, keys, until the room is used.
 * The keys' list is there only when a key is in use.
 */
static void
layout(const struct top *t, int rows[4])
{
	int nl = t->nkey > 0 ? 4 : 3;
	int space = LINES - 6 - nl;	/* 4 head, the list titles, 2 foot */
	int want[4] = { (int)t->nrun, (int)t->nfail, (int)t->nworker,
	    (int)t->nkey };
	bool more = true;

	for (int i = 0; i < 4; i++) {
		want[i] = want[i] > 0 ? want[i] : 1;
		rows[i] = 0;
	}
	while (more && space > 0) {
		more = false;
		for (int i = 0; i < nl && space > 0; i++)
			if (rows[i] < want[i]) {
				rows[i]++;
				space--;
				more = true;
			}
	}
}

/* How many of each list are on screen. */
static void
shown(struct view *v)
{
	int rows[4];

	v->nrun_shown = v->nfail_shown = v->nwork_shown = v->nkey_shown = 0;
	if (COLS < MIN_COLS || LINES < MIN_LINES)
		return;
	layout(v->t, rows);
	v->nrun_shown = (int)v->t->nrun < rows[0] ? (int)v->t->nrun : rows[0];
	v->nfail_shown = (int)v->t->nfail < rows[1] ? (int)v->t->nfail : rows[1];
	v->nwork_shown = (int)v->t->nworker < rows[2] ? (int)v->t->nworker :
	    rows[2];
	v->nkey_shown = (int)v->t->nkey < rows[3] ? (int)v->t->nkey : rows[3];
}

/* A list's title, which is also its column header, in bold. */
static void
draw_title_row(int y, const char *text)
{
	attron(A_BOLD);
	put(y, 0, text);
	attroff(A_BOLD);
}

/* One list row; the selected one in reverse video across the screen. */
static void
draw_row(const struct view *v, int y, int row, const char *text)
{
	if (row != v->sel) {
		put(y, 0, text);
		return;
	}
	attron(A_REVERSE);
	put(y, 0, text);
	for (int x = getcurx(stdscr); x > 0 && x < COLS; x++)
		addch(' ');
	attroff(A_REVERSE);
}

/* Returns the row after the list. */
static int
draw_running(struct view *v, int y, msec_t now)
{
	char buf[VIS_MAX + 160], n[32];

	top_count(v->t, ST_CUR, n, sizeof(n));
	if (v->t->claims)
		snprintf(buf, sizeof(buf), "%8s  %-*s %6s  RUNNING %s%s",
		    "ELAPSED", WORKER_W, "WORKER", "LEASE", n,
		    v->t->count[ST_CUR] > v->nrun_shown ? " (the longest-running)" :
		    "");
	else
		snprintf(buf, sizeof(buf), "%8s  RUNNING %s%s", "ELAPSED", n,
		    v->t->count[ST_CUR] > v->nrun_shown ? " (the longest-running)" :
		    "");
	draw_title_row(y++, buf);
	if (v->t->nrun == 0)
		put(y++, 10, "(none)");
	for (int i = 0; i < v->nrun_shown; i++) {
		line_running(v->t, &v->t->run[i], now, buf, sizeof(buf));
		draw_row(v, y++, i, buf);
	}
	return y;
}

/* The reason's column: 24 of 80 columns, more on a wider screen. */
static int
reason_width(void)
{
	int w = COLS / 2 - 16;

	return w < 12 ? 12 : w > 48 ? 48 : w;
}

static int
draw_failed(struct view *v, int y, msec_t now)
{
	char buf[VIS_MAX + 512], n[32];
	int rw = reason_width();

	top_count(v->t, ST_FAILED, n, sizeof(n));
	snprintf(buf, sizeof(buf), "%8s  %3s  %-*s  FAILED %s%s", "AGE",
	    "ATT", rw, "REASON", n, v->t->count[ST_FAILED] > v->nfail_shown ?
	    " (the newest)" : "");
	draw_title_row(y++, buf);
	if (v->t->nfail == 0)
		put(y++, 10, "(none)");
	for (int i = 0; i < v->nfail_shown; i++) {
		line_failed(&v->t->fail[i], now, rw, buf, sizeof(buf));
		draw_row(v, y++, v->nrun_shown + i, buf);
	}
	return y;
}

static void
draw_keys(struct view *v, int y)
{
	char buf[512];

	if (v->t->nkey == 0)
		return;
	head_keys(v->t, v->nkey_shown, buf, sizeof(buf));
	draw_title_row(y++, buf);
	for (int i = 0; i < v->nkey_shown; i++) {
		line_key(&v->t->key[i], buf, sizeof(buf));
		put(y++, 0, buf);
	}
}

/* Returns the row after the list. */
static int
draw_workers(struct view *v, int y, msec_t now)
{
	char buf[512];

	head_workers(v->t, v->nwork_shown, buf, sizeof(buf));
	draw_title_row(y++, buf);
	if (v->t->nworker == 0)
		put(y++, 10, "(none)");
	for (int i = 0; i < v->nwork_shown; i++) {
		line_worker(&v->t->worker[i], now, buf, sizeof(buf));
		put(y++, 0, buf);
	}
	return y;
}

/* Row 3: why the view may be behind, or who paused the queue. */
static void
draw_news(const struct view *v)
{
	char buf[sizeof(v->t->paused_by) * 4 + 16];

	if (v->t->trouble[0]) {
		vis_text(v->t->trouble, buf, sizeof(buf));
		attron(A_BOLD);
		put(3, 0, buf);
		attroff(A_BOLD);
	} else if (v->t->paused) {
		vis_text(v->t->paused_by, buf + 10, sizeof(buf) - 10);
		memcpy(buf, "paused by ", 10);
		put(3, 0, buf[10] ? buf : "paused: no new claims");
	}
}

static void
draw(struct view *v)
{
	char buf[512];
	msec_t now = now_ms();
	int y, x;

	shown(v);
	follow_selection(v);
	erase();
	if (COLS < MIN_COLS || LINES < MIN_LINES) {
		snprintf(buf, sizeof(buf), "%dx%d: too small (%dx%d)", COLS,
		    LINES, MIN_COLS, MIN_LINES);
		put(0, 0, buf);
		refresh();
		return;
	}
	draw_title(v);
	line_counts(v->t, buf, sizeof(buf));
	put(1, 0, buf);
	line_rate(v->t, buf, sizeof(buf));
	put(2, 0, buf);
	/* Beside the rate: the head has no row to spare. */
	x = (int)strlen(buf) + 3;
	line_scheds(v->t, now, buf, sizeof(buf));
	put(2, x, buf);
	draw_news(v);
	y = draw_running(v, 4, now);
	y = draw_failed(v, y, now);
	y = draw_workers(v, y, now);
	draw_keys(v, y);
	put(LINES - 2, 0, v->msg);
	attron(A_REVERSE);
	put(LINES - 1, 0, "q quit  up/down select  c cancel running  "
	    "r retry failed");
	attroff(A_REVERSE);
	refresh();
}

/* ---- keys ---- */

/* c on a running job cancels it, r on a failed one retries it. */
static void
act(struct view *v, int key)
{
	const struct top_job *j;
	char id[NAME_MAX + 1];
	bool running;

	if ((j = selected(v, &running)) == NULL) {
		snprintf(v->msg, sizeof(v->msg), "select a job first "
		    "(up/down)");
		return;
	}
	if (key == 'c' && !running) {
		snprintf(v->msg, sizeof(v->msg), "c cancels a running job; "
		    "this one has failed (r retries it)");
		return;
	}
	if (key == 'r' && running) {
		snprintf(v->msg, sizeof(v->msg), "r retries a failed job; "
		    "this one is running (c cancels it)");
		return;
	}
	/* The source may refresh the lists, and j with them. */
	strlcpy(id, j->id, sizeof(id));
	if (key == 'c')
		v->src->cancel(v->src->arg, id, v->msg, sizeof(v->msg));
	else
		v->src->retry(v->src->arg, id, v->msg, sizeof(v->msg));
}

/* The terminal's size now; SIGWINCH comes through the signalfd. */
static void
resize(void)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 &&
	    ws.ws_col > 0)
		resizeterm(ws.ws_row, ws.ws_col);
}

static void
on_keys(struct view *v)
{
	int key;

	while ((key = getch()) != ERR)
		switch (key) {
		case 'q':
		case 'Q':
			v->quit = true;
			return;
		case KEY_UP:
		case 'k':
			select_row(v, v->sel - 1);
			break;
		case KEY_DOWN:
		case 'j':
			select_row(v, v->sel + 1);
			break;
		case 'c':
		case 'r':
			act(v, key);
			break;
		case KEY_RESIZE:
			/*
			 * resizeterm() queues this after it resized the
			 * screen; resizing again would queue another.  The
			 * loop redraws.
			 */
			break;
		case 'L' & 0x1f:	/* ^L: the screen from scratch */
			clearok(curscr, TRUE);
			break;
		}
}

/* ---- the loop ---- */

/* SIGWINCH redraws; SIGINT, SIGTERM and SIGHUP end the view. */
static void
on_signal(struct view *v)
{
	struct signalfd_siginfo si;

	while (read(v->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGWINCH)
			resize();
		else
			v->quit = true;
	}
}

/*
 * How long poll may sleep: until the clock on screen shows the next
 * second, or until the source's next refresh, if that is sooner.
 */
static int
sleep_ms(const struct view *v)
{
	int ms = 1000 - (int)(now_ms() % 1000);
	msec_t due = v->src->due(v->src->arg);

	if (due != TOP_NEVER && due - mono_ms() < ms)
		ms = due > mono_ms() ? (int)(due - mono_ms()) : 0;
	return ms;
}

/* Returns 0, or an exit status (errno says why). */
static int
view_step(struct view *v, struct pollfd *pfd)
{
	struct top_source *src = v->src;

	if (mono_ms() >= src->due(src->arg) && src->update(src->arg) == -1)
		return EX_IOERR;
	draw(v);
	pfd[1].fd = src->fd(src->arg);	/* -1: none now; poll skips it */
	if (poll(pfd, 3, sleep_ms(v)) == -1)
		return errno == EINTR ? 0 : EX_SOFTWARE;
	if (pfd[2].revents & POLLIN)
		on_signal(v);
	if ((pfd[1].revents & (POLLIN | POLLHUP | POLLERR)) &&
	    src->input(src->arg) == -1)
		return EX_IOERR;
	if (pfd[0].revents & (POLLHUP | POLLERR))
		v->quit = true;		/* the terminal went away */
	else if (pfd[0].revents & POLLIN)
		on_keys(v);
	return 0;
}

/* SIGINT, SIGTERM, SIGHUP and SIGWINCH as reads from one descriptor. */
static int
signals_open(void)
{
	return sigfd_open(SIGINT, SIGTERM, SIGHUP, SIGWINCH, 0);
}

static int
screen_run(struct view *v)
{
	struct pollfd pfd[3] = {
		{ .fd = STDIN_FILENO, .events = POLLIN },
		{ .fd = -1, .events = POLLIN },
		{ .fd = v->sigfd, .events = POLLIN },
	};
	SCREEN *scr;
	int rc = 0, saved;

	if ((scr = newterm(NULL, stdout, stdin)) == NULL) {
		fprintf(stderr, "chute: top: TERM=%s: not a terminal type "
		    "terminfo knows\n", getenv("TERM") ? getenv("TERM") : "");
		return EX_CONFIG;
	}
	cbreak();
	noecho();
	nodelay(stdscr, TRUE);
	keypad(stdscr, TRUE);
	curs_set(0);
	while (!v->quit && (rc = view_step(v, pfd)) == 0)
		;
	saved = errno;
	endwin();
	delscreen(scr);
	if (rc != 0)
		fprintf(stderr, "chute: %s: %s\n", v->t->title, strerror(saved));
	return rc;
}

int
top_view_run(struct top_source *src)
{
	struct view v = { .src = src, .t = src->t, .sel = -1 };
	int rc;

	if ((v.sigfd = signals_open()) == -1) {
		fprintf(stderr, "chute: top: signalfd: %s\n", strerror(errno));
		return EX_SOFTWARE;
	}
	rc = screen_run(&v);
	close(v.sigfd);
	return rc;
}
