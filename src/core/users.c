/* User names for uids, with the number when the name is unknown. */
#include "core/users.h"

#include <pwd.h>
#include <stdio.h>

void gk_user_name(uid_t uid, char *buf, size_t size)
{
    struct passwd entry, *found = NULL;
    char scratch[1024];
    if (getpwuid_r(uid, &entry, scratch, sizeof scratch, &found) == 0 && found)
        snprintf(buf, size, "%s", found->pw_name);
    else
        snprintf(buf, size, "%lu", (unsigned long)uid);
}
