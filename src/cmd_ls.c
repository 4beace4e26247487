/*
 * cmd_ls.c: `chute ls` and `chute stats`: what is in the spool, read
 * straight from the directories.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chute.h"

static const int job_states[] = { ST_NEW, ST_CUR, ST_DEFER, ST_DONE, ST_FAILED };
#define NJOBSTATES	5

struct entry {
	msec_t	 mtime;
	int	 state;
	char	*id;
};

struct listing {
	struct spool	*sp;
	int		 state;
	struct entry	*v;
	size_t		 n, cap;
	size_t		 count[ST_NDIRS];
	msec_t		 oldest[ST_NDIRS];	/* 0: none */
	bool		 keep;			/* ls: remember every entry */
};

static int
collect(void *arg, const char *name)
{
	struct listing *l = arg;
	struct stat st;
	msec_t m;

	if (fstatat(l->sp->dir[l->state], name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return 0;		/* moved on while we looked */
	m = (msec_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
	l->count[l->state]++;
	if (l->oldest[l->state] == 0 || m < l->oldest[l->state])
		l->oldest[l->state] = m;
	if (!l->keep)
		return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		struct entry *v = reallocarray(l->v, cap, sizeof(*v));
		if (v == NULL)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n].mtime = m;
	l->v[l->n].state = l->state;
	if ((l->v[l->n].id = strdup(name)) == NULL)
		return -1;
	l->n++;
	return 0;
}

static int
read_states(struct listing *l, int only)
{
	for (int i = 0; i < NJOBSTATES; i++) {
		if (only != ST_NONE && job_states[i] != only)
			continue;
		l->state = job_states[i];
		if (spool_scan(l->sp, l->state, collect, l) != 0) {
			fprintf(stderr, "chute: %s/%s: %s\n", l->sp->path,
			    state_names[l->state], strerror(errno));
			return EX_IOERR;
		}
	}
	return 0;
}

static int
by_mtime(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->mtime != y->mtime)
		return x->mtime < y->mtime ? -1 : 1;
	return strcmp(x->id, y->id);
}

int
cmd_ls(int argc, char **argv)
{
	struct spool sp;
	struct listing l = { .sp = &sp, .keep = true };
	int only = ST_NONE, rc;
	msec_t now = now_ms();

	if (argc < 2 || argc > 3)
		return usage_error("ls", "want SPOOL and at most one STATE");
	if (argc == 3 && ((only = state_from_name(argv[2])) == ST_NONE ||
	    only == ST_TMP || only == ST_LOG))
		return usage_error("ls", "%s: not a state", argv[2]);
	if ((rc = open_spool_or_exit(&sp, argv[1])) != 0)
		return rc;
	if ((rc = read_states(&l, only)) != 0)
		goto out;
	qsort(l.v, l.n, sizeof(*l.v), by_mtime);
	printf("%-7s %10s %8s  %s\n", "STATE", "AGE", "ATTEMPTS", "ID");
	for (size_t i = 0; i < l.n; i++) {
		struct joblog_info ji;
		char age[32], vis[1024];

		joblog_read(&sp, l.v[i].id, &ji);
		if (l.v[i].state == ST_DEFER && l.v[i].mtime > now) {
			age[0] = '-';
			dur_format(l.v[i].mtime - now, age + 1, sizeof(age) - 1);
		} else
			dur_format(now - l.v[i].mtime, age, sizeof(age));
		vis_name(l.v[i].id, vis, sizeof(vis));
		printf("%-7s %10s %8d  %s\n", state_names[l.v[i].state], age,
		    ji.attempts, vis);
	}
	rc = fflush(stdout) == EOF ? EX_IOERR : 0;
out:
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i].id);
	free(l.v);
	spool_close(&sp);
	return rc;
}

static void
print_stats(struct listing *l, pid_t owner, bool prom)
{
	msec_t oldest = l->oldest[ST_NEW], now = now_ms();
	char age[32] = "-";

	if (oldest != 0)
		dur_format(now > oldest ? now - oldest : 0, age, sizeof(age));
	for (int i = 0; i < NJOBSTATES; i++) {
		int s = job_states[i];
		if (prom)
			printf("chute_jobs{state=\"%s\"} %zu\n", state_names[s],
			    l->count[s]);
		else
			printf("%-17s %zu\n", state_names[s], l->count[s]);
	}
	if (prom) {
		printf("chute_oldest_queued_seconds %.3f\n", oldest ?
		    (now - oldest) / 1000.0 : 0.0);
		printf("chute_owner_up %d\nchute_owner_pid %ld\n", owner != 0,
		    owner > 0 ? (long)owner : 0L);
		return;
	}
	printf("%-17s %s\n", "oldest_queued_age", age);
	if (owner == 0)
		printf("%-17s no owner\n", "owner");
	else if (owner == -1)
		printf("%-17s unknown pid (lock held)\n", "owner");
	else
		printf("%-17s %ld\n", "owner", (long)owner);
}

int
cmd_stats(int argc, char **argv)
{
	struct spool sp;
	struct listing l = { .sp = &sp };
	bool prom = false;
	int rc;

	if (argc == 3 && strcmp(argv[2], "--prometheus") == 0)
		prom = true;
	else if (argc != 2)
		return usage_error("stats", "want SPOOL [--prometheus]");
	if ((rc = open_spool_or_exit(&sp, argv[1])) != 0)
		return rc;
	if ((rc = read_states(&l, ST_NONE)) == 0) {
		if (prom)
			printf("# HELP chute_jobs Jobs per state directory.\n"
			    "# TYPE chute_jobs gauge\n");
		print_stats(&l, lock_owner(&sp), prom);
		rc = fflush(stdout) == EOF ? EX_IOERR : 0;
	}
	spool_close(&sp);
	return rc;
}
