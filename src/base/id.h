/*
 * id.h, the interface of id.c: job IDs: generated, derived from a dropped
 * name, validated.
 */
#ifndef BASE_ID_H
#define BASE_ID_H

#include <stddef.h>

#define ID_GEN_LEN	96
/*
 * An ID names one file in every state directory, so it must be a plain
 * name: 1..ID_MAX bytes, no '/', no leading '.', (hidden names are ignored)
 * and no control bytes (they would forge log lines and confuse ls).
 */
int	 id_valid(const char *id);

void	 id_generate(char *buf, size_t len);

/* The time, pid and counter part shared by generated and derived IDs. */
void	 id_suffix(char *buf, size_t len);

/*
 * A new ID for a file dropped into new/ whose name cannot be used as it is
 * (taken by another job, or not a valid ID): the name made safe and
 * shortened, then '-' and a fresh suffix, so an operator still recognises
 * report.csv in report.csv-1764475780.123456.0004242_0001.  Attributes
 * at the end of the name (",p=N,k=KEY", base/sched.h) stay at the end of
 * the new ID, so the job keeps its priority and key (a bad one stays bad).
 */
void	 id_derive(const char *name, char *buf, size_t len);

#endif
