/*
 * check_help.c: every subcommand, on a spool and on a postgresql:// URI,
 * answers --help with its usage on stdout and exit 0, and an unknown
 * option with its usage on stderr and exit 64.  The subcommands are read
 * from `chute --help` and from chute-pgsql's own list, so a new one is
 * tested without a line here.  No database is needed: neither answer
 * connects.
 */
#include <sys/wait.h>

#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "suites.h"
#include "t_cli.h"

#define URI	"postgresql://nobody@localhost/none"
#define MAXCMDS	64
#define MAXLOOP	32	/* subcommands tested at most, one test each */

/* Subcommand names from lines "  chute NAME ARGS" of a usage list. */
static int
names_of(const char *list, char names[][32])
{
	int n = 0;
	char *l;

	for (int i = 0; (l = t_line(list, i)) != NULL && n < MAXCMDS; i++)
		if (strncmp(l, "  chute ", 8) == 0 &&
		    sscanf(l + 8, "%31s", names[n]) == 1)
			n++;
	return n;
}

/*
 * chute-pgsql's list of subcommands, as it prints it when run with none:
 * their names, and the list itself in *list (malloc'd).
 */
static int
pg_names(char names[][32], char **list)
{
	char bin[PATH_MAX];
	const char *argv[2] = { bin, NULL };
	pid_t pid;
	int n;

	snprintf(bin, sizeof(bin), "%s/chute-pgsql", dirname(P("%s", T.bin)));
	pid = t_spawn(argv, NULL, RP("pg.out"), RP("pg.err"), NULL);
	EXPECT(t_reap(pid, T_CMD_MS, "chute-pgsql") == 64, "chute-pgsql "
	    "without a subcommand did not exit 64");
	*list = t_slurp(RP("pg.err"));
	n = names_of(*list, names);
	EXPECT(n >= 16, "chute-pgsql listed %d subcommands", n);
	EXPECT(n <= MAXLOOP, "%d subcommands, only %d tested: raise MAXLOOP",
	    n, MAXLOOP);
	return n;
}

/* The usage line of name in the list (static), or NULL. */
static char *
usage_of(const char *list, const char *name)
{
	static char line[1024];
	char *l;

	for (int i = 0; (l = t_line(list, i)) != NULL; i++) {
		char first[32];
		if (strncmp(l, "  chute ", 8) == 0 &&
		    sscanf(l + 8, "%31s", first) == 1 &&
		    strcmp(first, name) == 0) {
			snprintf(line, sizeof(line), "usage: %s\n", l + 2);
			return line;
		}
	}
	return NULL;
}

START_TEST(test_help_and_help_option_print_the_overview_on_stdout)
{
	char *overview;
	int code;

	code = CHUTE("--help");
	EXPECT(code == 0 && T.err[0] == '\0' && strstr(T.out, "usage:\n") ==
	    T.out, "chute --help: exit %d, stdout '%s', stderr '%s'", code,
	    T.out, T.err);
	EXPECT(strstr(T.out, "\nSPOOL may be a PostgreSQL URI (postgresql://")
	    && strstr(T.out, "`chute COMMAND URL --help`"), "the overview says "
	    "where the URL forms are: '%s'", T.out);
	overview = strdup(T.out);
	code = CHUTE("help");
	EXPECT(code == 0 && strcmp(T.out, overview) == 0, "chute help: exit "
	    "%d, '%s'", code, T.out);
	code = CHUTE("help", "run");
	EXPECT(code == 0 && strcmp(T.out, usage_of(overview, "run")) == 0,
	    "chute help run: exit %d, '%s'", code, T.out);
	code = CHUTE("no-such-subcommand");
	EXPECT(code == 64 && T.out[0] == '\0' && strstr(T.err, overview) !=
	    NULL, "unknown subcommand: exit %d, stderr '%s'", code, T.err);
	free(overview);
}
END_TEST

