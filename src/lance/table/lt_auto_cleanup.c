/*
 * lt_auto_cleanup.c — when and how Lance's writers clean up after a commit (lt_cleanup.h has the rule),
 * from the lance.auto_cleanup.* keys of the committed version's config.
 */
#include "table/lt_cleanup.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "proto/lt_table.pb-c.h"

/* humantime's units, in milliseconds (a month is 30.44 days, a year 365.25, as humantime counts them) */
static const struct
{
	const char *name;
	double		ms;
} units[] = {
	{"nanos", 1e-6}, {"nsec", 1e-6}, {"ns", 1e-6},
	{"usec", 1e-3}, {"us", 1e-3},
	{"millis", 1}, {"msec", 1}, {"ms", 1},
	{"seconds", 1e3}, {"second", 1e3}, {"secs", 1e3}, {"sec", 1e3}, {"s", 1e3},
	{"minutes", 60e3}, {"minute", 60e3}, {"mins", 60e3}, {"min", 60e3}, {"m", 60e3},
	{"hours", 3600e3}, {"hour", 3600e3}, {"hrs", 3600e3}, {"hr", 3600e3}, {"h", 3600e3},
	{"days", 86400e3}, {"day", 86400e3}, {"d", 86400e3},
	{"weeks", 7 * 86400e3}, {"week", 7 * 86400e3}, {"w", 7 * 86400e3},
	{"months", 2630016e3}, {"month", 2630016e3}, {"M", 2630016e3},
	{"years", 31557600e3}, {"year", 31557600e3}, {"y", 31557600e3},
};

lt_code
lt_parse_duration_ms(const char *text, int64_t *ms, lt_error *err)
{
	const char *p = text;
	double		total = 0;
	int			terms = 0;

	for (;;)
	{
		double		n = 0;
		size_t		ulen;
		size_t		u;

		while (*p == ' ')
			p++;
		if (*p == '\0')
			break;
		if (!isdigit((unsigned char) *p))
			return lt_error_set(err, LT_EINVALID, "invalid duration \"%s\": a number expected", text);
		while (isdigit((unsigned char) *p))
			n = n * 10 + (*p++ - '0');
		while (*p == ' ')
			p++;
		for (ulen = 0; isalpha((unsigned char) p[ulen]); ulen++)
			;
		if (ulen == 0)
			return lt_error_set(err, LT_EINVALID, "invalid duration \"%s\": a time unit needed", text);
		for (u = 0; u < sizeof(units) / sizeof(units[0]); u++)
			if (strlen(units[u].name) == ulen && strncmp(units[u].name, p, ulen) == 0)
				break;
		if (u == sizeof(units) / sizeof(units[0]))
			return lt_error_set(err, LT_EINVALID, "invalid duration \"%s\": unknown time unit \"%.*s\"", text,
								(int) ulen, p);
		total += n * units[u].ms;
		p += ulen;
		terms++;
	}
	if (terms == 0)
		return lt_error_set(err, LT_EINVALID, "invalid duration \"%s\": empty", text);
	*ms = total >= 9.2e18 ? INT64_MAX : (int64_t) total;
	return LT_OK;
}

static const char *
config_get(const Lt__Pb__Manifest *m, const char *key)
{
	for (size_t i = 0; i < m->n_config; i++)
		if (m->config[i]->key && strcmp(m->config[i]->key, key) == 0)
			return m->config[i]->value ? m->config[i]->value : "";
	return NULL;
}

/* An unsigned decimal integer (Rust's u64 parse: digits only, an optional '+'). */
static lt_code
parse_u64(const char *key, const char *value, uint64_t *out, lt_error *err)
{
	const char *p = value[0] == '+' ? value + 1 : value;
	uint64_t	v = 0;

	if (*p == '\0')
		return lt_error_set(err, LT_EINVALID, "invalid %s \"%s\": an unsigned integer expected", key, value);
	for (; *p; p++)
	{
		if (!isdigit((unsigned char) *p) || v > (UINT64_MAX - 9) / 10)
			return lt_error_set(err, LT_EINVALID, "invalid %s \"%s\": an unsigned integer expected", key, value);
		v = v * 10 + (uint64_t) (*p - '0');
	}
	*out = v;
	return LT_OK;
}

bool
lt_auto_cleanup_due(const Lt__Pb__Manifest *m, uint64_t version)
{
	const char *interval_s = config_get(m, "lance.auto_cleanup.interval");
	uint64_t	interval;
	lt_error	err;

	if (!interval_s)
		return false;
	return parse_u64("lance.auto_cleanup.interval", interval_s, &interval, &err) != LT_OK || interval == 0 ||
		version % interval == 0;
}

lt_code
lt_auto_cleanup_policy(const Lt__Pb__Manifest *m, uint64_t version, int64_t now_ms, lt_cleanup_policy *policy,
					   bool *due, lt_error *err)
{
	const char *interval_s = config_get(m, "lance.auto_cleanup.interval");
	const char *older_than = config_get(m, "lance.auto_cleanup.older_than");
	const char *retain = config_get(m, "lance.auto_cleanup.retain_versions");
	uint64_t	interval;

	*due = false;
	if (!interval_s)
		return LT_OK;
	LT_TRY(parse_u64("lance.auto_cleanup.interval", interval_s, &interval, err));
	if (interval == 0)
		return lt_error_set(err, LT_EINVALID, "invalid lance.auto_cleanup.interval \"0\": it must be positive");
	if (version % interval != 0)
		return LT_OK;

	memset(policy, 0, sizeof(*policy));
	policy->now_ms = now_ms;
	policy->before_ms = INT64_MAX;	/* no older_than: the time does not hold any version back */
	if (older_than)
	{
		int64_t		ms;

		LT_TRY(lt_parse_duration_ms(older_than, &ms, err));
		policy->before_ms = ms > now_ms ? INT64_MIN : now_ms - ms;
	}
	if (retain)
	{
		uint64_t	n;

		LT_TRY(parse_u64("lance.auto_cleanup.retain_versions", retain, &n, err));
		if (n == 0)				/* Lance's hook fails on it too (it indexes past its list of versions) */
			return lt_error_set(err, LT_EINVALID, "invalid lance.auto_cleanup.retain_versions \"0\": it must be positive");
		policy->retain_versions = n;
	}
	policy->delete_unverified = false;
	policy->error_if_tagged_old_versions = false;
	*due = true;
	return LT_OK;
}

void
lt_auto_cleanup_decide(const Lt__Pb__Manifest *m, uint64_t version, int64_t now_ms, lt_auto_cleanup *out)
{
	bool		due = false;

	memset(out, 0, sizeof(*out));
	if (!lt_auto_cleanup_due(m, version))
		return;
	out->due = true;
	out->rc = lt_auto_cleanup_policy(m, version, now_ms, &out->policy, &due, &out->err);
	if (out->rc == LT_OK && !due)
		out->due = false;		/* cannot happen: lt_auto_cleanup_due said it is */
}
