/*
 * spool.c: the layout.  Opens the spool root and each state directory once
 * as O_DIRECTORY descriptors; every later file operation is an *at() call
 * relative to one of them, so a renamed or symlinked spool path cannot
 * redirect chute half-way through.
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/lock.h"
#include "store/spool.h"

#define DIR_NAME_(st, name, flags)	[st] = name,
const char *const state_names[ST_NDIRS] = {
	[ST_TMP] = "tmp",
	JOBSTATES(DIR_NAME_)
	[ST_LOG] = "log",
};
#undef DIR_NAME_

static int
fsync_path(int at, const char *name)
{
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc;

	if (fd == -1)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

/*
 * Group submitters write tmp/, new/ and defer/; they may read the rest.
 * The writable ones are sticky: a submitter may rename or remove only
 * the files it owns there, not another submitter's job, while the owner,
 * whose directories they are, still moves and removes every file in them.
 */
static mode_t
dir_mode(int st, bool group)
{
	if (!group)
		return 0700;
	if (st == ST_TMP || (st >= ST_FIRST && st < ST_END &&
	    (jobstates[st].flags & JS_SUBMIT)))
		return 03770;
	return 02750;
}

/*
 * A directory of an existing spool that its group (or anyone) may write
 * but that is not sticky, as chute init made them before: made sticky,
 * so that re-running chute init SPOOL mends an old spool.
 */
static int
init_sticky(int at, const char *name)
{
	struct stat st;

	if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return -1;
	if (!S_ISDIR(st.st_mode) || (st.st_mode & (S_IWGRP | S_IWOTH)) == 0 ||
	    (st.st_mode & S_ISVTX))
		return 0;
	return fchmodat(at, name, (st.st_mode & 07777) | S_ISVTX, 0);
}

static int
init_dir(int at, const char *name, mode_t mode, gid_t gid)
{
	if (mkdirat(at, name, mode) == -1) {
		if (errno != EEXIST)
			return -1;
		if (gid == (gid_t)-1)
			return init_sticky(at, name);
	}
	if (gid != (gid_t)-1) {
		if (fchownat(at, name, -1, gid, AT_SYMLINK_NOFOLLOW) == -1 ||
		    fchmodat(at, name, mode, 0) == -1)
			return -1;
	}
	return 0;
}

