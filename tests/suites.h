#ifndef SUITES_H
#define SUITES_H
#include <check.h>
Suite	*util_suite(void);
Suite	*id_suite(void);
Suite	*spool_suite(void);
Suite	*nameq_suite(void);
Suite	*joblog_suite(void);
Suite	*watch_suite(void);
Suite	*ready_suite(void);
Suite	*queue_spool_suite(void);
Suite	*outcome_suite(void);
Suite	*owner_suite(void);
Suite	*cli_suite(void);
Suite	*fault_suite(void);
Suite	*hostile_suite(void);
#endif
