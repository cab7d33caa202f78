/* object: names of object types. */
#include <string.h>

#include "object.h"

static const char *const names[] = {
	[OBJ_COMMIT] = "commit",
	[OBJ_TREE] = "tree",
	[OBJ_BLOB] = "blob",
	[OBJ_TAG] = "tag",
};

const char *
object_type_name(enum obj_type type)
{
	if ((unsigned)type >= sizeof(names) / sizeof(names[0]))
		return NULL;
	return names[type];
}

enum obj_type
object_type_parse(const char *name, size_t len)
{
	for (unsigned t = OBJ_COMMIT; t <= OBJ_TAG; t++)
		if (strlen(names[t]) == len && !memcmp(names[t], name, len))
			return (enum obj_type)t;
	return OBJ_NONE;
}
