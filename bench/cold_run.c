/*
 * cold_run.c - runs a command once as a fresh process and prints its wall
 * time and its CPU time (user + system, from wait4's rusage, in microsecond
 * steps rather than /usr/bin/time's 10 ms) and its peak resident set as
 * "wall_us N cpu_us N rss_kb N" (rss_kb: the largest child waited for,
 * which is this command since it is the only one). The
 * command's output goes to /dev/null. For bench/bench_cold.sh.
 *
 *   cold_run [-o FILE] [NAME=VALUE] -- COMMAND [ARGS...]
 * (-o: the command's output goes to FILE instead)
 * needs:
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int i = 1;
	const char *out = "/dev/null";
	if (argc > 2 && strcmp(argv[1], "-o") == 0) {
		out = argv[2];
		i = 3;
	}
	for (; i < argc && strcmp(argv[i], "--") != 0; i++)
		putenv(argv[i]);
	if (i + 1 >= argc) {
		fprintf(stderr, "usage: cold_run [-o FILE] [NAME=VALUE] -- COMMAND [ARGS...]\n");
		return 2;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		execvp(argv[i + 1], argv + i + 1);
		_exit(127);
	}
	int status = 0;
	struct rusage ru;
	if (pid < 0 || wait4(pid, &status, 0, &ru) < 0)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	long long wall = (t1.tv_sec - t0.tv_sec) * 1000000LL + (t1.tv_nsec - t0.tv_nsec) / 1000;
	long long cpu = ru.ru_utime.tv_sec * 1000000LL + ru.ru_utime.tv_usec +
	                ru.ru_stime.tv_sec * 1000000LL + ru.ru_stime.tv_usec;
	printf("wall_us %lld cpu_us %lld rss_kb %ld\n", wall, cpu, ru.ru_maxrss);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
