/*
 * object: what the store's parsers need of object types beyond the
 * public odbstore/object.h, which it includes.
 */
#ifndef ODBFS_OBJECT_PRIVATE_H
#define ODBFS_OBJECT_PRIVATE_H

#include <stddef.h>

#include "odbstore/object.h"

/* The type named by the len bytes at name, or OBJ_NONE. */
enum obj_type object_type_parse(const char *name, size_t len);

/* Deepest delta chain followed; git's packer never writes more than 4095. */
#define OBJ_MAX_DELTA_DEPTH 10000

#endif
