/*
 * t_fleet.c: the fixtures and helpers of the suites against a real
 * PostgreSQL server (t_fleet.h): one cluster per test case, one fresh
 * database per test.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t_cli.h"
#include "t_fleet.h"
#include "t_pg.h"

char *t_uri;

/* The test case's cluster: an unchecked fixture, run once by the runner. */
void
t_fleet_cluster_up(void)
{
	ck_assert_msg(t_pg_start() == 0, "%s", t_pg_skip_reason());
}

/* A fresh test directory (t_cli_setup) and a fresh database with the schema. */
void
t_fleet_setup(void)
{
	t_cli_setup();
	t_uri = t_pg_newdb();
	EXPECT(CHUTE("init", t_uri) == 0, "chute init: %s", T.err);
}

void
t_fleet_teardown(void)
{
	t_cli_teardown();
	free(t_uri);
	t_uri = NULL;
}

/* One value from the test's database, through psql as the superuser. */
char *
t_sql(const char *q)
{
	static char out[8192];

	EXPECT(t_pg_sql(t_uri, q, out, sizeof(out)) == 0, "psql %s: %s", q,
	    t_pg_error());
	return out;
}

long
t_sqln(const char *q)
{
	return atol(t_sql(q));
}

/* `chute submit URL --queue queue --id id` of content; it must be accepted. */
void
t_fleet_submit(const char *queue, const char *id, const char *content)
{
	const char *in = RP(P("in.%s", id));

	t_write(in, content);
	EXPECT(CHUTE_IN(in, "submit", t_uri, "--queue", queue, "--id", id) == 0
	    && strcmp(T.out, P("%s\n", id)) == 0, "submit %s: %s%s", id, T.out,
	    T.err);
}
