/*
 * check_hostile.c: what local users can drop into a spool, and what a
 * dead owner or a busy day leaves in it.  The owner runs as root here, as
 * it often does on servers, and drives the real binary ($CHUTE_BIN).
 * Each test checks the documented outcome and that nothing outside the
 * spool was read, written or followed: inotify watches on the directories
 * involved see every open(2) and read(2) the owner makes of a file.
 */
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/un.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "suites.h"
#include "t_cli.h"

/* ---- watching for opens and reads ---- */

#define H_MAXWATCH	8

static struct {
	int		 fd;
	int		 wd[H_MAXWATCH];
	char		 dir[H_MAXWATCH][PATH_MAX];
	int		 n;
} W = { .fd = -1 };

/* Report every open and read of a file in dir from now on. */
static void
h_watch(const char *dir)
{
	if (W.fd == -1)
		W.fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	EXPECT(W.fd != -1, "inotify_init1: %s", strerror(errno));
	EXPECT(W.n < H_MAXWATCH, "too many watches");
	W.wd[W.n] = inotify_add_watch(W.fd, dir, IN_OPEN | IN_ACCESS);
	EXPECT(W.wd[W.n] != -1, "inotify_add_watch %s: %s", dir, strerror(errno));
	snprintf(W.dir[W.n], PATH_MAX, "%s", dir);
	W.n++;
}

/*
 * Was any of the names (NULL-terminated) opened (IN_OPEN) or read
 * (IN_ACCESS), as mask asks, in a watched directory since h_watch?
 * Returns "DIR/NAME (open)" or NULL.  Reads the events: call it once,
 * after the owner is done.
 */
static const char *
h_touched(const char *const names[], uint32_t mask)
{
	static char found[PATH_MAX + 32];
	char buf[64 * 1024]
	    __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	found[0] = '\0';
	while ((n = read(W.fd, buf, sizeof buf)) > 0) {
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)p;
			const char *dir = "?";

			p += sizeof *ev + ev->len;
			EXPECT(!(ev->mask & IN_Q_OVERFLOW), "the inotify queue"
			    " overflowed: cannot tell what the owner opened");
			for (int i = 0; i < W.n; i++)
				if (W.wd[i] == ev->wd)
					dir = W.dir[i];
			for (int i = 0; ev->len > 0 && names[i] != NULL; i++)
				if ((ev->mask & mask) && found[0] == '\0' &&
				    strcmp(ev->name, names[i]) == 0)
					snprintf(found, sizeof found, "%s/%s (%s)", dir,
					    ev->name, ev->mask & IN_ACCESS ? "read" : "open");
		}
	}
	return found[0] ? found : NULL;
}

/* ---- files ---- */

/* Does any file directly in dir contain needle? Its name, or NULL. */
static const char *
h_grep_dir(const char *dir, const char *needle)
{
	static char hit[PATH_MAX];
	struct dirent *de;
	DIR *d;
	char *text;

	if ((d = opendir(dir)) == NULL)
		return NULL;
	hit[0] = '\0';
	while (hit[0] == '\0' && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		text = t_slurp(P("%s/%s", dir, de->d_name));
		if (text != NULL && strstr(text, needle) != NULL)
			snprintf(hit, sizeof hit, "%s/%s", dir, de->d_name);
		free(text);
	}
	closedir(d);
	return hit[0] ? hit : NULL;
}

/*
 * needle appears nowhere chute or a handler could have put it.  (failed/
 * is left out: it holds the hostile files themselves.)
 */
static void
h_no_leak(const char *needle, pid_t owner)
{
	static const char *const dirs[] = { "new", "cur", "defer", "done", "log" };
	const char *hit;
	char *text;

	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		hit = h_grep_dir(P("%s/%s", T.spool, dirs[i]), needle);
		EXPECT(hit == NULL, "the secret outside the spool was copied into %s", hit);
	}
	hit = h_grep_dir(RP("seen"), needle);
	EXPECT(hit == NULL, "a handler read the secret outside the spool: %s", hit);
	text = t_slurp(RP("journal"));
	EXPECT(text == NULL || strstr(text, needle) == NULL,
	    "the secret outside the spool is in the handlers' journal");
	free(text);
	if (owner > 0) {
		text = t_slurp(t_proc_of(owner)->log);
		EXPECT(text == NULL || strstr(text, needle) == NULL,
		    "the secret outside the spool is in the owner's stderr");
		free(text);
	}
}

/* A file only root may read, outside the spool. */
static void
h_secret(const char *name, const char *content)
{
	t_write(RP(name), content);
	EXPECT(chmod(RP(name), 0600) == 0, "chmod %s: %s", name, strerror(errno));
}

/* Does reading a file move its atime on this file system (relatime)? */
static bool
h_atime_works(void)
{
	struct timespec old[2] = { { 1000000000, 0 }, { UTIME_OMIT, 0 } };
	struct stat st;

	t_write(RP("calib"), "calibration");
	EXPECT(utimensat(AT_FDCWD, RP("calib"), old, 0) == 0, "utimensat calib");
	free(t_slurp(RP("calib")));
	EXPECT(stat(RP("calib"), &st) == 0, "stat calib");
	return st.st_atim.tv_sec != 1000000000;
}

static void
h_set_atime_old(const char *path)
{
	struct timespec old[2] = { { 1000000000, 0 }, { UTIME_OMIT, 0 } };

	EXPECT(utimensat(AT_FDCWD, path, old, 0) == 0, "utimensat %s: %s", path,
	    strerror(errno));
}

/* Run an owner with --drain to the end; it must exit 0 within 20 s. */
static pid_t
h_drain(const char *handler)
{
	pid_t owner = OWNER("--drain", QUICK, "--", handler);
	int code = t_reap(owner, 20000, "chute run --drain");

	EXPECT(code == 0, "chute run --drain exited %d:\n%s", code, t_log_of(owner));
	return owner;
}

/* The job is in failed/ and no other state, and its log has the reason. */
static void
h_rejected(const char *id, const char *reason)
{
	static const char *const others[] = { "new", "cur", "defer", "done" };
	char *log;

	EXPECT(t_exists(SP("failed", id)), "%s did not end in failed/", id);
	for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
		EXPECT(!t_exists(SP(others[i], id)), "%s is in failed/ and in %s/",
		    id, others[i]);
	log = t_slurp(SP("log", id));
	EXPECT(log && strstr(log, reason), "log/%s does not say '%s': '%s'", id,
	    reason, t_snip(log));
	free(log);
	EXPECT(t_journal_count(id) == 0 && !t_exists(RP(P("seen/%s", id))),
	    "a handler ran on %s", id);
}

static void
hostile_teardown(void)
{
	if (W.fd != -1)
		close(W.fd);
	W.fd = -1;
	W.n = 0;
	t_cli_teardown();
}

/* ------------------------------------------------------------------ */
/* Things that are not plain job files                                */
/* ------------------------------------------------------------------ */

START_TEST(test_symlink_in_new_to_a_root_only_file_is_rejected_and_never_read)
{
	static const char *const targets[] = { "secret", NULL };
	struct stat before, after;
	const char *touched;
	bool atime_works = h_atime_works();
	pid_t owner;

	h_secret("secret", "TOPSECRET-behind-a-symlink\n");
	h_set_atime_old(RP("secret"));
	EXPECT(stat(RP("secret"), &before) == 0, "stat secret");
	EXPECT(symlink(RP("secret"), SP("new", "link")) == 0, "symlink: %s",
	    strerror(errno));
	EXPECT(symlink(T.root, SP("new", "dirlink")) == 0, "symlink: %s",
	    strerror(errno));
	EXPECT(symlink(RP("nonexistent"), SP("new", "dangling")) == 0, "symlink: %s",
	    strerror(errno));
	h_watch(T.root);
	t_submit_as("after", "x\n");
	owner = h_drain(h_journal());

	touched = h_touched(targets, IN_OPEN | IN_ACCESS);
	EXPECT(touched == NULL, "the owner or a handler opened the symlink's target"
	    " %s", touched);
	EXPECT(t_exists(SP("done", "after")),
	    "the job after the symlinks did not finish");
	h_rejected("link", "rejected");
	h_rejected("dirlink", "rejected");
	h_rejected("dangling", "rejected");
	EXPECT(lstat(SP("failed", "link"), &after) == 0 && S_ISLNK(after.st_mode),
	    "failed/link is not the symlink itself");
	EXPECT(!t_exists(RP("nonexistent")),
	    "a dangling symlink's target was created");
	EXPECT(stat(RP("secret"), &after) == 0, "stat secret");
	EXPECT(after.st_mtim.tv_sec == before.st_mtim.tv_sec &&
	    after.st_mtim.tv_nsec == before.st_mtim.tv_nsec &&
	    after.st_mode == before.st_mode && after.st_size == before.st_size,
	    "the symlink's target was changed");
	if (atime_works)
		EXPECT(after.st_atim.tv_sec == 1000000000,
		    "the symlink's target was read (its atime changed)");
	h_no_leak("TOPSECRET", owner);
}
END_TEST

