#ifndef SESAME_CZLIB_H
#define SESAME_CZLIB_H
#include <zlib.h>
#endif
