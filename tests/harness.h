/*
 * harness.h - Giulia's in-tree test harness.
 *
 * A suite is a C program whose main() calls th_main() with a NULL-terminated
 * table of tests. Each test runs in a forked child of its own, in a process
 * group of its own, with a fresh temporary directory (th_tmpdir()). Whatever
 * the test started (BEAM nodes, daemons) is killed with its process group
 * when the test ends, passed or failed, and the directory is removed; cleanup
 * hooks registered with th_defer() run first, in reverse order.
 *
 * Assertions are typed and say what they compared. A failed assertion ends
 * the test. Each suite prints a line `#TOTALS passed failed skipped` that
 * tests/run.sh sums into the final `N passed, N failed, N skipped`.
 *
 * A suite declares the Debian packages it needs in a `needs:` line near its
 * top (scripts/deps.sh installs them for `make test` and checks that its
 * test list has them); a test that finds one missing fails through TH_NEED.
 *
 * Usage: suite [-l] [NAME...]   (-l lists tests; NAMEs select tests)
 * Environment: TH_TIMEOUT (seconds per test, default 300).
 */
#ifndef GIULIA_TESTS_HARNESS_H
#define GIULIA_TESTS_HARNESS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

struct th_test {
	const char *name;
	void (*fn)(void);
};

#define TH_TEST(fn)     \
	{               \
#fn, fn \
	}
#define TH_END             \
	{                  \
		NULL, NULL \
	}

int th_main(int argc, char **argv, const char *suite, const struct th_test *tests);

/* The test's own temporary directory (removed after the test). */
const char *th_tmpdir(void);
/* Runs fn(arg) when the test ends, whatever the outcome (last registered first).
 * The hooks run after the test function has returned: `arg` must be static or
 * on the heap, never a local of the test function. */
void th_defer(void (*fn)(void *), void *arg);
/* Ends the test as skipped with a reason: only for a capability the machine
 * genuinely lacks (say so in the reason), never for a missing package, which
 * is a failure (TH_NEED). Skips are counted in the summary line. */
void th_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Ends the test as failed because `package`, a Debian package the suite
 * declares in its needs: line, is missing (used by TH_NEED). */
void th_fail_missing(const char *file, int line, const char *package, const char *fmt, ...)
    __attribute__((format(printf, 4, 5), noreturn));
/* True when `program` is an executable file in a directory of $PATH. */
bool th_have_program(const char *program);
/* True when the OTP library directory `app` (e.g. "p1_pgsql": the directory
 * name, not always the application's) is in /usr/lib/erlang/lib. */
bool th_have_otp_app(const char *app);
/* Ends the test as failed (used by the macros). */
void th_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));
/* The directory holding the built binaries (bin/ of the variant under test). */
const char *th_bindir(void);
/* The repository's root directory. */
const char *th_srcdir(void);

#define TH_ASSERT(cond)                                                             \
	do {                                                                        \
		if (!(cond))                                                        \
			th_fail(__FILE__, __LINE__, "assertion failed: %s", #cond); \
	} while (0)

#define TH_ASSERT_MSG(cond, ...)                                  \
	do {                                                      \
		if (!(cond))                                      \
			th_fail(__FILE__, __LINE__, __VA_ARGS__); \
	} while (0)

#define TH_ASSERT_INT_EQ(a, b)                                                               \
	do {                                                                                 \
		long long th_a_ = (long long)(a), th_b_ = (long long)(b);                    \
		if (th_a_ != th_b_)                                                          \
			th_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, th_a_, \
			        th_b_);                                                      \
	} while (0)

#define TH_ASSERT_INT_GE(a, b)                                                              \
	do {                                                                                \
		long long th_a_ = (long long)(a), th_b_ = (long long)(b);                   \
		if (!(th_a_ >= th_b_))                                                      \
			th_fail(__FILE__, __LINE__, "%s >= %s: %lld < %lld", #a, #b, th_a_, \
			        th_b_);                                                     \
	} while (0)

#define TH_ASSERT_DBL_NEAR(a, b, eps)                                                            \
	do {                                                                                     \
		double th_a_ = (double)(a), th_b_ = (double)(b);                                 \
		if (!(th_a_ - th_b_ <= (eps) && th_b_ - th_a_ <= (eps)))                         \
			th_fail(__FILE__, __LINE__, "%s ~= %s: %g vs %g", #a, #b, th_a_, th_b_); \
	} while (0)

#define TH_ASSERT_STR_EQ(a, b)                                                            \
	do {                                                                              \
		const char *th_a_ = (a), *th_b_ = (b);                                    \
		if (!th_a_ || !th_b_ || strcmp(th_a_, th_b_) != 0)                        \
			th_fail(__FILE__, __LINE__, "%s == %s: \"%s\" != \"%s\"", #a, #b, \
			        th_a_ ? th_a_ : "(null)", th_b_ ? th_b_ : "(null)");      \
	} while (0)

#define TH_ASSERT_STR_CONTAINS(hay, needle)                                                      \
	do {                                                                                     \
		const char *th_h_ = (hay), *th_n_ = (needle);                                    \
		if (!th_h_ || !strstr(th_h_, th_n_))                                             \
			th_fail(__FILE__, __LINE__, "%s contains \"%s\": no, it is \"%.2000s\"", \
			        #hay, th_n_, th_h_ ? th_h_ : "(null)");                          \
	} while (0)

/* A declared dependency is there, or the test fails (never skips, in CI or
 * not) naming the package and scripts/deps.sh: `cond` is the check, the
 * format says what was missing. */
#define TH_NEED(cond, package, ...)                                                  \
	do {                                                                         \
		if (!(cond))                                                         \
			th_fail_missing(__FILE__, __LINE__, (package), __VA_ARGS__); \
	} while (0)

/* For functions returning 0 or a GI_E* code. */
#define TH_ASSERT_OK(expr)                                                           \
	do {                                                                         \
		int th_rc_ = (expr);                                                 \
		if (th_rc_ != 0)                                                     \
			th_fail(__FILE__, __LINE__, "%s failed: %d", #expr, th_rc_); \
	} while (0)

#endif
