/*
 * lt_status.h — the format library's one error type.
 *
 * Every fallible function returns an lt_code and, on failure, fills an
 * lt_error whose message names the file and, where it matters, the offset.
 * Callers add context on the way up with lt_error_prefix().
 */
#ifndef LT_STATUS_H
#define LT_STATUS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum lt_code
{
	LT_OK = 0,
	LT_EIO,				/* the store failed to read or write */
	LT_ENOTFOUND,		/* dataset, version, tag or file does not exist */
	LT_ECORRUPT,		/* bytes do not parse: truncated, bit-flipped, garbage */
	LT_EUNSUPPORTED,	/* valid Lance, but a feature this library does not handle */
	LT_ENOMEM,
	LT_EINVALID,		/* the caller asked for something impossible */
	LT_ECONFLICT,		/* a concurrent writer got there first */
	LT_EACCESS,			/* the store refused the credentials or the access */
	LT_ECANCELED		/* the caller's interrupt check asked to stop (query cancel) */
} lt_code;

#define LT_ERROR_MSG_LEN 1024

typedef struct lt_error
{
	lt_code		code;
	char		msg[LT_ERROR_MSG_LEN];
} lt_error;

/* Set err (may be NULL) and return code. */
lt_code		lt_error_set(lt_error *err, lt_code code, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));

/* Prepend "context: " to the message already in err; returns err->code. */
lt_code		lt_error_prefix(lt_error *err, const char *fmt,...)
			__attribute__((format(printf, 2, 3)));

const char *lt_code_name(lt_code code);

/* Shorthands for the two commonest failures. */
#define lt_corrupt(err, ...)  lt_error_set((err), LT_ECORRUPT, __VA_ARGS__)
#define lt_nomem(err)         lt_error_set((err), LT_ENOMEM, "out of memory")

/*
 * Waits and long loops answer the caller's cancel.  The caller (the FDW: a query cancel, a terminate,
 * statement_timeout) installs an interrupt check, which long loops poll through lt_check_interrupt,
 * and optionally a sleep that wakes early when interrupted (the FDW: its latch).  Without them:
 * never interrupted, and nanosleep.
 */
typedef bool (*lt_interrupt_fn) (void);
typedef void (*lt_sleep_fn) (uint64_t us);
void		lt_set_interrupt_hooks(lt_interrupt_fn interrupted, lt_sleep_fn sleep);
/* LT_ECANCELED ("canceled while ...") when the caller asked to stop, else LT_OK. */
lt_code		lt_check_interrupt(lt_error *err, const char *what);
/* Sleep us microseconds (or until interrupted), then lt_check_interrupt. */
lt_code		lt_sleep_us(uint64_t us, lt_error *err, const char *what);

#define LT_TRY(expr) \
	do { lt_code lt_try_rc_ = (expr); if (lt_try_rc_ != LT_OK) return lt_try_rc_; } while (0)

#endif
