/*
 * terminal.h - runs a program in a pseudo-terminal of a given size, as a user's
 * terminal would: the program sees a tty on stdin and stdout (isatty, the
 * window size), the test reads everything it drew and can type keys.
 */
#ifndef GIULIA_TESTS_TERMINAL_H
#define GIULIA_TESTS_TERMINAL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct ts_pty {
	pid_t pid;
	int fd;    /* the terminal's master side */
	char *out; /* everything read so far, NUL-terminated (malloc'd) */
	size_t len, cap;
	int status; /* exit status once ended, else -1 */
};

/* Starts argv (argv[0] a path) in a new pseudo-terminal of `cols` x `rows`,
 * with COLUMNS and LINES unset so that the program asks the terminal. Fails
 * the test when it cannot. */
void ts_pty_spawn(struct ts_pty *p, const char *const argv[], int cols, int rows);
/* Reads until the output holds `needle` (true), the program ends or
 * `timeout_ms` pass (false). */
bool ts_pty_wait_for(struct ts_pty *p, const char *needle, int timeout_ms);
/* Types `keys` into the terminal. */
void ts_pty_type(struct ts_pty *p, const char *keys);
/* Waits up to `timeout_ms` for the program to end (killing it after),
 * reading what is left; returns its exit status (-1 when killed). */
int ts_pty_wait(struct ts_pty *p, int timeout_ms);
/* Frees what `p` holds. */
void ts_pty_destroy(struct ts_pty *p);
/* The output without escape sequences (CSI, OSC), as lines of text; a
 * carriage return alone starts its line again, as a terminal overwrites it
 * (caller frees). */
char *ts_pty_text(const struct ts_pty *p);
/* The first line of `text` wider than `width` terminal columns (counted as
 * base/fmt counts them: UTF-8 characters), copied into `line` of `size`
 * bytes; returns its width, or 0 when every line fits. */
size_t ts_text_overflow(const char *text, size_t width, char *line, size_t size);

#endif
