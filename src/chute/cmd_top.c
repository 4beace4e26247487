/*
 * cmd_top.c: `chute top SPOOL`: a live view of a spool, drawn with ncurses
 * and redrawn when inotify says the spool changed (top_spool.c reads it);
 * a one-shot summary when stdout is not a terminal.  chute is the only
 * program linked with ncurses, and this the only file that uses it.
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
#include "base/util.h"
#include "cli/cmd.h"
#include "store/spool.h"
#include "store/watch.h"
#include "cli/top.h"

/* curses.h names a type WINDOW; chute.h's, the owner's limit, is not used here. */
#undef WINDOW
#include <curses.h>

#define MIN_COLS	40
#define MIN_LINES	10
#define VIS_MAX		(NAME_MAX * 4 + 1)

struct view {
	struct top	*t;
	struct watch	*w;
	int		 sigfd;
	int		 sel;		/* the selected row: running, then failed */
	char		 sel_id[NAME_MAX + 1];	/* ... and its job, kept across rescans */
	int		 nrun_shown, nfail_shown;
	msec_t		 scanned;	/* mono_ms() of the last rescan */
	char		 msg[512];	/* the last key's result */
	bool		 quit;
};

/* ---- lines shared by the summary and the view ---- */

static void
line_owner(const struct top *t, char *buf, size_t len)
{
	if (t->owner == 0)
		snprintf(buf, len, "no owner");
	else if (t->owner == -1)
		snprintf(buf, len, "owner unknown (lock held)");
	else
		snprintf(buf, len, "owner %ld", (long)t->owner);
}

static void
line_counts(const struct top *t, char *buf, size_t len)
{
	snprintf(buf, len, "new %zu   cur %zu   defer %zu   done %zu   "
	    "failed %zu", t->count[ST_NEW], t->count[ST_CUR],
	    t->count[ST_DEFER], t->count[ST_DONE], t->count[ST_FAILED]);
}

static void
line_rate(const struct top *t, char *buf, size_t len)
{
	unsigned done, failed;

	top_rate(t, now_ms(), &done, &failed);
	snprintf(buf, len, "last minute: %u done, %u failed, %.2f/s", done,
	    failed, (done + failed) / (double)TOP_WINDOW);
}

