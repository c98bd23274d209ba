/*
 * Unit tests for the test harness itself: a missing declared dependency fails
 * a test (never skips it) and says which package and how to install it.
 * needs:
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/fs.h"
#include "harness.h"

static void missing_dependency_fails_and_names_the_package(void)
{
	char out[4096];
	snprintf(out, sizeof(out), "%s/out", th_tmpdir());
	fflush(stdout);
	pid_t pid = fork();
	TH_ASSERT(pid >= 0);
	if (pid == 0) {
		if (!freopen(out, "w", stdout))
			_exit(3);
		TH_NEED(th_have_program("giulia-no-such-program"), "giulia-no-such-package",
		        "giulia-no-such-program is not on PATH");
		_exit(0);
	}
	int status = 0;
	TH_ASSERT_INT_EQ(waitpid(pid, &status, 0), pid);
	TH_ASSERT(WIFEXITED(status));
	TH_ASSERT_INT_EQ(WEXITSTATUS(status), 1); /* failed, not skipped (77) */
	char *text = NULL;
	size_t len = 0;
	TH_ASSERT_OK(gi_fs_read_file(out, 1 << 20, &text, &len));
	TH_ASSERT_STR_CONTAINS(text, "missing dependency: giulia-no-such-program is not on PATH");
	TH_ASSERT_STR_CONTAINS(text, "Debian package giulia-no-such-package");
	TH_ASSERT_STR_CONTAINS(text, "scripts/deps.sh test");
	gi_free(text);
}

static void finds_programs_and_otp_libraries(void)
{
	TH_ASSERT(th_have_program("sh"));
	TH_ASSERT(th_have_program("/bin/sh"));
	TH_ASSERT(!th_have_program("giulia-no-such-program"));
	TH_ASSERT(th_have_otp_app("stdlib"));
	TH_ASSERT(!th_have_otp_app("giulia_no_such_app"));
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(missing_dependency_fails_and_names_the_package),
	    TH_TEST(finds_programs_and_otp_libraries),
	    TH_END,
	};
	return th_main(argc, argv, "unit_harness", tests);
}
