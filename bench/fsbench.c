/*
 * fsbench: timed file system work for bench/run.sh, in one process so
 * that what is measured is the file system, not fork and exec.
 *
 *   fsbench stat DIR ROUNDS < names      ns per stat of DIR/name
 *   fsbench read THREADS < paths         seconds to read every file whole
 *   fsbench walk THREADS DIR             the same for every file of DIR's
 *                                        subdirectories, found by readdir
 *                                        as a backup tool finds them
 *
 * stat prints "ns_per_op found"; read and walk print "seconds bytes files".
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static char **
read_lines(size_t *n)
{
	char **v = NULL, *line = NULL;
	size_t cap = 0, alloc = 0;
	ssize_t len;

	*n = 0;
	while ((len = getline(&line, &cap, stdin)) > 0) {
		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		if (*n == alloc) {
			alloc = alloc ? 2 * alloc : 1024;
			v = realloc(v, alloc * sizeof(*v));
		}
		v[(*n)++] = strdup(line);
	}
	free(line);
	return v;
}

static int
bench_stat(const char *dir, int rounds)
{
	size_t n, found = 0;
	char **names = read_lines(&n), path[4096];
	struct stat st;
	double t0 = now();

	for (int r = 0; r < rounds; r++)
		for (size_t i = 0; i < n; i++) {
			snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
			found += stat(path, &st) == 0;
		}
	printf("%.0f %zu\n", (now() - t0) * 1e9 / (double)(n * rounds),
	    found);
	return 0;
}

struct job {
	char **paths;
	size_t n, next, bytes, files;
	pthread_mutex_t lock;
	int dirfd;		/* walk: paths are directories under it */
};

/* Read the file name at dirfd whole; its byte count, or exit on error. */
static size_t
read_whole(int dirfd, const char *name)
{
	static _Thread_local char buf[1 << 20];
	size_t bytes = 0;
	ssize_t got;
	int fd = openat(dirfd, name, O_RDONLY);

	if (fd < 0) {
		perror(name);
		exit(1);
	}
	while ((got = read(fd, buf, sizeof(buf))) > 0)
		bytes += (size_t)got;
	if (got < 0) {
		perror(name);
		exit(1);
	}
	close(fd);
	return bytes;
}

/* walk: read every regular file of one subdirectory, as readdir lists it. */
static void
walk_dir(struct job *j, const char *sub)
{
	size_t bytes = 0, files = 0;
	struct dirent *de;
	int fd = openat(j->dirfd, sub, O_RDONLY | O_DIRECTORY);
	DIR *d;

	if (fd < 0 || !(d = fdopendir(fd))) {
		perror(sub);
		exit(1);
	}
	while ((de = readdir(d)))
		if (de->d_type == DT_REG) {
			bytes += read_whole(dirfd(d), de->d_name);
			files++;
		}
	closedir(d);
	pthread_mutex_lock(&j->lock);
	j->bytes += bytes;
	j->files += files;
	pthread_mutex_unlock(&j->lock);
}

static void *
reader(void *arg)
{
	struct job *j = arg;

	for (;;) {
		size_t i, bytes;

		pthread_mutex_lock(&j->lock);
		i = j->next++;
		pthread_mutex_unlock(&j->lock);
		if (i >= j->n)
			return NULL;
		if (j->dirfd >= 0) {
			walk_dir(j, j->paths[i]);
			continue;
		}
		bytes = read_whole(AT_FDCWD, j->paths[i]);
		pthread_mutex_lock(&j->lock);
		j->bytes += bytes;
		j->files++;
		pthread_mutex_unlock(&j->lock);
	}
}

static int
run_jobs(struct job *j, int threads)
{
	pthread_t t[64];
	double t0;

	pthread_mutex_init(&j->lock, NULL);
	if (threads < 1 || threads > 64)
		threads = 1;
	t0 = now();
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, reader, j);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	printf("%.6f %zu %zu\n", now() - t0, j->bytes, j->files);
	return 0;
}

static int
bench_read(int threads)
{
	struct job j = { .dirfd = -1 };

	j.paths = read_lines(&j.n);
	return run_jobs(&j, threads);
}

/* Threads take dir's subdirectories one at a time (listing dir is untimed). */
static int
bench_walk(int threads, const char *dir)
{
	struct job j = { 0 };
	struct dirent *de;
	size_t alloc = 0;
	DIR *d;

	if ((j.dirfd = open(dir, O_RDONLY | O_DIRECTORY)) < 0 ||
	    !(d = opendir(dir))) {
		perror(dir);
		return 1;
	}
	while ((de = readdir(d)))
		if (de->d_type == DT_DIR && de->d_name[0] != '.') {
			if (j.n == alloc) {
				alloc = alloc ? 2 * alloc : 256;
				j.paths = realloc(j.paths, alloc * sizeof(char *));
			}
			j.paths[j.n++] = strdup(de->d_name);
		}
	closedir(d);
	return run_jobs(&j, threads);
}

int
main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "stat"))
		return bench_stat(argv[2], atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "read"))
		return bench_read(atoi(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "walk"))
		return bench_walk(atoi(argv[2]), argv[3]);
	fprintf(stderr, "usage: fsbench stat DIR ROUNDS < names\n"
	    "       fsbench read THREADS < paths\n"
	    "       fsbench walk THREADS DIR\n");
	return 2;
}
