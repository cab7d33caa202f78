/*
 * view_commit: commits/<id>/, a commit's header fields as files and links.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "view_int.h"

/*
 * commits/<id>/: the commit's header, read and parsed, and what of it the
 * members need kept; not the object, whose message may be any size.
 */
int
commit_dir(struct odbfs *fs, const unsigned char *id, struct node **out)
{
	char what[8 + OID_HEXSZ_MAX], path[16 + OID_HEXSZ_MAX];
	struct reader *r = NULL;
	unsigned char *buf = NULL;
	struct node_ext *x;
	struct node *n;
	size_t len;
	int ret;

	memcpy(what, "commit ", 7);
	oid_to_hex(what + 7, id, fs->rawsz);
	snprintf(path, sizeof(path), "commits/%s", what + 7);
	if (!(n = new_dir(NODE_COMMIT, path, NODE_TIME_REPO)))
		return -ENOMEM;
	if ((ret = node_ext_new(n)) < 0)
		goto out;
	x = n->ext;
	memcpy(x->id, id, fs->rawsz);
	n->type = OBJ_COMMIT;
	if ((ret = odb_reader_open(fs->odb, id, &r)) < 0)
		goto out;
	if (reader_info(r)->type != OBJ_COMMIT) {
		ret = -ENOENT;
		goto out;
	}
	if ((ret = commit_header_read(r, what, &buf, &len)) < 0 ||
	    (ret = commit_parse(&x->commit, what, buf, len,
	    reader_info(r)->size, fs->rawsz)) < 0)
		goto out;
	n->time = x->commit.time;
out:
	free(buf);
	reader_close(r);
	if (ret < 0) {
		node_free(n);
		return ret;
	}
	return intern(n, out);
}

/*
 * commits/<id>/message: the bytes after the header's blank line, read
 * from the object when the file is read (ops.c), never held.
 */
static struct node *
message_file(struct odbfs *fs, const struct node *dir,
    const unsigned char *key, size_t klen)
{
	const struct commit *c = &dir->ext->commit;
	struct node *n = node_new(NODE_SLICE, key, klen);

	if (!n || node_ext_new(n) < 0) {
		node_free(n);
		return NULL;
	}
	memcpy(n->ext->id, node_id(dir), fs->rawsz);
	n->ext->slice_off = c->header_len + 1;
	n->size = c->message_len;
	n->mode = NODE_MODE_FILE;
	n->time = dir->time;
	return n;
}

/* A file or link inside commits/<id>/. */
int
commit_member(struct odbfs *fs, struct node *dir, const char *name,
    struct node **out)
{
	const struct commit *c = &dir->ext->commit;
	unsigned char key[KEY_MAX];
	char hex[OID_HEXSZ_MAX + 2], *path, *data = NULL;
	size_t klen = id_key(key, 'M', node_id(dir), fs->rawsz), len = 0;
	struct node *n;
	int ret;

	memcpy(key + klen, name, strlen(name));
	klen += strlen(name);
	if (!strcmp(name, "tree")) {
		if (asprintf(&path, "%s/tree", dir->path) < 0)
			return -ENOMEM;
		ret = tree_dir(fs, c->tree, path, dir->time, 0, out);
		free(path);
		return ret;
	}
	if (!strcmp(name, "parent") || !strcmp(name, "raw")) {
		char target[32 + OID_HEXSZ_MAX];

		if (!strcmp(name, "parent")) {
			if (!c->nparents)
				return -ENOENT;
			oid_to_hex(hex, c->parents, fs->rawsz);
			snprintf(target, sizeof(target), "../%s", hex);
		} else {
			oid_to_hex(hex, node_id(dir), fs->rawsz);
			snprintf(target, sizeof(target), "../../objects/%s",
			    hex);
		}
		return intern(new_link(key, klen, target, dir->time), out);
	}
	if (!strcmp(name, "message"))
		return intern(message_file(fs, dir, key, klen), out);
	if (!strcmp(name, "parents")) {
		len = c->nparents * (2 * fs->rawsz + 1);
		if (!(data = malloc(len + 1)))
			return -ENOMEM;
		for (size_t i = 0; i < c->nparents; i++) {
			oid_to_hex(data + i * (2 * fs->rawsz + 1),
			    c->parents + i * fs->rawsz, fs->rawsz);
			data[(i + 1) * (2 * fs->rawsz + 1) - 1] = '\n';
		}
	} else if (!strcmp(name, "author") || !strcmp(name, "committer")) {
		const char *v = name[0] == 'a' ? c->author : c->committer;

		if (!v)
			return -ENOENT;
		len = (name[0] == 'a' ? c->author_len : c->committer_len) + 1;
		if ((data = malloc(len + 1))) {
			memcpy(data, v, len - 1);
			data[len - 1] = '\n';
		}
	} else {
		return -ENOENT;
	}
	if (!data)
		return -ENOMEM;
	if (!(n = node_new(NODE_DATA, key, klen))) {
		free(data);
		return -ENOMEM;
	}
	n->data = data;
	n->size = len;
	n->mode = NODE_MODE_FILE;
	n->time = dir->time;
	return intern(n, out);
}
