/*
 * store.h — where a dataset's bytes live (store.c): the endpoint and credentials of an s3:// server,
 * and the library's object store opened for a location.
 *
 * The lowest layer of src/fdw/ with option.h: it includes no other header of src/fdw/.
 */
#ifndef LT_FDW_STORE_H
#define LT_FDW_STORE_H

#include "foreign/foreign.h"

#include "io/lt_store.h"
#include "util/lt_status.h"

/* Where an s3:// server's objects are and the credentials of the current user (store.c). */
typedef struct LtS3Location
{
	char	   *endpoint;		/* NULL: AWS */
	char	   *region;
	bool		path_style;
	bool		allow_http;
	char	   *access_key_id;	/* NULL: unsigned requests */
	char	   *secret_access_key;	/* never printed */
	char	   *session_token;
	bool		ambient;		/* the server process's own credentials (superuser / credentials_required off) */
	char	   *identity;		/* endpoint, region and key id: part of cache keys */
} LtS3Location;

extern bool lt_is_s3_uri(const char *value);
extern void lt_store_init(void);	/* the S3 backend's interrupt check */
/* The endpoint of an s3:// server and the credentials of userid (ERROR 28000 when required and missing). */
extern LtS3Location *lt_s3_location(ForeignServer *server, Oid userid);
/* The endpoint of an s3:// server with credentials a namespace vended (key, secret, token; token may be NULL). */
extern LtS3Location *lt_s3_location_vended(ForeignServer *server, const char *key, const char *secret,
										   const char *token, const char *region);
/* The options of the user mapping of userid (or PUBLIC) on the server; NIL when there is none. */
extern List *lt_user_mapping_options(Oid userid, Oid serverid);
/* A copy in CurrentMemoryContext (NULL for NULL), for state that outlives the statement. */
extern LtS3Location *lt_s3_location_copy(const LtS3Location *s3);
/* Open the store of a location: a local directory, or an s3:// URI through s3 (may be NULL for local). */
extern lt_code lt_open_store(const LtS3Location *s3, const char *dir, lt_store **out, lt_error *err);

#endif
