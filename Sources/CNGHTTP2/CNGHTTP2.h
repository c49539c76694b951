#ifndef SESAME_CNGHTTP2_H
#define SESAME_CNGHTTP2_H
#include <nghttp2/nghttp2.h>
#endif
