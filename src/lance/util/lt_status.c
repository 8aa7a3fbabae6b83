#include "util/lt_status.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static lt_interrupt_fn interrupt_hook;
static lt_sleep_fn sleep_hook;

void
lt_set_interrupt_hooks(lt_interrupt_fn interrupted, lt_sleep_fn sleep)
{
	interrupt_hook = interrupted;
	sleep_hook = sleep;
}

lt_code
lt_check_interrupt(lt_error *err, const char *what)
{
	if (interrupt_hook && interrupt_hook())
		return lt_error_set(err, LT_ECANCELED, "canceled while %s", what);
	return LT_OK;
}

lt_code
lt_sleep_us(uint64_t us, lt_error *err, const char *what)
{
	if (sleep_hook)
		sleep_hook(us);
	else
	{
		struct timespec ts = {(time_t) (us / 1000000), (long) (us % 1000000) * 1000};

		nanosleep(&ts, NULL);
	}
	return lt_check_interrupt(err, what);
}

lt_code
lt_error_set(lt_error *err, lt_code code, const char *fmt,...)
{
	if (err)
	{
		va_list		ap;

		err->code = code;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return code;
}

lt_code
lt_error_prefix(lt_error *err, const char *fmt,...)
{
	char		prefix[LT_ERROR_MSG_LEN];
	char		joined[2 * LT_ERROR_MSG_LEN + 4];
	va_list		ap;

	if (!err)
		return LT_EINVALID;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	snprintf(joined, sizeof(joined), "%s: %s", prefix, err->msg);
	memcpy(err->msg, joined, sizeof(err->msg) - 1);
	err->msg[sizeof(err->msg) - 1] = '\0';
	return err->code;
}

const char *
lt_code_name(lt_code code)
{
	switch (code)
	{
		case LT_OK: return "ok";
		case LT_EIO: return "i/o error";
		case LT_ENOTFOUND: return "not found";
		case LT_ECORRUPT: return "corrupt data";
		case LT_EUNSUPPORTED: return "unsupported";
		case LT_ENOMEM: return "out of memory";
		case LT_EINVALID: return "invalid argument";
		case LT_ECONFLICT: return "commit conflict";
		case LT_EACCESS: return "access denied";
		case LT_ECANCELED: return "canceled";
	}
	return "unknown error";
}
