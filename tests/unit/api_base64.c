/*
 * Unit tests of the base64 codec the monitor and worker use for object code
 * (src/api/base64.c): RFC 4648 vectors, round trips and refused input.
 * needs:
 */
#include <stdlib.h>
#include <string.h>

#include "api/base64.h"
#include "base/alloc.h"
#include "base/error.h"
#include "harness.h"

static void rfc4648_vectors(void)
{
	static const char *const plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
	static const char *const enc[] = {"",         "Zg==",     "Zm8=",    "Zm9v",
	                                  "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
	for (int i = 0; i < 7; i++) {
		char *e = api_base64_encode((const unsigned char *)plain[i], strlen(plain[i]));
		TH_ASSERT_STR_EQ(e, enc[i]);
		gi_free(e);
		unsigned char *d = NULL;
		size_t n = 0;
		TH_ASSERT_OK(api_base64_decode(enc[i], strlen(enc[i]), &d, &n));
		TH_ASSERT_INT_EQ(n, strlen(plain[i]));
		TH_ASSERT(memcmp(d, plain[i], n) == 0);
		gi_free(d);
	}
}

static void binary_round_trip(void)
{
	unsigned char bytes[1000];
	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (unsigned char)(i * 131 + 7);
	for (size_t len = 0; len < 40; len++) {
		char *e = api_base64_encode(bytes, len);
		unsigned char *d = NULL;
		size_t n = 0;
		TH_ASSERT_OK(api_base64_decode(e, strlen(e), &d, &n));
		TH_ASSERT_INT_EQ(n, len);
		TH_ASSERT(len == 0 || memcmp(d, bytes, len) == 0);
		gi_free(d);
		gi_free(e);
	}
}

static void bad_input_refused(void)
{
	static const char *const bad[] = {"Zg=",  "Z===", "=Zg=", "Zg==Zg==", "Zm9v\n",
	                                  "Zm9!", "Zg=a", "Zm 9", "====",     NULL};
	for (int i = 0; bad[i]; i++) {
		unsigned char *d = (unsigned char *)"x";
		size_t n = 1;
		TH_ASSERT_INT_EQ(api_base64_decode(bad[i], strlen(bad[i]), &d, &n), GI_EINVAL);
		TH_ASSERT(d == NULL && n == 0);
	}
}

int main(int argc, char **argv)
{
	static const struct th_test tests[] = {
	    TH_TEST(rfc4648_vectors),
	    TH_TEST(binary_round_trip),
	    TH_TEST(bad_input_refused),
	    {NULL, NULL},
	};
	return th_main(argc, argv, "unit_api_base64", tests);
}
