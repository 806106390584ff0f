#include <curl/curl.h>
#include <dlfcn.h>

// Typed wrappers for libcurl's variadic functions and the macros Swift cannot import.
// Nothing else lives here; HTTPEngine's CurlEngine is the only caller.

static inline CURLcode sw_curl_easy_setopt_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode sw_curl_easy_setopt_string(CURL *easy, CURLoption option, const char *value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode sw_curl_easy_setopt_pointer(CURL *easy, CURLoption option, void *value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode sw_curl_easy_setopt_off_t(CURL *easy, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(easy, option, value);
}

static inline CURLcode sw_curl_easy_setopt_slist(CURL *easy, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(easy, option, value);
}

/// The signature of CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION.
typedef size_t (*sw_curl_data_callback)(char *data, size_t size, size_t count, void *context);

static inline CURLcode sw_curl_easy_set_write_callback(CURL *easy, sw_curl_data_callback callback, void *context) {
    CURLcode result = curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, callback);
    return result != CURLE_OK ? result : curl_easy_setopt(easy, CURLOPT_WRITEDATA, context);
}

static inline CURLcode sw_curl_easy_set_header_callback(CURL *easy, sw_curl_data_callback callback, void *context) {
    CURLcode result = curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, callback);
    return result != CURLE_OK ? result : curl_easy_setopt(easy, CURLOPT_HEADERDATA, context);
}

/// CURLOPT_READFUNCTION (same signature as the data callbacks: fill `data`, return the count).
static inline CURLcode sw_curl_easy_set_read_callback(CURL *easy, sw_curl_data_callback callback, void *context) {
    CURLcode result = curl_easy_setopt(easy, CURLOPT_READFUNCTION, callback);
    return result != CURLE_OK ? result : curl_easy_setopt(easy, CURLOPT_READDATA, context);
}

/// The signature of CURLOPT_SEEKFUNCTION: curl rewinds a body it must send again.
typedef int (*sw_curl_seek_callback)(void *context, curl_off_t offset, int origin);

static inline CURLcode sw_curl_easy_set_seek_callback(CURL *easy, sw_curl_seek_callback callback, void *context) {
    CURLcode result = curl_easy_setopt(easy, CURLOPT_SEEKFUNCTION, callback);
    return result != CURLE_OK ? result : curl_easy_setopt(easy, CURLOPT_SEEKDATA, context);
}

/// The signature of CURLOPT_XFERINFOFUNCTION.
typedef int (*sw_curl_progress_callback)(void *context, curl_off_t download_total, curl_off_t download_now,
                                         curl_off_t upload_total, curl_off_t upload_now);

static inline CURLcode sw_curl_easy_set_progress_callback(CURL *easy, sw_curl_progress_callback callback,
                                                          void *context) {
    CURLcode result = curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, callback);
    if (result == CURLE_OK) result = curl_easy_setopt(easy, CURLOPT_XFERINFODATA, context);
    return result != CURLE_OK ? result : curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 0L);
}

static inline CURLcode sw_curl_easy_getinfo_long(CURL *easy, CURLINFO info, long *value) {
    return curl_easy_getinfo(easy, info, value);
}

static inline CURLcode sw_curl_easy_getinfo_off_t(CURL *easy, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(easy, info, value);
}

static inline CURLMcode sw_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

/// libssh2's LIBSSH2_INIT_NO_CRYPTO (libssh2.h; its header is not installed with libcurl's).
#define SW_LIBSSH2_INIT_NO_CRYPTO 0x0001

/// `curl_global_init`, after telling libssh2 (when libcurl links it, as Debian's does) not to
/// initialise its crypto library: libssh2 does so on its first `libssh2_init` unless that call
/// passes LIBSSH2_INIT_NO_CRYPTO, and later calls only count. Its OpenSSL set-up touches ~3 MB of
/// libcrypto in every process that uses curl, for SSH, which the engine never speaks (it allows
/// only http and https). libssh2 is looked up among the loaded libraries, so nothing links to it.
/// `*libssh2_crypto_skipped` becomes 1 when libssh2 was found and told, 0 when none is loaded.
static inline CURLcode sw_curl_global_init_default(int *libssh2_crypto_skipped) {
    int (*libssh2_init)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "libssh2_init");
    *libssh2_crypto_skipped = libssh2_init != NULL && libssh2_init(SW_LIBSSH2_INIT_NO_CRYPTO) == 0;
    return curl_global_init(CURL_GLOBAL_DEFAULT);
}

static inline curl_version_info_data *sw_curl_version_info(void) { return curl_version_info(CURLVERSION_NOW); }

static inline size_t sw_curl_write_pause(void) { return CURL_WRITEFUNC_PAUSE; }

static inline size_t sw_curl_read_abort(void) { return CURL_READFUNC_ABORT; }

static inline int sw_curl_seek_ok(void) { return CURL_SEEKFUNC_OK; }

static inline int sw_curl_seek_fail(void) { return CURL_SEEKFUNC_FAIL; }

static inline int sw_curl_pause_continue(void) { return CURLPAUSE_CONT; }
