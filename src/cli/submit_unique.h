/*
 * submit_unique.h, the interface of cmd_submit_unique.c: submit's unique
 * keys (--unique KEY, --unique-while, --on-duplicate), parsed once for
 * both programs, and a spool's keyed submit.
 */
#ifndef CLI_SUBMIT_UNIQUE_H
#define CLI_SUBMIT_UNIQUE_H

#include <getopt.h>
#include <stddef.h>

#include "base/sched.h"
#include "base/util.h"
#include "store/spool.h"

/* getopt_long's values of the three options. */
enum { UQ_OPT_KEY = 0x200, UQ_OPT_WHILE, UQ_OPT_DUP };

/* Their rows of a struct option table. */
#define UQ_LONGOPTS \
	{ "unique", required_argument, NULL, UQ_OPT_KEY }, \
	{ "unique-while", required_argument, NULL, UQ_OPT_WHILE }, \
	{ "on-duplicate", required_argument, NULL, UQ_OPT_DUP }

struct uq_opts {
	const char		*key;	/* NULL: no --unique */
	enum unique_while	 w;
	enum unique_dup		 dup;
	bool			 modes;	/* --unique-while or --on-duplicate */
};

/*
 * Option c (UQ_OPT_*) with value v into u: 0, 1 when c is not one of
 * them, or EX_USAGE after the usage line (a bad key, mode).
 */
int	 uq_option(struct uq_opts *u, int c, const char *v);

/* The options together, for n inputs: 0, or EX_USAGE (said). */
int	 uq_check(const struct uq_opts *u, int n);

/*
 * The ID of a job with u's key: id (NULL: a new one) and ",u=KEY", into
 * name: 0, or EX_USAGE (said) when it would be too long or give an
 * attribute twice.
 */
int	 uq_make_id(const struct uq_opts *u, const char *id, char *name,
	    size_t len);

/*
 * Submit file ("-": stdin) to the spool with u's key, under id (NULL: a
 * new one), now or at: prints the ID (the new job's, or the holder's) and
 * returns the exit status (EXIT_HELD: refused), after one line on stderr
 * for anything but 0.
 */
int	 uq_submit_spool(struct spool *sp, const struct uq_opts *u,
	    const char *file, const char *id, msec_t at);

#endif
