/*
 * fsbench: timed file system work for bench/run.sh, in one process so
 * that what is measured is the file system, not fork and exec.
 *
 *   fsbench stat DIR ROUNDS < names      ns per stat of DIR/name
 *   fsbench read THREADS < paths         seconds to read every file whole
 *
 * stat prints "ns_per_op found"; read prints "seconds bytes files".
 */
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
};

static void *
reader(void *arg)
{
	struct job *j = arg;
	static _Thread_local char buf[1 << 20];

	for (;;) {
		size_t i;
		ssize_t got;
		int fd;

		pthread_mutex_lock(&j->lock);
		i = j->next++;
		pthread_mutex_unlock(&j->lock);
		if (i >= j->n)
			return NULL;
		if ((fd = open(j->paths[i], O_RDONLY)) < 0) {
			perror(j->paths[i]);
			exit(1);
		}
		while ((got = read(fd, buf, sizeof(buf))) > 0) {
			pthread_mutex_lock(&j->lock);
			j->bytes += (size_t)got;
			pthread_mutex_unlock(&j->lock);
		}
		if (got < 0) {
			perror(j->paths[i]);
			exit(1);
		}
		close(fd);
		pthread_mutex_lock(&j->lock);
		j->files++;
		pthread_mutex_unlock(&j->lock);
	}
}

static int
bench_read(int threads)
{
	struct job j = { 0 };
	pthread_t t[64];
	double t0;

	j.paths = read_lines(&j.n);
	pthread_mutex_init(&j.lock, NULL);
	if (threads < 1 || threads > 64)
		threads = 1;
	t0 = now();
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, reader, &j);
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	printf("%.6f %zu %zu\n", now() - t0, j.bytes, j.files);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "stat"))
		return bench_stat(argv[2], atoi(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "read"))
		return bench_read(atoi(argv[2]));
	fprintf(stderr, "usage: fsbench stat DIR ROUNDS < names\n"
	    "       fsbench read THREADS < paths\n");
	return 2;
}
