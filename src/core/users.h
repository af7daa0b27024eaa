/* Internal: user names for uids. */
#ifndef GK_CORE_USERS_H
#define GK_CORE_USERS_H

#include <stddef.h>
#include <sys/types.h>

/* The login name of `uid`, or its number when it has none here (another
 * container's user). */
void gk_user_name(uid_t uid, char *buf, size_t size);

#endif
