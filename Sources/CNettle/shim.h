#include <nettle/sha2.h>

// Nettle's SHA-256 (Debian's libnettle8, already on the device under GnuTLS and libcurl). Nothing else lives here;
// WebInterface's SHA256 is the only caller.
