/*
 * web_page.h: what the dashboard's pages share: the frame around each
 * page, a job's link, an action's form (web_frame.c), and the pages
 * themselves, one function each (web_pages.c: the overview; web_jobs.c:
 * jobs, a job, failures, workers; web_act.c: the actions).
 */
#ifndef WEB_PAGE_H
#define WEB_PAGE_H

#include "chute-web/web.h"

/* The page's start: <head>, the header and navigation; title is ours. */
void	 page_head(const struct web_req *r, struct buf *b, const char *title);
void	 page_foot(struct buf *b);
/* <a href="/job?id=ID">ID</a>, the ID escaped for each place. */
void	 page_job_link(struct buf *b, const char *id);
/*
 * <form method="post" action="/action/NAME"> with the user's CSRF token;
 * page_form_end closes it with a button saying label.  Forms only when
 * --allow-actions.
 */
void	 page_form(const struct web_req *r, struct buf *b, const char *name);
void	 page_form_end(struct buf *b, const char *label);
/*
 * A hidden field whose value is s percent-encoded: bytes that are not
 * UTF-8 survive the browser that way; page_field decodes it back.
 */
void	 page_hidden(struct buf *b, const char *name, const char *s);
/*
 * Field name of the request, percent-decoded once more if it came from
 * page_hidden, into out (len bytes).  Returns false when it is missing,
 * too long, or holds a control byte.
 */
bool	 page_field(const struct web_req *r, const char *name, bool hidden,
	    char *out, size_t len);
/* The age of a time in µs, or "in DUR" for one to come (a deferred job). */
void	 page_when(struct buf *b, int64_t us, msec_t now);
/* The user named in a log's note: "`chute web` (user NAME, uid N)". */
void	 page_by(const struct web_req *r, char *by, size_t len);
/* ... and as who paused, one word as `chute pause`'s user@host: "web:NAME@HOST". */
void	 page_who(const struct web_req *r, char *who, size_t len);

int	 page_overview(const struct web_req *r, struct buf *b);
int	 page_jobs(const struct web_req *r, struct buf *b);
int	 page_job(const struct web_req *r, struct buf *b);
int	 page_failures(const struct web_req *r, struct buf *b);
int	 page_workers(const struct web_req *r, struct buf *b);
int	 act_job(const struct web_req *r, struct buf *b, enum web_act a);
int	 act_matching(const struct web_req *r, struct buf *b);
int	 act_pause(const struct web_req *r, struct buf *b, enum web_act a);

#endif