/* "ELAPSED  ID" */
static void
line_running(const struct top_job *j, msec_t now, char *buf, size_t len)
{
	char age[32], vis[VIS_MAX];

	top_age(now - j->since, age, sizeof(age));
	vis_name(j->id, vis, sizeof(vis));
	snprintf(buf, len, "%8s  %s", age, vis);
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

/* ---- the one-shot summary ---- */

static int
print_summary(const struct top *t)
{
	char buf[2048];
	msec_t now = now_ms();

	line_owner(t, buf, sizeof(buf));
	printf("chute top %s   %s\n", t->sp->path, buf);
	line_counts(t, buf, sizeof(buf));
	printf("%s\n", buf);
	line_rate(t, buf, sizeof(buf));
	printf("%s\n", buf);
	printf("running %zu%s\n", t->count[ST_CUR], t->nrun < t->count[ST_CUR] ?
	    " (the longest-running shown)" : "");
	for (size_t i = 0; i < t->nrun; i++) {
		line_running(&t->run[i], now, buf, sizeof(buf));
		printf("%s\n", buf);
	}
	printf("failed %zu%s\n", t->count[ST_FAILED], t->nfail <
	    t->count[ST_FAILED] ? " (the newest shown)" : "");
	for (size_t i = 0; i < t->nfail; i++) {
		line_failed(&t->fail[i], now, 24, buf, sizeof(buf));
		printf("%s\n", buf);
	}
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

/* "chute top PATH" on the left, the owner and the clock on the right. */
static void
draw_title(const struct view *v)
{
	char right[96], own[64], clock[16];
	const char *path = v->t->sp->path;
	time_t now = time(NULL);
	struct tm tm;
	int room;

	line_owner(v->t, own, sizeof(own));
	strftime(clock, sizeof(clock), "%H:%M:%S", localtime_r(&now, &tm));
	snprintf(right, sizeof(right), "%s   %s", own, clock);
	room = COLS - (int)strlen(right) - (int)strlen("chute top ") - 2;
	/* A long path keeps its end, where the spool's name is. */
	if (room > 3 && (int)strlen(path) > room)
		path += strlen(path) - room;
	attron(A_BOLD);
	put(0, 0, "chute top ");
	attroff(A_BOLD);
	addnstr(path, room > 0 ? room : 0);
	put(0, COLS - (int)strlen(right), right);
}

/*
 * How many rows each list gets of those between the head and the foot:
 * all it has if both fit, else the running jobs at least half.
 */
static void
layout(const struct view *v, int *runrows, int *failrows)
{
	int space = LINES - 8;		/* 4 head, 2 list titles, 2 foot */
	int wrun = v->t->nrun > 0 ? (int)v->t->nrun : 1;	/* or "(none)" */
	int wfail = v->t->nfail > 0 ? (int)v->t->nfail : 1;

	*runrows = wrun;
	if (wrun + wfail > space)
		*runrows = space / 2 > space - wfail ? space / 2 : space - wfail;
	if (*runrows > wrun)
		*runrows = wrun;
	*failrows = space - *runrows < wfail ? space - *runrows : wfail;
}

/* How many jobs of each list are on screen. */
static void
shown(struct view *v)
{
	int runrows, failrows;

	v->nrun_shown = v->nfail_shown = 0;
	if (COLS < MIN_COLS || LINES < MIN_LINES)
		return;
	layout(v, &runrows, &failrows);
	v->nrun_shown = (int)v->t->nrun < runrows ? (int)v->t->nrun : runrows;
	v->nfail_shown = (int)v->t->nfail < failrows ? (int)v->t->nfail :
	    failrows;
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
draw_running(struct view *v, int y, int rows, msec_t now)
{
	char buf[VIS_MAX + 64];

	snprintf(buf, sizeof(buf), "%8s  RUNNING %zu%s", "ELAPSED",
	    v->t->count[ST_CUR], v->t->count[ST_CUR] > (size_t)rows ?
	    " (the longest-running)" : "");
	draw_title_row(y++, buf);
	if (v->t->nrun == 0)
		put(y++, 10, "(none)");
	for (int i = 0; i < v->nrun_shown; i++) {
		line_running(&v->t->run[i], now, buf, sizeof(buf));
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

static void
draw_failed(struct view *v, int y, int rows, msec_t now)
{
	char buf[VIS_MAX + 512];
	int rw = reason_width();

	snprintf(buf, sizeof(buf), "%8s  %3s  %-*s  FAILED %zu%s", "AGE",
	    "ATT", rw, "REASON", v->t->count[ST_FAILED],
	    v->t->count[ST_FAILED] > (size_t)rows ? " (the newest)" : "");
	draw_title_row(y++, buf);
	if (v->t->nfail == 0)
		put(y++, 10, "(none)");
	for (int i = 0; i < v->nfail_shown; i++) {
		line_failed(&v->t->fail[i], now, rw, buf, sizeof(buf));
		draw_row(v, y++, v->nrun_shown + i, buf);
	}
}

static void
draw(struct view *v)
{
	char buf[512];
	msec_t now = now_ms();
	int runrows, failrows, y;

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
	layout(v, &runrows, &failrows);
	y = draw_running(v, 4, runrows, now);
	draw_failed(v, y, failrows, now);
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
	bool running;

	if ((j = selected(v, &running)) == NULL)
		snprintf(v->msg, sizeof(v->msg), "select a job first "
		    "(up/down)");
	else if (key == 'c' && !running)
		snprintf(v->msg, sizeof(v->msg), "c cancels a running job; "
		    "this one has failed (r retries it)");
	else if (key == 'r' && running)
		snprintf(v->msg, sizeof(v->msg), "r retries a failed job; "
		    "this one is running (c cancels it)");
	else if (key == 'c')
		top_cancel(v->t, j->id, v->msg, sizeof(v->msg));
	else
		top_retry(v->t, j->id, v->msg, sizeof(v->msg));
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
 * second, or, with events waiting, until a rescan is allowed again.
 */
static int
sleep_ms(const struct view *v)
{
	int ms = 1000 - (int)(now_ms() % 1000);
	msec_t due = v->scanned + TOP_RESCAN_MS - mono_ms();

	if (v->t->dirty && due < ms)
		ms = due > 0 ? (int)due : 0;
	return ms;
}

/* Read the events so far.  A malformed buffer (EPROTO) costs a rescan. */
static int
read_events(struct view *v)
{
	if (watch_read(v->w, top_event, v->t) == 0)
		return 0;
	if (errno != EPROTO)
		return -1;
	v->t->dirty = TOP_ALL;
	v->t->full = true;
	return 0;
}

/* Returns 0, or an exit status after saying why (the screen ended first). */
static int
view_step(struct view *v, struct pollfd *pfd)
{
	/*
	 * The events first: a job we just cancelled must be among the
	 * failed/ arrivals of this rescan, or the selection loses it.
	 */
	if (v->t->dirty && mono_ms() - v->scanned >= TOP_RESCAN_MS) {
		v->scanned = mono_ms();
		if (read_events(v) == -1 || top_rescan(v->t) == -1)
			return EX_IOERR;
	}
	draw(v);
	if (poll(pfd, 3, sleep_ms(v)) == -1)
		return errno == EINTR ? 0 : EX_SOFTWARE;
	if (pfd[2].revents & POLLIN)
		on_signal(v);
	if ((pfd[1].revents & POLLIN) && read_events(v) == -1)
		return EX_IOERR;
	if (pfd[0].revents & (POLLHUP | POLLERR))
		v->quit = true;		/* the terminal went away */
	else if (pfd[0].revents & POLLIN)
		on_keys(v);
	return 0;
}

static int
view_run(struct view *v)
{
	struct pollfd pfd[3] = {
		{ .fd = STDIN_FILENO, .events = POLLIN },
		{ .fd = watch_fd(v->w), .events = POLLIN },
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
	v->scanned = mono_ms();
	while (!v->quit && (rc = view_step(v, pfd)) == 0)
		;
	saved = errno;
	endwin();
	delscreen(scr);
	if (rc != 0)
		fprintf(stderr, "chute: %s: %s\n", v->t->sp->path,
		    strerror(saved));
	return rc;
}

/* SIGINT, SIGTERM, SIGHUP and SIGWINCH as reads from one descriptor. */
static int
signals_open(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGWINCH);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1)
		return -1;
	return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

/* The live view: the watch first, so nothing after the first look is missed. */
static int
live(struct spool *sp, struct top *t)
{
	struct view v = { .t = t, .sigfd = -1, .sel = -1 };
	msec_t since = now_ms();
	int rc = EX_IOERR;

	if ((v.w = top_watch_open(sp)) == NULL)
		fprintf(stderr, "chute: %s: inotify: %s\n", sp->path,
		    strerror(errno));
	else if (top_init(t, sp, since) == -1)
		fprintf(stderr, "chute: %s: %s\n", sp->path, strerror(errno));
	else if ((v.sigfd = signals_open()) == -1) {
		fprintf(stderr, "chute: top: signalfd: %s\n", strerror(errno));
		rc = EX_SOFTWARE;
	} else
		rc = view_run(&v);
	if (v.sigfd != -1)
		close(v.sigfd);
	watch_close(v.w);
	return rc;
}

int
cmd_top(int argc, char **argv)
{
	struct spool sp;
	struct top *t;
	int rc;

	if (argc != 2)
		return usage_error("top", argc < 2 ? "no spool given" :
		    "want only SPOOL");
	if ((rc = open_spool_or_exit(&sp, argv[1])) != 0)
		return rc;
	/* Some 40 KiB, whatever the spool holds. */
	if ((t = malloc(sizeof(*t))) == NULL) {
		fprintf(stderr, "chute: top: %s\n", strerror(errno));
		rc = EX_SOFTWARE;
	} else if (isatty(STDOUT_FILENO))
		rc = live(&sp, t);
	else if (top_init(t, &sp, now_ms()) == -1) {
		fprintf(stderr, "chute: %s: %s\n", sp.path, strerror(errno));
		rc = EX_IOERR;
	} else
		rc = print_summary(t);
	free(t);
	spool_close(&sp);
	return rc;
}