int
spool_init(const char *path, const char *group)
{
	gid_t gid = (gid_t)-1;
	int root, lk, rc = -1;

	if (group != NULL) {
		struct group *gr = getgrnam(group);
		if (gr == NULL) {
			errno = ESRCH;
			return -1;
		}
		gid = gr->gr_gid;
	}
	if (mkdir(path, group ? 02750 : 0700) == -1 && errno != EEXIST)
		return -1;
	if ((root = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	if (gid != (gid_t)-1 &&
	    (fchown(root, -1, gid) == -1 || fchmod(root, 02750) == -1))
		goto out;
	for (int i = 0; i < ST_NDIRS; i++)
		if (init_dir(root, state_names[i], dir_mode(i, group), gid) == -1)
			goto out;
	/* Unique keys' files (store/unique.c): submitters write them too. */
	if (init_dir(root, "unique", dir_mode(ST_NEW, group), gid) == -1)
		goto out;
	/* Dependency lists (store/after.c): written by submitters too. */
	if (init_dir(root, "after", dir_mode(ST_NEW, group), gid) == -1)
		goto out;
	for (int i = 0; i < ST_NDIRS; i++)
		if (fsync_path(root, state_names[i]) == -1)
			goto out;
	/* An unsafe one (EPERM) is chute run's to refuse, with its reason. */
	if ((lk = lock_make(root)) == -1 && errno != EPERM)
		goto out;
	if (lk != -1)
		close(lk);
	rc = fsync(root);
	if (rc == 0) {
		/* The root's own entry lives in its parent. */
		char *parent = strdup(path), *slash;
		if (parent && (slash = strrchr(parent, '/')) != NULL) {
			*(slash == parent ? slash + 1 : slash) = '\0';
			fsync_path(AT_FDCWD, parent);
		} else if (parent)
			fsync_path(AT_FDCWD, ".");
		free(parent);
	}
out:
	close(root);
	return rc;
}

/*
 * wait/ in a spool made before it (store/after.c's state): made here with
 * new/'s mode and group, as unique/ is, by the first chute that may (the
 * owner always may).  One that may not (a reader, a group's submitter)
 * goes on without it: nothing can be waiting there, and the scans and
 * lookups of a descriptor of -1 find nothing (spool_scan, spool_locate).
 */
static int
open_wait(struct spool *sp)
{
	struct stat s;
	int fd;

	fd = openat(sp->root, state_names[ST_WAIT], O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC);
	if (fd != -1 || errno != ENOENT)
		return fd;
	if (fstat(sp->dir[ST_NEW], &s) == -1)
		return -1;
	if (mkdirat(sp->root, state_names[ST_WAIT], 0700) == -1 &&
	    errno != EEXIST)
		return errno == EACCES || errno == EPERM || errno == EROFS ?
		    -2 : -1;
	/*
	 * new/'s owner and group, so that root's `chute ls` of an older
	 * spool does not leave its owner a wait/ it cannot rename out of;
	 * then the mode, which the umask may have cut (chmod is not cut,
	 * and comes after the chown, which may clear the setgid bit).
	 */
	(void)fchownat(sp->root, state_names[ST_WAIT], s.st_uid, s.st_gid,
	    AT_SYMLINK_NOFOLLOW);
	(void)fchmodat(sp->root, state_names[ST_WAIT], s.st_mode & 07777, 0);
	return openat(sp->root, state_names[ST_WAIT], O_RDONLY | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC);
}

int
spool_open(struct spool *sp, const char *path)
{
	sp->root = -1;
	sp->lock = -1;
	sp->dirty = 0;
	for (int i = 0; i < ST_NDIRS; i++) {
		sp->dir[i] = -1;
		sp->fmode[i] = 0;
	}
	sp->path = realpath(path, NULL);
	if (sp->path == NULL)
		return -1;
	sp->root = open(sp->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sp->root == -1)
		goto fail;
	for (int i = 0; i < ST_NDIRS; i++) {
		if (i == ST_WAIT)
			continue;
		sp->dir[i] = openat(sp->root, state_names[i],
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sp->dir[i] == -1)
			goto fail;
	}
	if ((sp->dir[ST_WAIT] = open_wait(sp)) == -1)
		goto fail;
	if (sp->dir[ST_WAIT] == -2)
		sp->dir[ST_WAIT] = -1;
	return 0;
fail:
	spool_close(sp);
	return -1;
}

mode_t
spool_fmode(struct spool *sp, int st)
{
	struct stat s;

	if (sp->fmode[st] == 0)
		sp->fmode[st] = fstat(sp->dir[st], &s) == 0 &&
		    (s.st_mode & 0070) ? 0640 : 0600;
	return sp->fmode[st];
}

void
spool_close(struct spool *sp)
{
	int saved = errno;

	for (int i = 0; i < ST_NDIRS; i++) {
		if (sp->dir[i] != -1)
			close(sp->dir[i]);
		sp->dir[i] = -1;
	}
	if (sp->root != -1)
		close(sp->root);
	if (sp->lock != -1)
		close(sp->lock);
	sp->lock = -1;
	free(sp->path);
	sp->path = NULL;
	sp->root = -1;
	errno = saved;
}

int
spool_locate(struct spool *sp, const char *id, struct stat *st)
{
	struct stat tmp;

	if (st == NULL)
		st = &tmp;
	for (int round = 0; round < 2; round++)
		for (int s = ST_FIRST; s < ST_END; s++)
			if (fstatat(sp->dir[s], id, st,
			    AT_SYMLINK_NOFOLLOW) == 0)
				return s;
	return ST_NONE;
}

bool
spool_fs_trusted(long f_type, const char **name)
{
	static const struct { long magic; const char *name; } bad[] = {
		{ 0x6969, "NFS" },
		{ 0xff534d42, "CIFS" },
		{ 0xfe534d42, "SMB2" },
		{ 0x517b, "SMB" },
		{ 0x5346414f, "AFS" },
		{ 0x6b414653, "AFS" },
		{ 0x73757245, "Coda" },
		{ 0x564c, "NCP" },
		{ 0x01021997, "9p" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if ((unsigned long)f_type == (unsigned long)bad[i].magic) {
			if (name)
				*name = bad[i].name;
			return false;
		}
	}
	return true;
}

int
spool_check_fs(struct spool *sp, const char **fs)
{
	struct statfs sf;

	if (fstatfs(sp->root, &sf) == -1)
		return -1;
	if (!spool_fs_trusted(sf.f_type, fs)) {
		errno = EREMOTE;
		return -1;
	}
	return 0;
}

int
spool_fsync_dir(struct spool *sp, int st)
{
	int rc;

	while ((rc = fsync(sp->dir[st])) == -1 && errno == EINTR)
		;
	return rc;
}

char *
spool_jobpath(struct spool *sp, int st, const char *id)
{
	char *p;

	if (asprintf(&p, "%s/%s/%s", sp->path, state_names[st], id) == -1)
		return NULL;
	return p;
}

int
spool_scan(struct spool *sp, int st, int (*fn)(void *, const char *),
    void *arg)
{
	struct dirent *de;
	DIR *d;
	int fd, rc = 0;

	if (sp->dir[st] == -1 && st == ST_WAIT)
		return 0;	/* an old spool's, that we may not make: empty */
	fd = openat(sp->dir[st], ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd == -1 || (d = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		return -1;
	}
	while (rc == 0 && (de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			rc = fn(arg, de->d_name);
	closedir(d);
	return rc;
}

static int
stop_at_first(void *arg, const char *name)
{
	return 1;
}

bool
spool_empty(struct spool *sp, int st)
{
	return spool_scan(sp, st, stop_at_first, NULL) == 0;
}

int
spool_sync(struct spool *sp)
{
	for (int i = 0; i < ST_NDIRS; i++) {
		if (!(sp->dirty & 1u << i) || sp->dir[i] == -1)
			continue;
		if (spool_fsync_dir(sp, i) == -1)
			return -1;
		sp->dirty &= ~(1u << i);
	}
	return 0;
}