START_TEST(test_fifo_directory_socket_and_device_in_new_are_rejected_unopened)
{
	static const char *const names[] = { "pipe", "adir", "sock", "dev", NULL };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char cwd[PATH_MAX];
	const char *touched;
	bool have_dev = true;
	struct stat st;
	int s;

	EXPECT(mkfifo(SP("new", "pipe"), 0666) == 0, "mkfifo: %s", strerror(errno));
	EXPECT(mkdir(SP("new", "adir"), 0755) == 0, "mkdir: %s", strerror(errno));
	t_write(P("%s/new/adir/inside", T.spool), "in a directory\n");
	/* bind(2) by a short relative name: sun_path is only 108 bytes */
	EXPECT(getcwd(cwd, sizeof cwd) != NULL && chdir(P("%s/new", T.spool)) == 0,
	    "chdir new/: %s", strerror(errno));
	strcpy(sa.sun_path, "sock");
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	EXPECT(s != -1 && bind(s, (struct sockaddr *)&sa, sizeof sa) == 0,
	    "bind new/sock: %s", strerror(errno));
	close(s);
	EXPECT(chdir(cwd) == 0, "chdir back: %s", strerror(errno));
	if (mknod(SP("new", "dev"), S_IFCHR | 0666, makedev(1, 3)) == -1) {
		EXPECT(errno == EPERM, "mknod new/dev: %s", strerror(errno));
		fprintf(stderr, "check_hostile: device node part of the special"
		    " files test skipped: mknod: %s (needs CAP_MKNOD)\n",
		    strerror(errno));
		have_dev = false;
	}
	h_watch(P("%s/new", T.spool));
	h_watch(P("%s/failed", T.spool));
	t_submit_as("after", "x\n");
	h_drain(h_journal());

	touched = h_touched(names, IN_OPEN | IN_ACCESS);
	EXPECT(touched == NULL, "the owner opened %s", touched);
	EXPECT(t_exists(SP("done", "after")), "the job after them did not finish");
	h_rejected("pipe", "not a regular file");
	h_rejected("adir", "not a regular file");
	h_rejected("sock", "not a regular file");
	EXPECT(lstat(SP("failed", "pipe"), &st) == 0 && S_ISFIFO(st.st_mode),
	    "failed/pipe is not the FIFO");
	EXPECT(lstat(SP("failed", "adir"), &st) == 0 && S_ISDIR(st.st_mode) &&
	    t_exists(P("%s/failed/adir/inside", T.spool)),
	    "failed/adir is not the directory, with its contents");
	EXPECT(lstat(SP("failed", "sock"), &st) == 0 && S_ISSOCK(st.st_mode),
	    "failed/sock is not the socket");
	if (have_dev) {
		h_rejected("dev", "not a regular file");
		EXPECT(lstat(SP("failed", "dev"), &st) == 0 && S_ISCHR(st.st_mode) &&
		    st.st_rdev == makedev(1, 3), "failed/dev is not the device node");
	}
}
END_TEST

/* ---- hard links ---- */

/*
 * Three refused: a link to a root-only file outside the spool; a tmp/
 * link plus one outside (st_nlink 3); a tmp/ file of the same name that
 * is another inode.  One accepted: link(tmp/X, new/X) before its unlink.
 */
static void
h_hard_links(void)
{
	h_secret("hsecret", "TOPSECRET-behind-a-hard-link\n");
	EXPECT(link(RP("hsecret"), SP("new", "hl")) == 0, "link: %s", strerror(errno));

	t_write(SP("tmp", "x3"), "TOPSECRET-three-links\n");
	EXPECT(link(SP("tmp", "x3"), SP("new", "x3")) == 0 &&
	    link(SP("tmp", "x3"), RP("x3-outside")) == 0, "link x3: %s",
	    strerror(errno));

	h_secret("x4-outside", "TOPSECRET-same-name-in-tmp\n");
	EXPECT(link(RP("x4-outside"), SP("new", "x4")) == 0, "link x4: %s",
	    strerror(errno));
	t_write(SP("tmp", "x4"), "a different file of the same name\n");

	t_write(SP("tmp", "ql"), "qmail style\n");
	EXPECT(link(SP("tmp", "ql"), SP("new", "ql")) == 0, "link ql: %s",
	    strerror(errno));
}

START_TEST(test_hard_link_in_new_to_an_outside_file_is_rejected_and_never_read)
{
	static const char *const names[] = { "hl", "x3", "x4", NULL };
	bool atime_works = h_atime_works();
	const char *touched;
	char *seen;
	pid_t owner;

	h_hard_links();
	h_set_atime_old(RP("hsecret"));
	h_watch(P("%s/new", T.spool));
	h_watch(P("%s/cur", T.spool));
	h_watch(P("%s/failed", T.spool));
	owner = h_drain(h_journal());

	h_rejected("hl", "rejected: has other hard links");
	h_rejected("x3", "rejected: has other hard links");
	h_rejected("x4", "rejected: has other hard links");
	EXPECT(t_exists(SP("done", "ql")) && t_journal_count("ql") == 1,
	    "the link-then-unlink submission in progress (new/ql and tmp/ql, one"
	    " inode) was not run exactly once");
	seen = t_slurp(RP("seen/ql"));
	EXPECT(seen && strcmp(seen, "qmail style\n") == 0, "the handler read '%s'"
	    " for ql", t_snip(seen));
	free(seen);
	/* the owner may open it to fstat it; it must not read it */
	touched = h_touched(names, IN_ACCESS);
	EXPECT(touched == NULL, "the owner or a handler read %s", touched);
	if (atime_works) {
		struct stat st;

		EXPECT(stat(RP("hsecret"), &st) == 0 && st.st_atim.tv_sec == 1000000000,
		    "the hard-linked root-only file was read (its atime changed)");
	}
	h_no_leak("TOPSECRET", owner);
}
END_TEST

/*
 * A hard link shares its inode with the file outside the spool: stamping
 * the arrival time on failed/hl (futimens/utimensat) writes that file's
 * mtime.  Rejecting it must leave the outside file as it was.
 */
START_TEST(test_rejecting_a_hard_link_leaves_the_outside_file_unchanged)
{
	struct stat before, after;
	char *content;

	h_hard_links();
	t_set_mtime(RP("hsecret"), t_now() - 3600 * 1000);
	EXPECT(stat(RP("hsecret"), &before) == 0, "stat hsecret");
	h_drain(h_journal());
	EXPECT(t_exists(SP("failed", "hl")), "new/hl was not rejected");
	EXPECT(stat(RP("hsecret"), &after) == 0, "stat hsecret");
	content = t_slurp(RP("hsecret"));
	EXPECT(content && strcmp(content, "TOPSECRET-behind-a-hard-link\n") == 0 &&
	    after.st_mode == before.st_mode && after.st_uid == before.st_uid,
	    "the hard-linked file outside the spool was changed");
	free(content);
	EXPECT(after.st_mtim.tv_sec == before.st_mtim.tv_sec &&
	    after.st_mtim.tv_nsec == before.st_mtim.tv_nsec,
	    "rejecting new/hl set the mtime of the root-only file outside the spool"
	    " it is linked to (from %lld to %lld)", (long long)before.st_mtim.tv_sec,
	    (long long)after.st_mtim.tv_sec);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Names                                                              */
/* ------------------------------------------------------------------ */

/* Crafted names carry these after a newline; no line may start with them. */
#define FORGED		"2026-01-01T00:00:00.000Z job=forged cur->done"
#define FORGED_TIME	"2026-01-01T00:00:00.000Z"
#define FORGED_LOG	"@chute 2026-01-01T00:00:00.000Z attempt=9 start"

struct h_name {
	char	 name[NAME_MAX + 1];
	bool	 valid;			/* stays as it is */
};

static int
h_names(struct h_name *n)
{
	int i = 0;

	snprintf(n[i].name, NAME_MAX + 1, "with spaces in it");
	n[i++].valid = true;
	snprintf(n[i].name, NAME_MAX + 1, "latin1-\xe9\xff\xfe-bytes");
	n[i++].valid = true;
	snprintf(n[i].name, NAME_MAX + 1, "evil\n" FORGED);
	n[i++].valid = false;
	snprintf(n[i].name, NAME_MAX + 1, "evil2\r" FORGED);
	n[i++].valid = false;
	snprintf(n[i].name, NAME_MAX + 1, "evil3\n" FORGED_LOG "\n");
	n[i++].valid = false;
	snprintf(n[i].name, NAME_MAX + 1, "tab\tand\x1b[31mescape\x1b[0m\a");
	n[i++].valid = false;
	snprintf(n[i].name, NAME_MAX + 1, "\x01starts-with-a-control");
	n[i++].valid = false;
	snprintf(n[i].name, NAME_MAX + 1, "del\x7fname");
	n[i++].valid = false;
	memset(n[i].name, 'v', 200);		/* the longest valid ID */
	n[i].name[200] = '\0';
	n[i++].valid = true;
	memset(n[i].name, 'w', 201);
	n[i].name[201] = '\0';
	n[i++].valid = false;
	memset(n[i].name, 'x', 255);		/* NAME_MAX */
	n[i].name[255] = '\0';
	n[i++].valid = false;
	return i;
}

/* What spool-layout.md says a derived ID starts with, '-' included. */
static void
h_derived_prefix(const char *name, char *out, size_t len)
{
	size_t j = 0;

	for (size_t i = 0; name[i] != '\0' && j < 160 && j + 2 < len; i++) {
		unsigned char c = (unsigned char)name[i];

		out[j++] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-' ?
		    (char)c : '_';
	}
	if (j > 0 && out[0] == '.')
		out[0] = '_';
	out[j++] = '-';
	out[j] = '\0';
}

/* The name of the one file in done/ holding content; NULL if not one. */
static const char *
h_done_holding(const char *content, int *count)
{
	static char found[NAME_MAX + 1];
	struct dirent *de;
	DIR *d = opendir(P("%s/done", T.spool));
	char *text;

	*count = 0;
	EXPECT(d != NULL, "opendir done/: %s", strerror(errno));
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		text = t_slurp(P("%s/done/%s", T.spool, de->d_name));
		if (text != NULL && strcmp(text, content) == 0) {
			snprintf(found, sizeof found, "%s", de->d_name);
			(*count)++;
		}
		free(text);
	}
	closedir(d);
	return *count == 1 ? found : NULL;
}

