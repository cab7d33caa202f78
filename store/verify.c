/*
 * verify: object hashing: whether the bytes a reader gives hash to the
 * id asked for (-o verify, odbfs-cat --verify).
 */
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "oid.h"
#include "verify.h"

int
verify_reader(struct reader *r, const unsigned char *id, size_t rawsz)
{
	const struct objinfo *info = reader_info(r);
	const unsigned char *data = reader_data(r);
	unsigned char got[EVP_MAX_MD_SIZE], *buf = NULL;
	char hdr[64], hex[OID_HEXSZ_MAX + 1];
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned int len = 0;
	uint64_t off = 0;
	int n, ret = -ENOMEM;

	if (!ctx)
		return -ENOMEM;
	n = snprintf(hdr, sizeof(hdr), "%s %llu", object_type_name(info->type),
	    (unsigned long long)info->size);
	if (!EVP_DigestInit_ex(ctx, rawsz == 32 ? EVP_sha256() : EVP_sha1(),
	    NULL) || !EVP_DigestUpdate(ctx, hdr, (size_t)n + 1))
		goto out;
	if (data) {
		if (!EVP_DigestUpdate(ctx, data, (size_t)info->size))
			goto out;
	} else {
		if (!(buf = malloc(READER_CHUNK)))
			goto out;
		while (off < info->size) {
			ssize_t got_n = reader_read(r, buf, READER_CHUNK, off);

			if (got_n <= 0) {
				ret = got_n < 0 ? (int)got_n : -EFSCORRUPTED;
				goto out;
			}
			if (!EVP_DigestUpdate(ctx, buf, (size_t)got_n))
				goto out;
			off += (uint64_t)got_n;
		}
	}
	if (!EVP_DigestFinal_ex(ctx, got, &len))
		goto out;
	oid_to_hex(hex, id, rawsz);
	ret = len == rawsz && !memcmp(got, id, rawsz) ? 0 :
	    log_corrupt("object %s: content does not hash to its id", hex);
out:
	free(buf);
	EVP_MD_CTX_free(ctx);
	return ret;
}
