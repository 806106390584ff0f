// Cairo with its FreeType/fontconfig font backend (cairo-ft) and fontconfig itself.
#include <cairo.h>
#include <cairo-ft.h>
#include <fontconfig/fontconfig.h>