/* A control byte other than newline in text, as an offset; -1 if none. */
static long
h_control_byte(const char *text)
{
	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		if ((*p < 0x20 && *p != '\n') || *p == 0x7f)
			return (long)(p - (const unsigned char *)text);
	return -1;
}

static bool
h_line_starts_with(const char *text, const char *prefix)
{
	for (const char *p = text; p != NULL && *p != '\0'; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (strncmp(p, prefix, strlen(prefix)) == 0)
			return true;
	}
	return false;
}

START_TEST(test_hostile_names_are_run_under_safe_ids_and_cannot_forge_log_lines)
{
	const char *h = t_handler("h_content", "{ cat; echo; } >> \"$R/journal\"\n");
	struct h_name names[16];
	char content[64], prefix[NAME_MAX + 1], *text, *journal;
	const char *id;
	int n = h_names(names), count;
	struct dirent *de;
	pid_t owner;
	long bad;
	DIR *d;

	for (int i = 0; i < n; i++) {
		snprintf(content, sizeof content, "content-%d", i);
		t_drop(names[i].name, content);
	}
	owner = h_drain(h);

	EXPECT(t_count_state("new") == 0 && t_count_state("failed") == 0 &&
	    t_count_state("done") == n, "expected all %d jobs in done/: new/ %d,"
	    " failed/ %d, done/ %d", n, t_count_state("new"),
	    t_count_state("failed"), t_count_state("done"));
	journal = t_slurp(RP("journal"));
	for (int i = 0; i < n; i++) {
		char want[80];
		const char *p;
		int runs = 0;

		snprintf(content, sizeof content, "content-%d", i);
		id = h_done_holding(content, &count);
		EXPECT(id != NULL, "%d files in done/ hold %s (name %d)", count, content, i);
		if (names[i].valid) {
			EXPECT(strcmp(id, names[i].name) == 0, "name %d is a valid ID but"
			    " was renamed to '%s'", i, id);
		} else {
			h_derived_prefix(names[i].name, prefix, sizeof prefix);
			EXPECT(t_id_charset_ok(id) && strncmp(id, prefix, strlen(prefix)) == 0 &&
			    strlen(id) > strlen(prefix), "name %d got the ID '%s', not one"
			    " derived from it ('%s...')", i, id, prefix);
			EXPECT(strlen(id) <= 200, "derived ID '%s' is longer than 200 bytes", id);
		}
		snprintf(want, sizeof want, "%s\n", content);
		for (p = journal; p && (p = strstr(p, want)) != NULL; p++)
			if (p == journal || p[-1] == '\n')
				runs++;
		EXPECT(runs == 1, "the job holding %s ran %d times", content, runs);
	}
	free(journal);

	/* one line per transition: nothing raw from a name on the owner's stderr */
	text = t_slurp(t_proc_of(owner)->log);
	EXPECT(text != NULL, "no owner output");
	bad = h_control_byte(text);
	EXPECT(bad == -1, "the owner's stderr has a raw control byte 0x%02x at offset"
	    " %ld:\n%s", (unsigned char)text[bad < 0 ? 0 : bad], bad,
	    t_log_of(owner));
	EXPECT(!h_line_starts_with(text, FORGED_TIME) &&
	    !h_line_starts_with(text, "@chute"), "a crafted name forged a line on"
	    " the owner's stderr:\n%s", t_log_of(owner));
	EXPECT(strstr(text, "renamed") != NULL, "the owner did not log the renames");
	free(text);

	/* nor in the job logs */
	EXPECT((d = opendir(P("%s/log", T.spool))) != NULL, "opendir log/");
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		text = t_slurp(P("%s/log/%s", T.spool, de->d_name));
		EXPECT(text != NULL, "log/%s unreadable", de->d_name);
		bad = h_control_byte(text);
		EXPECT(bad == -1 && !h_line_starts_with(text, FORGED_TIME) &&
		    !h_line_starts_with(text, FORGED_LOG),
		    "log/%s has a raw control byte or a forged line:\n%s", de->d_name,
		    t_snip(text));
		free(text);
	}
	closedir(d);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Sizes and numbers                                                  */
/* ------------------------------------------------------------------ */

/*
 * A handler writes its log, so it can write a line that looks like ours
 * ("@chute TIME attempt=N ...") with escape codes and a carriage return
 * in it, and chute status reads its last outcome from there (or, left
 * behind by a background child, after chute's own last line, as here):
 * status prints it escaped, as the journal does; chute log escapes the
 * log on a terminal, and copies it as it is elsewhere.
 */
START_TEST(test_status_escapes_a_last_outcome_forged_in_the_log)
{
	int fd;

	t_submit_as("forge", "x");
	fd = open(SP("log", "forge"), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC,
	    0600);
	EXPECT(fd != -1 && write(fd, "@chute 2026-01-01T00:00:00.000Z attempt=1 "
	    "\033]0;pwned\007done\033[2J\r\n", 62) == 62, "write: %s",
	    strerror(errno));
	close(fd);
	EXPECT(CHUTE("status", T.spool, "forge") == 0, "status: %s", T.err);
	EXPECT(t_nlines(T.out) == 1 && strpbrk(T.out, "\033\007\r") == NULL &&
	    strstr(T.out, "\\033"), "escaped: %s", T.out);
	/* chute log: byte for byte into a pipe, escaped on a terminal. */
	EXPECT(CHUTE("log", T.spool, "forge") == 0 && strstr(T.out, "\033]0;"),
	    "log into a pipe, as it is: %s", T.out);
	EXPECT(t_chute_tty("log", T.spool, "forge", (const char *)NULL) == 0 &&
	    strpbrk(T.out, "\033\007") == NULL && strstr(T.out, "\\033]0;pwned"
	    "\\adone\\033[2J\\r\r\n"), "log on a terminal, escaped: %s", T.out);
}
END_TEST

START_TEST(test_empty_job_runs_and_ends_in_done)
{
	char *seen, *id;
	int code;

	t_drop("empty", "");
	code = CHUTE("submit", T.spool);	/* stdin: /dev/null */
	EXPECT(code == 0 && t_line(T.out, 0) != NULL,
	    "submit of an empty stdin exited %d: %s", code, t_snip(T.err));
	id = strdup(t_line(T.out, 0));
	h_drain(h_journal());
	EXPECT(t_exists(SP("done", "empty")) && t_exists(SP("done", id)),
	    "the empty jobs did not both reach done/");
	EXPECT(t_journal_count("empty") == 1 && t_journal_count(id) == 1,
	    "the empty jobs did not run once each");
	seen = t_slurp(RP("seen/empty"));
	EXPECT(seen && seen[0] == '\0', "the handler of an empty job read '%s'",
	    t_snip(seen));
	free(seen);
	seen = t_slurp(RP(P("seen/%s", id)));
	EXPECT(seen && seen[0] == '\0', "the handler of an empty submission read"
	    " '%s'", t_snip(seen));
	free(seen);
	free(id);
}
END_TEST

#define BIG_HOLE	((off_t)2 * 1024 * 1024 * 1024 + 4096)

