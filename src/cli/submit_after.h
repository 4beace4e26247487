/*
 * submit_after.h, the interface of cmd_submit_after.c: submit's
 * dependencies (--after ID[,ID...], --after-file FILE, --after-failed),
 * parsed once for both programs, and a spool's waiting submit.
 */
#ifndef CLI_SUBMIT_AFTER_H
#define CLI_SUBMIT_AFTER_H

#include <getopt.h>
#include <stddef.h>

#include "store/after.h"
#include "store/spool.h"

/* getopt_long's values of the three options. */
enum { AF_OPT_AFTER = 0x210, AF_OPT_FILE, AF_OPT_FAILED };

#define AF_LONGOPTS \
	{ "after", required_argument, NULL, AF_OPT_AFTER }, \
	{ "after-file", required_argument, NULL, AF_OPT_FILE }, \
	{ "after-failed", required_argument, NULL, AF_OPT_FAILED }

/* The options in submit's usage line. */
#define AFTER_USAGE	"[--after ID[,ID...] | --after-file FILE" \
	" [--after-failed fail|run]]"

/* The most jobs one job may wait for. */
#define AF_MAX_IDS	65536

struct af_opts {
	char		**ids;		/* each its own allocation */
	size_t		 n, cap;
	enum after_mode	 mode;
	bool		 given;		/* --after or --after-file */
	bool		 mode_given;	/* --after-failed */
};

/*
 * Option c (AF_OPT_*) with value v into a: 0, 1 when c is not one of
 * them, or EX_USAGE after one line (an ID that is not one, by its place
 * in the list and not its bytes; a list too long; a file unreadable:
 * EX_NOINPUT).
 */
int	 af_option(struct af_opts *a, int c, const char *v);

/*
 * The options together, for n inputs, with the other options that
 * exclude --after (unique: --unique given; at: --delay or --at): 0, or
 * EX_USAGE (said).
 */
int	 af_check(const struct af_opts *a, int n, bool unique, bool at);

void	 af_free(struct af_opts *a);

/*
 * Submit file ("-": stdin) to the spool as a job waiting for a's jobs,
 * under id (NULL: a new one): each must be a job of the spool (EXIT_NO
 * and one line naming the first that is not; nothing written); its list
 * made durable in after/ID, then the job renamed into wait/ and wait/
 * fsynced; the ID printed.  Returns the exit status.
 */
int	 af_submit_spool(struct spool *sp, const struct af_opts *a,
	    const char *file, const char *id);

#endif
