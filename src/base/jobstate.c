/*
 * jobstate.c: the table of job states, from JOBSTATES in jobstate.h; a
 * state is found by its name here and nowhere else.
 */
#include <string.h>

#include "base/jobstate.h"

#define JS_ROW_(st, name, flags)	[st] = { name, flags },
const struct jobstate jobstates[ST_END] = {
	JOBSTATES(JS_ROW_)
};
#undef JS_ROW_

int
states_where(unsigned mask, unsigned want, int *v)
{
	int n = 0;

	for (int st = ST_FIRST; st < ST_END; st++)
		if ((jobstates[st].flags & mask) == want)
			v[n++] = st;
	return n;
}

int
state_from_name(const char *s)
{
	for (int st = ST_FIRST; st < ST_END; st++)
		if (strcmp(s, jobstates[st].name) == 0)
			return st;
	return ST_NONE;
}
