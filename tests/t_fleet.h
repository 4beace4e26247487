/*
 * t_fleet.h: what the suites of the fleet against a real server share
 * (check_pgsql.c, check_forward.c): the cluster of the test case (t_pg.c),
 * a fresh database with chute's schema per test, SQL on it through psql,
 * and a submit that must be accepted.
 *
 *	tcase_add_unchecked_fixture(tc, t_fleet_cluster_up, t_pg_stop);
 *	tcase_add_checked_fixture(tc, t_fleet_setup, t_fleet_teardown);
 */
#ifndef T_FLEET_H
#define T_FLEET_H

extern char *t_uri;		/* the test's database */

void	 t_fleet_cluster_up(void);
void	 t_fleet_setup(void);
void	 t_fleet_teardown(void);
char	*t_sql(const char *);
long	 t_sqln(const char *);
void	 t_fleet_submit(const char *, const char *, const char *);

#endif