/* One run per subcommand (a loop test): _i is its index in `chute --help`. */
START_TEST(test_every_subcommand_answers_help_and_unknown_options_on_a_spool)
{
	char names[MAXCMDS][32], *overview, *want;
	int n, code;

	EXPECT(CHUTE("--help") == 0, "chute --help failed");
	overview = strdup(T.out);
	n = names_of(overview, names);
	EXPECT(n >= 16, "chute --help listed %d subcommands", n);
	EXPECT(n <= MAXLOOP, "%d subcommands, only %d tested: raise MAXLOOP",
	    n, MAXLOOP);
	if (_i >= n) {
		free(overview);
		return;
	}
	want = usage_of(overview, names[_i]);
	code = CHUTE(names[_i], T.spool, "--help");
	EXPECT(code == 0 && strcmp(T.out, want) == 0 && T.err[0] == '\0',
	    "chute %s SPOOL --help: exit %d, stdout '%s', stderr '%s'; want 0 "
	    "and '%s'", names[_i], code, T.out, T.err, want);
	code = CHUTE(names[_i], "--help");
	EXPECT(code == 0 && strcmp(T.out, want) == 0, "chute %s --help: exit "
	    "%d, '%s'", names[_i], code, T.out);
	code = CHUTE(names[_i], T.spool, "--no-such-option", "x");
	EXPECT(code == 64 && T.out[0] == '\0' &&
	    strstr(T.err, "--no-such-option") != NULL &&
	    strstr(T.err, want) != NULL, "chute %s SPOOL --no-such-option: "
	    "exit %d, stderr '%s'; want 64 and '%s'", names[_i], code, T.err,
	    want);
	free(overview);
}
END_TEST

/* The same for chute-pgsql's subcommands, reached through chute. */
START_TEST(test_every_subcommand_answers_help_and_unknown_options_on_a_uri)
{
	char names[MAXCMDS][32], *list;
	const char *want;
	int n, code;

	n = pg_names(names, &list);
	if (_i >= n) {
		free(list);
		return;
	}
	want = usage_of(list, names[_i]);
	code = CHUTE(names[_i], URI, "--help");
	EXPECT(code == 0 && strcmp(T.out, want) == 0 && T.err[0] == '\0',
	    "chute %s URI --help: exit %d, stdout '%s', stderr '%s'; want 0 "
	    "and '%s'", names[_i], code, T.out, T.err, want);
	code = CHUTE(names[_i], URI, "--no-such-option", "x");
	EXPECT(code == 64 && T.out[0] == '\0' &&
	    strstr(T.err, "--no-such-option") != NULL &&
	    strstr(T.err, want) != NULL, "chute %s URI --no-such-option: exit "
	    "%d, stderr '%s'; want 64 and '%s'", names[_i], code, T.err, want);
	free(list);
}
END_TEST

START_TEST(test_an_id_starting_with_a_dash_goes_after_double_dash)
{
	int code;

	t_submit_as("-odd", "x\n");
	code = CHUTE("status", T.spool, "-odd");
	EXPECT(code == 64, "status SPOOL -odd: exit %d; want 64 (an option)",
	    code);
	code = CHUTE("status", T.spool, "--", "-odd");
	EXPECT(code == 0 && t_token(T.out, "-odd") && t_token(T.out, "new"),
	    "status SPOOL -- -odd: exit %d, '%s' %s", code, T.out, T.err);
}
END_TEST

START_TEST(test_run_help_wins_over_missing_arguments_and_options_take_values)
{
	int code;

	code = CHUTE("run", "--help");
	EXPECT(code == 0 && strncmp(T.out, "usage: chute run SPOOL", 22) == 0,
	    "chute run --help: exit %d, '%s'", code, T.out);
	/* A value that looks like an option is a value. */
	code = CHUTE("wait", T.spool, "--timeout", "--help", "x");
	EXPECT(code == 64 && strstr(T.err, "--timeout --help") != NULL,
	    "wait --timeout --help: exit %d, '%s'", code, T.err);
	/* Long options may be cut short, as getopt_long allows. */
	code = CHUTE("wait", T.spool, "--time", "50ms", "nosuch");
	EXPECT(code == 1, "wait --time 50ms nosuch: exit %d, '%s'", code, T.err);
}
END_TEST

Suite *
help_suite(void)
{
	Suite *s = suite_create("help");
	TCase *tc = t_tcase(t_cli_setup, t_cli_teardown, "help", 120);

	tcase_add_test(tc, test_help_and_help_option_print_the_overview_on_stdout);
	tcase_add_loop_test(tc,
	    test_every_subcommand_answers_help_and_unknown_options_on_a_spool, 0,
	    MAXLOOP);
	tcase_add_loop_test(tc,
	    test_every_subcommand_answers_help_and_unknown_options_on_a_uri, 0,
	    MAXLOOP);
	tcase_add_test(tc, test_an_id_starting_with_a_dash_goes_after_double_dash);
	tcase_add_test(tc, test_run_help_wins_over_missing_arguments_and_options_take_values);
	suite_add_tcase(s, tc);
	return s;
}
