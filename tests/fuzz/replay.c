/*
 * replay: runs a fuzz target over saved inputs without libFuzzer, so that
 * its corpus is a regression test in `make check`. Linked with one
 * tests/fuzz/fuzz_<target>.c into tests/fuzz/replay-<target>, by any C
 * compiler:
 *
 *   replay-<target> FILE|DIR...
 *
 * Each file named, and each file in a directory named (not recursing,
 * skipping dot files, in name order), is read into a buffer of exactly its
 * size and given to LLVMFuzzerTestOneInput() in a child process of its
 * own, so that a crash, an abort from a failed check or a hang (more than
 * REPLAY_TIMEOUT seconds) fails that input alone. Prints TAP, the plan
 * first, then "ok N - <target> <file>" or "not ok N - ..." with a "#" line
 * saying how the child died; exits 1 if any input failed. An input that
 * trips a known store bug (FUZZ_KNOWN in fuzz.h) is "not ok ... # TODO",
 * which TAP, tests/run and this exit status do not count as a failure.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz.h"

#define REPLAY_TIMEOUT 20

struct list {
	char **v;
	size_t n, alloc;
};

static void
add(struct list *l, char *path)
{
	if (l->n == l->alloc) {
		l->alloc = l->alloc ? 2 * l->alloc : 64;
		if (!(l->v = realloc(l->v, l->alloc * sizeof(*l->v)))) {
			perror("replay");
			exit(2);
		}
	}
	l->v[l->n++] = path;
}

static int
visible(const struct dirent *de)
{
	return de->d_name[0] != '.';
}

/* Add path, or the files in it if it is a directory. */
static void
collect(struct list *l, const char *path)
{
	struct dirent **names;
	struct stat st;
	int n;

	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    (n = scandir(path, &names, visible, alphasort)) < 0) {
		add(l, strdup(path));	/* a failure, if it is no file */
		return;
	}
	for (int i = 0; i < n; i++) {
		char *child;

		if (asprintf(&child, "%s/%s", path, names[i]->d_name) < 0) {
			perror("replay");
			exit(2);
		}
		if (stat(child, &st) == 0 && S_ISREG(st.st_mode))
			add(l, child);
		else
			free(child);
		free(names[i]);
	}
	free(names);
}

/* The whole file in a buffer of its size; NULL with errno set. */
static unsigned char *
slurp(const char *path, size_t *size)
{
	unsigned char *buf = NULL;
	struct stat st;
	size_t have = 0;
	ssize_t n;
	int fd, err;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	if (fstat(fd, &st) < 0)
		goto fail;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		goto fail;
	}
	if (!(buf = malloc(st.st_size ? (size_t)st.st_size : 1)))
		goto fail;
	while (have < (size_t)st.st_size &&
	    (n = read(fd, buf + have, (size_t)st.st_size - have)) > 0)
		have += (size_t)n;
	if (have != (size_t)st.st_size) {
		errno = EIO;
		goto fail;
	}
	close(fd);
	*size = have;
	return buf;
fail:
	err = errno;
	free(buf);
	close(fd);
	errno = err;
	return NULL;
}

/*
 * Run one input in a child. 0 if it returned, 1 if it tripped a known
 * bug, else -1; why (whysz bytes) says how it ended when it did not return.
 */
static int
run(const unsigned char *buf, size_t size, char *why, size_t whysz)
{
	pid_t pid;
	int status;

	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) < 0) {
		snprintf(why, whysz, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		alarm(REPLAY_TIMEOUT);
		LLVMFuzzerTestOneInput(buf, size);
		exit(0);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			snprintf(why, whysz, "waitpid: %s", strerror(errno));
			return -1;
		}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status) && WEXITSTATUS(status) == FUZZ_EXIT_KNOWN) {
		snprintf(why, whysz, "known store bug, its check is on stderr");
		return 1;
	}
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		snprintf(why, whysz, "timed out after %d seconds",
		    REPLAY_TIMEOUT);
	else if (WIFSIGNALED(status))
		snprintf(why, whysz, "killed by signal %d (%s)",
		    WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(why, whysz, "exit status %d", WEXITSTATUS(status));
	return -1;
}

int
main(int argc, char **argv)
{
	const char *target = strrchr(argv[0], '/');
	struct list files = { 0 };
	size_t failed = 0;

	target = target ? target + 1 : argv[0];
	if (!strncmp(target, "replay-", 7))
		target += 7;
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++)
		collect(&files, argv[i]);
	printf("1..%zu\n", files.n);
	for (size_t i = 0; i < files.n; i++) {
		unsigned char *buf;
		size_t size = 0;
		char why[128];
		int ret = -1;

		if (!(buf = slurp(files.v[i], &size)))
			snprintf(why, sizeof(why), "%s", strerror(errno));
		else
			ret = run(buf, size, why, sizeof(why));
		printf("%sok %zu - %s %s", ret ? "not " : "", i + 1, target,
		    files.v[i]);
		if (ret > 0) {
			printf(" # TODO %s\n", why);
		} else if (ret < 0) {
			printf("\n#   %s\n", why);
			failed++;
		} else {
			putchar('\n');
		}
		free(buf);
		free(files.v[i]);
	}
	free(files.v);
	return failed ? 1 : 0;
}
