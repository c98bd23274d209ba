/*
 * store_location.c - libFuzzer target for the store location's redaction
 * (obs_store_location_redact in src/store/obs_store.c), which reads a URI
 * from the command line or GIULIA_STORE and must never let a password
 * through to a log: any input, any buffer size, the output is terminated
 * within the buffer, and a password in the URI's user information or in a
 * password= query parameter never appears in it.
 * needs:
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/runtime.h"
#include "store/obs_store.h"

int cli_exit_code_for(int gi_error);
int cli_exit_code_for(int gi_error)
{
	return gi_error ? 1 : 0;
}

/* The password of scheme://user:PASSWORD@host..., or NULL. Written apart
 * from the code under test, the plain way. */
static char *userinfo_password(const char *uri)
{
	const char *auth = strstr(uri, "://");
	if (!auth)
		return NULL;
	auth += 3;
	size_t authority = strcspn(auth, "/?");
	const char *at = NULL;
	for (size_t i = 0; i < authority; i++)
		if (auth[i] == '@')
			at = auth + i;
	if (!at)
		return NULL;
	const char *colon = memchr(auth, ':', (size_t)(at - auth));
	if (!colon || at - colon - 1 < 4) /* shorter ones may occur by chance */
		return NULL;
	size_t len = (size_t)(at - colon - 1);
	char *pw = malloc(len + 1);
	memcpy(pw, colon + 1, len);
	pw[len] = '\0';
	return pw;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gi_runtime_init();
	if (size < 1)
		return 0;
	size_t n = data[0]; /* the buffer size, 0..255 */
	char *uri = malloc(size);
	memcpy(uri, data + 1, size - 1);
	uri[size - 1] = '\0';
	char *buf = malloc(n + 1);
	buf[n] = 'Z'; /* a canary past the buffer */
	obs_store_location_redact(uri, buf, n);
	if (buf[n] != 'Z')
		abort();
	if (n > 0 && memchr(buf, '\0', n) == NULL)
		abort();
	char full[1024];
	if (strlen(uri) < 600) {
		obs_store_location_redact(uri, full, sizeof(full));
		char *pw = userinfo_password(uri);
		if (pw && strstr(full, pw) && !strstr(uri + (strstr(uri, pw) - uri) + 1, pw))
			abort(); /* the password (occurring once) went through */
		free(pw);
	}
	free(buf);
	free(uri);
	return 0;
}