START_TEST(test_job_larger_than_2_gib_is_handed_to_its_handler_whole)
{
	const char *h = t_handler("h_size",
	    "h=$(head -c 8); t=$(tail -c 8); s=$(stat -L -c %s /dev/stdin)\n"
	    "echo \"$s $h $t\" > \"$R/big.part\" && mv \"$R/big.part\" \"$R/big\"\n");
	char *report, want[128];
	struct stat made, done;
	int fd;

	/* sparse: 2 GiB of hole between two markers, 8 KiB on disk */
	fd = open(SP("tmp", "big"), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	EXPECT(fd != -1, "create tmp/big: %s", strerror(errno));
	EXPECT(ftruncate(fd, BIG_HOLE) == 0, "ftruncate: %s", strerror(errno));
	EXPECT(pwrite(fd, "HEADMARK", 8, 0) == 8 &&
	    pwrite(fd, "TAILMARK", 8, BIG_HOLE) == 8, "pwrite: %s", strerror(errno));
	EXPECT(fstat(fd, &made) == 0 && made.st_size == BIG_HOLE + 8, "fstat tmp/big");
	close(fd);
	EXPECT(rename(SP("tmp", "big"), SP("new", "big")) == 0, "mv: %s",
	    strerror(errno));
	h_drain(h);

	EXPECT(lstat(SP("done", "big"), &done) == 0,
	    "the big job did not reach done/");
	EXPECT(done.st_ino == made.st_ino && done.st_size == made.st_size,
	    "done/big is not the file that was submitted (copied or changed)");
	report = t_slurp(RP("big"));
	snprintf(want, sizeof want, "%lld HEADMARK TAILMARK\n",
	    (long long)BIG_HOLE + 8);
	EXPECT(report && strcmp(report, want) == 0, "the handler's stdin was '%s',"
	    " expected '%s'", t_snip(report), want);
	free(report);
}
END_TEST

#define MANY	100000

/* Which of m000000..m099999 are in dir; fails on a stranger or a twin. */
static int
h_tally(const char *state, unsigned char *seen)
{
	struct dirent *de;
	DIR *d = opendir(P("%s/%s", T.spool, state));
	int n = 0, i;
	char end;

	EXPECT(d != NULL, "opendir %s/: %s", state, strerror(errno));
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		EXPECT(sscanf(de->d_name, "m%6d%c", &i, &end) == 1 && i >= 0 && i < MANY,
		    "unexpected file %s/%s", state, de->d_name);
		EXPECT(!seen[i], "job m%06d is in two places (again in %s/)", i, state);
		seen[i] = 1;
		n++;
	}
	closedir(d);
	return n;
}

