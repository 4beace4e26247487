/*
 * check_main.c: the one runner for every suite.  Unit suites test the
 * pure parts; cli_suite drives build/chute (CHUTE_BIN) end to end.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "suites.h"

int
main(void)
{
	SRunner *sr = srunner_create(util_suite());
	int failed;

	srunner_add_suite(sr, id_suite());
	srunner_add_suite(sr, sched_suite());
	srunner_add_suite(sr, tick_suite());
	srunner_add_suite(sr, spool_suite());
	srunner_add_suite(sr, nameq_suite());
	srunner_add_suite(sr, joblog_suite());
	srunner_add_suite(sr, watch_suite());
	srunner_add_suite(sr, ready_suite());
	srunner_add_suite(sr, queue_spool_suite());
	srunner_add_suite(sr, outcome_suite());
	srunner_add_suite(sr, owner_suite());
	srunner_add_suite(sr, top_suite());
	srunner_add_suite(sr, pump_suite());
	srunner_add_suite(sr, supervise_suite());
	/* Its end-to-end cases stay out under CHUTE_UNIT_ONLY. */
	srunner_add_suite(sr, notify_suite());
	if (getenv("CHUTE_UNIT_ONLY") == NULL) {
		srunner_add_suite(sr, cli_suite());
		srunner_add_suite(sr, help_suite());
		srunner_add_suite(sr, fault_suite());
		srunner_add_suite(sr, hostile_suite());
		srunner_add_suite(sr, pg_harness_suite());
		srunner_add_suite(sr, pgsql_suite());
		srunner_add_suite(sr, pg_view_suite());
		srunner_add_suite(sr, forward_suite());
		srunner_add_suite(sr, metrics_suite());
		srunner_add_suite(sr, unique_suite());
		srunner_add_suite(sr, recurring_suite());
		srunner_add_suite(sr, limits_suite());
	}
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