START_TEST(test_100000_jobs_in_new_at_startup_start_promptly_and_none_is_lost)
{
	unsigned char *seen = calloc(MANY, 1);
	int tmpfd, newfd, fd, ndone, nnew;
	int64_t t0, started, made = t_mono();
	char name[16];
	pid_t owner;

	tmpfd = open(P("%s/tmp", T.spool), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	newfd = open(P("%s/new", T.spool), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	EXPECT(seen && tmpfd != -1 && newfd != -1, "open spool dirs");
	for (int i = 0; i < MANY; i++) {
		snprintf(name, sizeof name, "m%06d", i);
		fd = openat(tmpfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		EXPECT(fd != -1, "create tmp/%s: %s", name, strerror(errno));
		close(fd);
		EXPECT(renameat(tmpfd, name, newfd, name) == 0, "rename %s: %s", name,
		    strerror(errno));
	}
	close(tmpfd);
	close(newfd);

	t0 = t_mono();
	made = t0 - made;
	owner = OWNER("-j", "2", "--drain", QUICK, "--", "/bin/true");
	WAIT_UNTIL(t_count_state("done") > 0, 10000, "with %d jobs in new/, the"
	    " owner finished no job within 10 s:\n%s", MANY, t_log_of(owner));
	started = t_mono() - t0;
	EXPECT(t_stop(owner) == 0, "the owner did not exit 0 on SIGTERM:\n%s",
	    t_log_of(owner));

	nnew = h_tally("new", seen);
	ndone = h_tally("done", seen);
	EXPECT(ndone > 0, "the job that was in done/ before SIGTERM is gone");
	for (int i = 0; i < MANY; i++)
		EXPECT(seen[i], "job m%06d is lost: in neither new/ nor done/", i);
	EXPECT(t_count_state("cur") == 0 && t_count_state("defer") == 0 &&
	    t_count_state("failed") == 0 && t_count_state("tmp") == 0,
	    "jobs left in cur/ %d, defer/ %d, failed/ %d, tmp/ %d",
	    t_count_state("cur"), t_count_state("defer"), t_count_state("failed"),
	    t_count_state("tmp"));
	fprintf(stderr, "check_hostile: %d jobs made in %lld ms; first one done"
	    " %lld ms after the owner started; %d done, %d still in new/ after"
	    " SIGTERM\n", MANY, (long long)made, (long long)started, ndone, nnew);
	free(seen);
}
END_TEST

/* ------------------------------------------------------------------ */
/* What a dead owner, or time, leaves behind                          */
/* ------------------------------------------------------------------ */

#define ORPHANS		500
#define SPENT		10	/* of them, with all 5 attempts used */

START_TEST(test_cur_left_full_by_a_dead_owner_is_requeued_and_drained)
{
	const char *h = t_handler("h_attempt",
	    "echo \"$CHUTE_ID $CHUTE_ATTEMPT\" >> \"$R/journal\"\n");
	int runs[ORPHANS] = { 0 }, attempt[ORPHANS] = { 0 };
	char id[32], *log, *journal, *l;
	const char *where;
	pid_t owner;

	for (int i = 0; i < ORPHANS; i++) {
		snprintf(id, sizeof id, "orphan%03d", i);
		t_write(SP("cur", id), "left behind\n");
		/* the dead owner had started 1 attempt, or all 5 */
		for (int a = 1; a <= (i < SPENT ? 5 : 1); a++) {
			int fd = open(SP("log", id), O_WRONLY | O_CREAT | O_APPEND |
			    O_CLOEXEC, 0600);
			char line[128];
			int len = snprintf(line, sizeof line,
			    "@chute 2026-01-01T00:00:0%d.000Z attempt=%d start\n", a, a);

			EXPECT(fd != -1 && write(fd, line, len) == len, "write log/%s", id);
			close(fd);
		}
	}
	owner = OWNER("-j", "2", "--drain", QUICK, "--", h);
	EXPECT(t_reap(owner, 60000, "chute run --drain of 500 orphans") == 0,
	    "drain exited non-zero:\n%s", t_log_of(owner));

	EXPECT(t_count_state("done") == ORPHANS - SPENT &&
	    t_count_state("failed") == SPENT && t_count_state("cur") == 0 &&
	    t_count_state("new") == 0, "expected %d in done/ and %d in failed/;"
	    " done/ %d, failed/ %d, cur/ %d, new/ %d", ORPHANS - SPENT, SPENT,
	    t_count_state("done"), t_count_state("failed"), t_count_state("cur"),
	    t_count_state("new"));
	/* the journal, once: runs and attempt numbers per orphan */
	journal = t_slurp(RP("journal"));
	for (int i = 0; journal != NULL && (l = t_line(journal, i)) != NULL; i++) {
		int k, a;

		EXPECT(sscanf(l, "orphan%3d %d", &k, &a) == 2 && k >= 0 && k < ORPHANS,
		    "unexpected journal line '%s'", l);
		runs[k]++;
		attempt[k] = a;
	}
	free(journal);
	for (int i = 0; i < ORPHANS; i++) {
		snprintf(id, sizeof id, "orphan%03d", i);
		EXPECT(t_where(id, &where) == 1, "%s is in more than one place", id);
		if (i < SPENT) {
			EXPECT(strcmp(where, "failed") == 0 && runs[i] == 0,
			    "%s had used all its attempts, yet is in %s/ and ran %d times",
			    id, where, runs[i]);
			log = t_slurp(SP("log", id));
			EXPECT(log && strstr(log, "abandoned") &&
			    strstr(log, "attempts exhausted"), "log/%s: '%s'", id,
			    t_snip(log));
			free(log);
		} else {
			EXPECT(strcmp(where, "done") == 0 && runs[i] == 1 && attempt[i] == 2,
			    "%s is in %s/, ran %d times, last as attempt %d (expected once,"
			    " as attempt 2)", id, where, runs[i], attempt[i]);
		}
	}
}
END_TEST

#define STALE	1000

START_TEST(test_stale_files_in_tmp_are_removed_at_startup_and_fresh_ones_kept)
{
	int64_t now = t_now(), h40 = now - 40LL * 3600 * 1000;
	char name[32], *c;
	pid_t owner;

	for (int i = 0; i < STALE; i++) {
		snprintf(name, sizeof name, "stale%04d", i);
		t_write(SP("tmp", name), "old\n");
		t_set_mtime(SP("tmp", name), h40);
	}
	t_write(SP("tmp", "fresh"), "being written\n");
	t_write(SP("tmp", "almost"), "35 hours old\n");
	t_set_mtime(SP("tmp", "almost"), now - 35LL * 3600 * 1000);
	/* a stale symlink goes, not what it points to */
	t_write(RP("precious"), "outside the spool\n");
	EXPECT(symlink(RP("precious"), SP("tmp", "stale-link")) == 0, "symlink");
	t_set_mtime(SP("tmp", "stale-link"), h40);
	/* a link-style submission whose tmp/ name was never removed */
	t_write(SP("tmp", "oldq"), "linked long ago\n");
	EXPECT(link(SP("tmp", "oldq"), SP("new", "oldq")) == 0, "link");
	t_set_mtime(SP("tmp", "oldq"), h40);

	owner = h_drain(h_journal());
	EXPECT(t_count_state("tmp") == 2 && t_exists(SP("tmp", "fresh")) &&
	    t_exists(SP("tmp", "almost")), "tmp/ should keep exactly fresh and"
	    " almost; it has %d files", t_count_state("tmp"));
	c = t_slurp(RP("precious"));
	EXPECT(c && strcmp(c, "outside the spool\n") == 0,
	    "removing a stale tmp/ symlink touched its target");
	free(c);
	EXPECT(t_exists(SP("done", "oldq")) && t_journal_count("oldq") == 1,
	    "the job whose stale tmp/ link was removed did not run once");
	c = t_slurp(RP("seen/oldq"));
	EXPECT(c && strcmp(c, "linked long ago\n") == 0, "oldq's handler read '%s'",
	    t_snip(c));
	free(c);
	EXPECT(strstr(t_log_of(owner), "stale") != NULL,
	    "the owner did not log the removals:\n%s", t_log_of(owner));
}
END_TEST


/* ------------------------------------------------------------------ */
/* Races: a submitter changing new/ under the owner                    */
/* ------------------------------------------------------------------ */

#define H_SWAPS	60

/*
 * A child that exchanges new/job<i> with new/.swap<i> (a symlink to the
 * secret) over and over, until each pair is broken (the owner took the
 * job's name) or ms have passed.  Returns its pid.
 */
static pid_t
h_exchanger(int ms)
{
	pid_t pid = fork();

	EXPECT(pid != -1, "fork: %s", strerror(errno));
	if (pid == 0) {
		int64_t end = t_mono() + ms;
		bool live[H_SWAPS];
		int dir = open(P("%s/new", T.spool), O_RDONLY | O_DIRECTORY), left;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (int i = 0; i < H_SWAPS; i++)
			live[i] = true;
		do {
			left = 0;
			for (int i = 0; i < H_SWAPS; i++) {
				char a[32], b[32];

				if (!live[i])
					continue;
				snprintf(a, sizeof a, "job%d", i);
				snprintf(b, sizeof b, ".swap%d", i);
				if (renameat2(dir, a, dir, b, RENAME_EXCHANGE) == -1)
					live[i] = false;
				left += live[i];
			}
		} while (left > 0 && t_mono() < end);
		_exit(0);
	}
	return pid;
}

/* h_block, ending as root/code says (0 when there is none). */
static const char *
h_block_code(void)
{
	return t_handler("h_block_code",
	    "echo $$ >> \"$R/hpids\"\n"
	    "echo \"$CHUTE_ID $CHUTE_ATTEMPT $$\" >> \"$R/journal\"\n"
	    "i=0\n"
	    "while [ ! -e \"$R/release\" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\n"
	    "[ -e \"$R/code\" ] && exit $(cat \"$R/code\")\n"
	    "exit 0\n");
}

/*
 * The name a running job must move to is taken meanwhile: (_i 0) its
 * submitter links cur/X into new/X, and X then fails; (_i 1) someone puts
 * a file at defer/X, and X then asks to be retried.  The intruder moves
 * aside under a derived name, X goes where its outcome says, its slot
 * is free again and SIGTERM stops the owner.  Two slots: the other one
 * looks at new/X while X runs.
 */
START_TEST(test_a_target_name_taken_while_the_job_runs_is_moved_aside_and_the_slot_freed)
{
	const char *to = _i == 0 ? "failed" : "defer";
	pid_t owner = OWNER("-j", "2", "--max-attempts", _i == 0 ? "1" : "3",
	    "--backoff", "1h", "--", h_block_code());
	char *aside;

	t_submit_as("X", "payload\n");
	WAIT_UNTIL(t_journal_count("X") == 1, 10000, "X to start");
	if (_i == 0)
		EXPECT(link(SP("cur", "X"), SP("new", "X")) == 0, "ln: %s",
		    strerror(errno));
	else {
		/* Due in an hour, so it stays in defer/ meanwhile. */
		t_write(RP("intruder"), "an intruder\n");
		t_set_mtime(RP("intruder"), t_now() + 3600 * 1000);
		EXPECT(rename(RP("intruder"), SP("defer", "X")) == 0, "mv: %s",
		    strerror(errno));
	}
	/* The intruder is seen before X ends (a link in new/ is refused). */
	if (_i == 0)
		WAIT_UNTIL(!t_exists(SP("new", "X")), 10000, "new/X handled:\n%s",
		    t_log_of(owner));
	t_write(RP("code"), _i == 0 ? "1" : "75");
	t_release();
	WAIT_UNTIL(!t_exists(SP("cur", "X")), 10000, "X to leave cur/:\n%s",
	    t_log_of(owner));
	EXPECT(t_exists(SP(to, "X")), "X is not in %s/:\n%s", to, t_log_of(owner));
	EXPECT(unlink(RP("code")) == 0, "rm code");
	t_submit_as("after", "next\n");
	WAIT_UNTIL(t_journal_count("after") == 1, 10000, "the slot was not freed:"
	    "\n%s", t_log_of(owner));
	WAIT_UNTIL(t_exists(SP("done", "after")), 10000, "after to finish");
	EXPECT(t_stop(owner) == 0, "the owner did not stop:\n%s", t_log_of(owner));
	aside = t_other_entry(P("%s/%s", T.spool, to), "X");
	EXPECT(aside != NULL && strncmp(aside, "X-", 2) == 0,
	    "no intruder moved aside in %s/ (%s):\n%s", to, aside ? aside : "none",
	    t_log_of(owner));
	if (_i == 1) {
		char *text = t_slurp(SP("defer", aside));
		EXPECT(text && strcmp(text, "an intruder\n") == 0,
		    "defer/%s is not the intruder", aside);
		free(text);
	}
}
END_TEST

/*
 * The handler (_i 0) or persistent worker (_i 1) reads the job by its
 * path, as {} and the worker's line give it, not from stdin.
 */
START_TEST(test_a_job_exchanged_with_a_symlink_between_check_and_claim_is_never_run_through_it)
{
	const char *h = _i == 0 ? t_handler("h_path",
	    "cat \"$1\" > \"$R/seen/$CHUTE_ID\"\n"
	    "echo \"$CHUTE_ID $CHUTE_ATTEMPT\" >> \"$R/journal\"\n") :
	    t_handler("w_path",
	    "tab=$(printf '\\t')\n"
	    "while IFS=\"$tab\" read -r id path; do\n"
	    "  cat \"$path\" > \"$R/seen/$id\"; echo \"$id 1\" >> \"$R/journal\"; echo ok\n"
	    "done\n");
	struct stat st;
	pid_t owner, ex;
	int code, swapped = 0;
	char *text;

	h_secret("secret", "TOPSECRET-exchanged-in\n");
	for (int i = 0; i < H_SWAPS; i++) {
		t_write(SP("tmp", P("job%d", i)), P("job %d\n", i));
		EXPECT(symlink(RP("secret"), SP("new", P(".swap%d", i))) == 0,
		    "symlink: %s", strerror(errno));
	}
	for (int i = 0; i < H_SWAPS; i++)
		EXPECT(rename(SP("tmp", P("job%d", i)), SP("new", P("job%d", i))) == 0,
		    "rename job%d: %s", i, strerror(errno));
	ex = h_exchanger(15000);
	owner = _i == 0 ? OWNER("-j", "2", QUICK, "--", h, "{}") :
	    OWNER("-j", "2", "--persistent", QUICK, "--", h);
	code = t_reap(ex, 30000, "the exchanger");
	EXPECT(code == 0, "the exchanger exited %d", code);
	/* What the exchange left in new/: each job's name is back or gone. */
	WAIT_UNTIL(t_count_state("new") == 0 && t_count_state("cur") == 0, 20000,
	    "new/ and cur/ to empty");
	EXPECT(t_stop(owner) == 0, "the owner did not stop cleanly:\n%s",
	    t_log_of(owner));
	for (int i = 0; i < H_SWAPS; i++) {
		const char *id = P("job%d", i);

		if (t_exists(SP("done", id)))
			EXPECT(lstat(SP("done", id), &st) == 0 && S_ISREG(st.st_mode),
			    "done/%s is not a regular file", id);
	}
	text = t_slurp(t_proc_of(owner)->log);
	for (char *p = text; p && (p = strstr(p, "between its check and its claim"));
	    p++)
		swapped++;
	free(text);
	fprintf(stderr, "hostile: %s: %d claims found a job exchanged since "
	    "its check; done=%d failed=%d\n", _i ? "--persistent" : "exec",
	    swapped, t_count_state("done"),
	    t_count_state("failed"));
	h_no_leak("TOPSECRET", owner);
}
END_TEST


/* ------------------------------------------------------------------ */
/* Submitters of a group spool, as deployed: owner without CAP_LEASE   */
/* ------------------------------------------------------------------ */

/* Lines the handler counted in its job, by {} (h_count), for id. */
static long
h_counted(const char *id)
{
	char *text = t_slurp(RP(P("seen/%s", id)));
	long n = text ? strtol(text, NULL, 10) : -1;

	free(text);
	return n;
}

static const char *
h_count(void)
{
	return t_handler("h_count", "wc -l < \"$1\" > \"$R/seen/$CHUTE_ID\"\n");
}

/*
 * A file written straight into new/ under a name the owner must change
 * (taken in done/, or not a valid ID) runs whole: the owner's rename is
 * not its completion.  The owner has no lease on another user's file.
 */
START_TEST(test_a_direct_write_renamed_on_arrival_runs_only_once_complete)
{
	const char *h = h_count();
	struct dirent *de;
	pid_t owner;
	int code, n = 0;
	DIR *d;

	if (!t_users())
		return;
	t_group_spool();
	owner = OWNER_AS("chute-t-own", QUICK, "--", h, "{}");
	t_await_lock(owner, 10000);
	code = t_sh_as("chute-t-eve", 10000,
	    "seq 1 3 > tmp/report.csv && mv tmp/report.csv new/report.csv");
	EXPECT(code == 0, "eve's submission exited %d", code);
	WAIT_UNTIL(t_exists(SP("done", "report.csv")), 10000, "report.csv done");
	EXPECT(h_counted("report.csv") == 3, "report.csv ran with %ld lines",
	    h_counted("report.csv"));
	/* The documented daily drop, straight into new/, and a name with a
	 * newline: both renamed by the owner while eve still writes. */
	code = t_sh_as("chute-t-eve", 20000,
	    "(seq 1 500; sleep 1.5; seq 501 1000) > new/report.csv & "
	    "(seq 1 500; sleep 1.5; seq 501 1000) > \"new/$(printf 'nl\\nname')\" & "
	    "wait");
	EXPECT(code == 0, "eve's writers exited %d", code);
	WAIT_UNTIL(t_count_state("done") == 3, 20000, "both writes done:\n%s",
	    t_log_of(owner));
	EXPECT(t_stop(owner) == 0, "the owner did not stop:\n%s", t_log_of(owner));
	EXPECT((d = opendir(P("%s/done", T.spool))) != NULL, "opendir done/");
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || strcmp(de->d_name, "report.csv") == 0)
			continue;
		n++;
		EXPECT(h_counted(de->d_name) == 1000, "%s ran with %ld of its "
		    "1000 lines:\n%s", de->d_name, h_counted(de->d_name),
		    t_log_of(owner));
	}
	closedir(d);
	EXPECT(n == 2, "%d renamed jobs in done/, not 2", n);
}
END_TEST


/*
 * A directory of eve's in new/ cannot be moved by the owner (moving a
 * directory needs write permission on it): refused in place, said once,
 * and --drain still ends.
 */
START_TEST(test_a_directory_the_owner_cannot_move_is_refused_in_place_once)
{
	pid_t owner;
	int code;
	char *text;

	if (!t_users())
		return;
	t_group_spool();
	code = t_sh_as("chute-t-eve", 10000, "mkdir -m 755 new/adir && "
	    "seq 1 3 > tmp/after && mv tmp/after new/after");
	EXPECT(code == 0, "eve's drop exited %d", code);
	owner = OWNER_AS("chute-t-own", "--drain", QUICK, "--", h_count(), "{}");
	code = t_reap(owner, 20000, "chute run --drain");
	EXPECT(code == 0, "the drain exited %d:\n%s", code, t_log_of(owner));
	EXPECT(t_exists(SP("done", "after")) && t_exists(SP("new", "adir")),
	    "after not done, or adir not left in new/:\n%s", t_log_of(owner));
	text = t_slurp(t_proc_of(owner)->log);
	EXPECT(text && strstr(text, "job=adir rejected: not a regular file "
	    "(directory)") && strstr(strstr(text, "job=adir") + 1, "job=adir") ==
	    NULL, "adir was not refused once:\n%s", t_log_of(owner));
	free(text);
}
END_TEST

/* bob's file at path (under T.spool) holds "bob" and is still bob's. */
static bool
h_bobs(const char *path)
{
	char *text = t_slurp(P("%s/%s", T.spool, path));
	struct stat st;
	bool ok = text != NULL && strcmp(text, "bob\n") == 0 &&
	    lstat(P("%s/%s", T.spool, path), &st) == 0 &&
	    st.st_uid == t_uid("chute-t-bob");

	free(text);
	return ok;
}

/*
 * tmp/, new/ and defer/ of a group spool are sticky: eve may not replace
 * (mv -f over), move away or remove a file of bob's in any of them, though
 * she may write into each.  Fails with the directories 02770.
 */
START_TEST(test_a_submitter_cannot_replace_move_or_remove_another_submitters_job)
{
	static const char *const tries[] = {
	    "mv -f tmp/mine new/b-new", "mv -f tmp/mine defer/b-defer",
	    "mv -f tmp/mine tmp/b-tmp", "rm -f new/b-new", "rm -f defer/b-defer",
	    "rm -f tmp/b-tmp", "mv new/b-new tmp/taken",
	    "mv defer/b-defer new/b-defer", "mv tmp/b-tmp new/b-tmp",
	};
	static const char *const bobs[] = { "new/b-new", "defer/b-defer",
	    "tmp/b-tmp" };
	static const char *const sticky[] = { "new", "defer", "tmp" };
	char *chute;
	struct stat st;
	int code;

	if (!t_users())
		return;
	t_group_spool();
	chute = strdup(RP("bin/chute"));	/* P()'s buffers are reused */
	for (int i = 0; i < 3; i++)
		EXPECT(stat(P("%s/%s", T.spool, sticky[i]), &st) == 0 &&
		    (st.st_mode & 07777) == 03770, "%s/: mode %o, not 3770",
		    sticky[i], (unsigned)(st.st_mode & 07777));
	code = t_sh_as("chute-t-bob", 10000, P("echo bob > tmp/b-tmp && "
	    "echo bob | '%s' submit . --id b-new >/dev/null && "
	    "echo bob | '%s' submit . --id b-defer --delay 1h >/dev/null",
	    chute, chute));
	EXPECT(code == 0, "bob's submissions exited %d", code);
	for (size_t i = 0; i < sizeof tries / sizeof tries[0]; i++) {
		code = t_sh_as("chute-t-eve", 10000,
		    P("echo eve > tmp/mine && %s", tries[i]));
		EXPECT(code != 0, "eve's \"%s\" succeeded", tries[i]);
		for (int j = 0; j < 3; j++)
			EXPECT(h_bobs(bobs[j]), "after eve's \"%s\", %s is not "
			    "bob's as he left it", tries[i], bobs[j]);
	}
	/* What she may do: write her own jobs beside his. */
	code = t_sh_as("chute-t-eve", 10000, P("mv tmp/mine new/e-new && "
	    "echo eve | '%s' submit . --id e-defer --delay 1h >/dev/null && "
	    "rm new/e-new", chute));
	EXPECT(code == 0, "eve could not submit or remove her own: %d", code);
	free(chute);
}
END_TEST

/*
 * Sticky directories stop no move of the owner's, whose directories they
 * are: every job of eve's and bob's is claimed from new/, one goes to
 * defer/ (exit 75) and back, bob's deferred job comes back when due, one
 * left in cur/ by a dead owner is recovered into new/ and run, eve's
 * symlink is moved aside to failed/, her stale file in tmp/ is removed.
 */
START_TEST(test_the_owner_still_moves_and_removes_every_submitters_file)
{
	const char *h = t_handler("h_once75",
	    "if [ \"$CHUTE_ID\" = e75 ] && [ ! -e \"$R/seen/e75.once\" ]; then\n"
	    "	: > \"$R/seen/e75.once\"; exit 75\nfi\n"
	    "wc -l < \"$1\" > \"$R/seen/$CHUTE_ID\"\n");
	static const char *const ran[] = { "b1", "b-due", "e1", "e75", "e-cur" };
	char *chute;
	pid_t owner;
	int code;

	if (!t_users())
		return;
	t_group_spool();
	chute = strdup(RP("bin/chute"));	/* P()'s buffers are reused */
	code = t_sh_as("chute-t-bob", 10000, P(
	    "echo bob | '%s' submit . --id b1 >/dev/null && "
	    "echo bob | '%s' submit . --id b-due --delay 1h >/dev/null && "
	    "touch -d '1 minute ago' defer/b-due", chute, chute));
	EXPECT(code == 0, "bob's submissions exited %d", code);
	code = t_sh_as("chute-t-eve", 10000, P(
	    "for id in e1 e75 e-cur; do "
	    "echo eve | '%s' submit . --id $id >/dev/null || exit 1; done && "
	    "ln -s /etc/shadow new/e-link && "
	    "echo old > tmp/e-stale && touch -d '3 days ago' tmp/e-stale",
	    chute));
	EXPECT(code == 0, "eve's submissions exited %d", code);
	/* As a dead owner leaves it: eve's job in cur/ (the owner's rename
	 * out of a sticky new/). */
	code = t_sh_as("chute-t-own", 10000, "mv new/e-cur cur/e-cur");
	EXPECT(code == 0, "the owner could not move eve's job to cur/: %d", code);
	owner = OWNER_AS("chute-t-own", "--drain", QUICK, "--", h, "{}");
	code = t_reap(owner, 30000, "chute run --drain");
	EXPECT(code == 0, "the drain exited %d:\n%s", code, t_log_of(owner));
	for (size_t i = 0; i < sizeof ran / sizeof ran[0]; i++)
		EXPECT(t_exists(SP("done", ran[i])) && h_counted(ran[i]) == 1,
		    "%s not run and done:\n%s", ran[i], t_log_of(owner));
	EXPECT(t_exists(RP("seen/e75.once")), "e75 never exited 75");
	EXPECT(t_exists(SP("failed", "e-link")), "e-link not moved aside:\n%s",
	    t_log_of(owner));
	EXPECT(!t_exists(SP("tmp", "e-stale")), "eve's stale tmp/ file kept:\n%s",
	    t_log_of(owner));
	EXPECT(t_count_state("done") == 5 && t_count_state("failed") == 1,
	    "done %d, failed %d:\n%s", t_count_state("done"),
	    t_count_state("failed"), t_log_of(owner));
	free(chute);
}
END_TEST

/*
 * An existing group spool made before tmp/, new/ and defer/ were sticky:
 * `chute init SPOOL`, run again by its owner, makes them so, and leaves
 * the other directories as they are.
 */
START_TEST(test_init_again_makes_an_old_group_spools_directories_sticky)
{
	static const char *const dirs[] = { "tmp", "new", "defer", "cur",
	    "done", "failed", "log" };
	struct stat st;
	int code;

	if (!t_users())
		return;
	t_group_spool();
	for (int i = 0; i < 3; i++)
		EXPECT(chmod(P("%s/%s", T.spool, dirs[i]), 02770) == 0,
		    "chmod %s", dirs[i]);
	code = t_sh_as("chute-t-own", 10000, P("'%s' init .", RP("bin/chute")));
	EXPECT(code == 0, "chute init again exited %d", code);
	for (int i = 0; i < 7; i++) {
		EXPECT(stat(P("%s/%s", T.spool, dirs[i]), &st) == 0, "stat %s",
		    dirs[i]);
		EXPECT((st.st_mode & 07777) == (i < 3 ? 03770 : 02750),
		    "%s: mode %o after chute init", dirs[i],
		    (unsigned)(st.st_mode & 07777));
	}
}
END_TEST

/*
 * Does /proc/locks show a granted flock on path's inode (a held lock, not
 * a waiter's "->" line)?  The pid that took it, else 0.
 */
static long
h_flocked(const char *path)
{
	char line[512], type[32];
	unsigned long ino;
	unsigned maj, min;
	struct stat st;
	long pid = 0, lpid;
	FILE *f;

	if (stat(path, &st) == -1 || (f = fopen("/proc/locks", "re")) == NULL)
		return 0;
	while (pid == 0 && fgets(line, sizeof line, f) != NULL)
		if (strstr(line, "->") == NULL && sscanf(line,
		    "%*d: %31s %*s %*s %ld %x:%x:%lu", type, &lpid, &maj, &min,
		    &ino) == 5 && strcmp(type, "FLOCK") == 0 &&
		    ino == st.st_ino && makedev(maj, min) == st.st_dev)
			pid = lpid;
	fclose(f);
	return pid;
}

/*
 * eve, a submitter, opens path (relative to the spool) read-only and
 * holds a flock on it (mode: "-x" or "-s") until she is killed; returns
 * her process once /proc/locks shows the lock.
 */
static pid_t
h_eve_flocks(const char *path, const char *mode)
{
	const char *argv[] = { "/bin/sh", "-c", P("exec 3<'%s' && flock %s 3 "
	    "&& exec sleep 120", path, mode), NULL };
	int64_t deadline = t_mono() + 10000;
	pid_t eve;
	int code;

	eve = t_spawn_as("chute-t-eve", argv, NULL, RP("eve.log"),
	    RP("eve.log"), T.spool);
	while (h_flocked(P("%s/%s", T.spool, path)) == 0) {
		EXPECT(!t_poll_exit(eve, &code), "eve's flock %s on %s exited "
		    "%d:\n%s", mode, path, code, t_slurp(RP("eve.log")));
		EXPECT(t_mono() < deadline, "eve holds no flock on %s after "
		    "10 s", path);
		t_nap();
	}
	return eve;
}

/*
 * A submitter of a group spool can open its root and hold the flock on
 * it, the lock of earlier releases: the owner starts all the same (on
 * owner.lock, which she cannot open), runs jobs, says her hold once, and
 * `chute workers` names the owner, not her.  Before owner.lock, the owner
 * exited 75 naming her process.
 */
START_TEST(test_a_submitters_flock_on_the_spool_directory_neither_stops_nor_names_the_owner)
{
	pid_t eve, owner;
	int64_t deadline;
	char mine[32];
	long hers;
	int code;

	if (!t_users())
		return;
	t_group_spool();
	eve = h_eve_flocks(".", "-x");
	hers = h_flocked(T.spool);
	code = t_sh_as("chute-t-eve", 10000, P("'%s' submit . --id e1 "
	    "</dev/null >/dev/null", RP("bin/chute")));
	EXPECT(code == 0, "eve's submission exited %d", code);
	owner = OWNER_AS("chute-t-own", QUICK, "--", h_count(), "{}");
	deadline = t_mono() + 10000;
	while (h_flocked(P("%s/owner.lock", T.spool)) != owner) {
		EXPECT(!t_poll_exit(owner, &code), "the owner exited %d while "
		    "eve held the directory's flock:\n%s", code,
		    t_log_of(owner));
		EXPECT(t_mono() < deadline, "the owner holds no owner.lock "
		    "after 10 s:\n%s", t_log_of(owner));
		t_nap();
	}
	EXPECT(t_await("e1", 20000) == 0, "e1 did not run:\n%s",
	    t_log_of(owner));
	EXPECT(t_log_count(owner, "holds a flock on the spool directory and "
	    "is not its owner") == 1, "her hold was not said once:\n%s",
	    t_log_of(owner));
	code = CHUTE("workers", T.spool);
	snprintf(mine, sizeof mine, ":%ld ", (long)owner);
	EXPECT(code == 0 && strstr(T.out, mine) != NULL, "chute workers "
	    "does not name the owner %ld (%d):\n%s%s", (long)owner, code,
	    T.out, T.err);
	snprintf(mine, sizeof mine, ":%ld ", hers);
	EXPECT(strstr(T.out, mine) == NULL, "chute workers names eve's "
	    "process %ld:\n%s", hers, T.out);
	/* A second owner is still refused: owner.lock is held. */
	code = t_reap(OWNER_AS("chute-t-own", "--", h_count(), "{}"), 10000,
	    "a second chute run");
	EXPECT(code == 75, "a second owner exited %d, not 75", code);
	EXPECT(t_stop(owner) == 0, "the owner did not stop cleanly");
	kill(eve, SIGKILL);
	t_reap(eve, 10000, "eve's flock");
}
END_TEST

/*
 * A submitter holds a shared flock on another's job in new/.  That job
 * is not run while she does (its lock could be a handler's left from an
 * earlier attempt), but it is said once, with the holder's pid; --drain
 * runs the rest and ends, saying what it left; `chute status` shows the
 * job held.  Once she lets go, it runs.  Before, --drain never ended and
 * nothing was said.
 */
START_TEST(test_a_submitters_flock_on_anothers_job_is_said_and_drain_ends)
{
	pid_t eve, owner;
	char *chute;
	int code;

	if (!t_users())
		return;
	t_group_spool();
	chute = strdup(RP("bin/chute"));	/* P()'s buffers are reused */
	code = t_sh_as("chute-t-bob", 10000, P(
	    "echo bob | '%s' submit . --id b1 >/dev/null && "
	    "echo bob | '%s' submit . --id b2 >/dev/null", chute, chute));
	EXPECT(code == 0, "bob's submissions exited %d", code);
	eve = h_eve_flocks("new/b1", "-s");
	owner = OWNER_AS("chute-t-own", "--drain", QUICK, "--", h_count(), "{}");
	code = t_reap(owner, 30000, "chute run --drain");
	EXPECT(code == 0, "the drain exited %d:\n%s", code, t_log_of(owner));
	EXPECT(t_exists(SP("done", "b2")) && t_exists(SP("new", "b1")),
	    "b2 not done, or b1 not left in new/:\n%s", t_log_of(owner));
	EXPECT(t_log_count(owner, "job=b1 held: new/b1 is flocked by pid") == 1,
	    "b1's hold was not said once:\n%s", t_log_of(owner));
	EXPECT(t_log_count(owner, "job=b1 left in new/: held") == 1,
	    "the drain did not say it left b1:\n%s", t_log_of(owner));
	code = CHUTE("status", T.spool, "b1");
	EXPECT(code == 0 && t_token(T.out, "new") && strstr(T.out, " held=") !=
	    NULL, "status of b1 (%d): %s%s", code, T.out, T.err);
	kill(eve, SIGKILL);
	t_reap(eve, 10000, "eve's flock");
	code = CHUTE("status", T.spool, "b1");
	EXPECT(code == 0 && strstr(T.out, "held=") == NULL,
	    "status of b1 once she let go: %s", T.out);
	owner = OWNER_AS("chute-t-own", "--drain", QUICK, "--", h_count(), "{}");
	code = t_reap(owner, 30000, "chute run --drain");
	EXPECT(code == 0 && t_exists(SP("done", "b1")) && h_counted("b1") == 1,
	    "b1 did not run once released (%d):\n%s", code, t_log_of(owner));
	free(chute);
}
END_TEST

/*
 * A dead owner left bob's job in cur/ with no handler running, and eve,
 * a submitter, holds a shared flock on it.  Her process is no handler of
 * an earlier owner (it is hers, alive): the owner says so, recovers the
 * job to new/, where it is said held, and --drain ends.  Once she lets
 * go, it runs.  Before, the owner said "still has a running handler from
 * a previous owner" every second and --drain never ended.
 */
START_TEST(test_a_submitters_flock_on_a_job_left_in_cur_is_no_handler_and_drain_ends)
{
	pid_t eve, owner;
	int code;

	if (!t_users())
		return;
	t_group_spool();
	code = t_sh_as("chute-t-bob", 10000, P("echo bob | '%s' submit . "
	    "--id b1 >/dev/null", RP("bin/chute")));
	EXPECT(code == 0, "bob's submission exited %d", code);
	/* As a claim leaves it: new/b1 -> cur/b1, its owner killed after. */
	EXPECT(rename(SP("new", "b1"), SP("cur", "b1")) == 0, "new/b1 -> "
	    "cur/b1: %s", strerror(errno));
	eve = h_eve_flocks("cur/b1", "-s");
	owner = OWNER_AS("chute-t-own", "--drain", QUICK, "--", h_count(), "{}");
	code = t_reap(owner, 30000, "chute run --drain");
	EXPECT(code == 0, "the drain exited %d:\n%s", code, t_log_of(owner));
	EXPECT(t_exists(SP("new", "b1")) && h_counted("b1") == -1, "b1 not "
	    "recovered to new/, or run while eve held it:\n%s",
	    t_log_of(owner));
	EXPECT(t_log_count(owner, "job=b1 cur/b1 is flocked (by pid") == 1 &&
	    t_log_count(owner, "still has a running handler") == 0,
	    "her hold was not said once as hers:\n%s", t_log_of(owner));
	EXPECT(t_log_count(owner, "job=b1 left in new/: held") == 1,
	    "the drain did not say it left b1:\n%s", t_log_of(owner));
	kill(eve, SIGKILL);
	t_reap(eve, 10000, "eve's flock");
	owner = OWNER_AS("chute-t-own", "--drain", QUICK, "--", h_count(), "{}");
	code = t_reap(owner, 30000, "chute run --drain");
	EXPECT(code == 0 && t_exists(SP("done", "b1")) && h_counted("b1") == 1,
	    "b1 did not run once released (%d):\n%s", code, t_log_of(owner));
}
END_TEST

/*
 * A job's log with a second name (a backup made of hard links) is copied
 * under the shared file's flock before the owner appends to it; eve may
 * read the log, so she may hold that flock.  The owner waits a second at
 * most, appends to the shared file, and runs the job.  Before, it waited
 * for her in flock(2), every job stopped, and --drain never ended.
 */
START_TEST(test_a_submitters_flock_on_a_shared_log_does_not_wedge_the_owner)
{
	char *log;
	pid_t eve, owner;
	int code;

	if (!t_users())
		return;
	t_group_spool();
	code = t_sh_as("chute-t-bob", 10000, P("echo bob | '%s' submit . "
	    "--id b1 >/dev/null", RP("bin/chute")));
	EXPECT(code == 0, "bob's submission exited %d", code);
	log = strdup(P("%s/log/b1", T.spool));
	t_write(log, "earlier output\n");
	EXPECT(chown(log, t_uid("chute-t-own"), t_subs_gid()) == 0 &&
	    chmod(log, 0640) == 0 && link(log, RP("backup-b1")) == 0,
	    "log/b1 and its backup link: %s", strerror(errno));
	eve = h_eve_flocks("log/b1", "-s");
	owner = OWNER_AS("chute-t-own", "--drain", QUICK, "--", h_count(), "{}");
	code = t_reap(owner, 20000, "chute run --drain");
	EXPECT(code == 0 && t_exists(SP("done", "b1")) && h_counted("b1") == 1,
	    "b1 not run while eve held its log's flock (%d):\n%s", code,
	    t_log_of(owner));
	kill(eve, SIGKILL);
	t_reap(eve, 10000, "eve's flock");
	free(log);
}
END_TEST

/* ------------------------------------------------------------------ */


Suite *
hostile_suite(void)
{
	Suite *s = suite_create("hostile");
	TCase *tc;

	tc = t_tcase(t_cli_setup, hostile_teardown, "files", 60);
	tcase_add_test(tc, test_symlink_in_new_to_a_root_only_file_is_rejected_and_never_read);
	tcase_add_test(tc, test_fifo_directory_socket_and_device_in_new_are_rejected_unopened);
	tcase_add_test(tc, test_hard_link_in_new_to_an_outside_file_is_rejected_and_never_read);
	tcase_add_test(tc, test_rejecting_a_hard_link_leaves_the_outside_file_unchanged);
	tcase_add_test(tc, test_hostile_names_are_run_under_safe_ids_and_cannot_forge_log_lines);
	tcase_add_test(tc, test_status_escapes_a_last_outcome_forged_in_the_log);
	tcase_add_test(tc, test_empty_job_runs_and_ends_in_done);
	tcase_add_test(tc, test_job_larger_than_2_gib_is_handed_to_its_handler_whole);
	suite_add_tcase(s, tc);

	tc = t_tcase(t_cli_setup, hostile_teardown, "races", 60);
	tcase_add_loop_test(tc, test_a_job_exchanged_with_a_symlink_between_check_and_claim_is_never_run_through_it, 0, 2);
	tcase_add_loop_test(tc, test_a_target_name_taken_while_the_job_runs_is_moved_aside_and_the_slot_freed, 0, 2);
	suite_add_tcase(s, tc);

	tc = t_tcase(t_cli_setup, hostile_teardown, "users", 60);
	tcase_add_test(tc, test_a_direct_write_renamed_on_arrival_runs_only_once_complete);
	tcase_add_test(tc, test_a_directory_the_owner_cannot_move_is_refused_in_place_once);
	tcase_add_test(tc, test_a_submitter_cannot_replace_move_or_remove_another_submitters_job);
	tcase_add_test(tc, test_the_owner_still_moves_and_removes_every_submitters_file);
	tcase_add_test(tc, test_init_again_makes_an_old_group_spools_directories_sticky);
	tcase_add_test(tc, test_a_submitters_flock_on_the_spool_directory_neither_stops_nor_names_the_owner);
	tcase_add_test(tc, test_a_submitters_flock_on_anothers_job_is_said_and_drain_ends);
	tcase_add_test(tc, test_a_submitters_flock_on_a_shared_log_does_not_wedge_the_owner);
	tcase_add_test(tc, test_a_submitters_flock_on_a_job_left_in_cur_is_no_handler_and_drain_ends);
	suite_add_tcase(s, tc);

	tc = t_tcase(t_cli_setup, hostile_teardown, "leftovers", 120);
	tcase_add_test(tc, test_100000_jobs_in_new_at_startup_start_promptly_and_none_is_lost);
	tcase_add_test(tc, test_cur_left_full_by_a_dead_owner_is_requeued_and_drained);
	tcase_add_test(tc, test_stale_files_in_tmp_are_removed_at_startup_and_fresh_ones_kept);
	suite_add_tcase(s, tc);
	return s;
}
