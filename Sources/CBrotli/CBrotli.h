#ifndef SESAME_CBROTLI_H
#define SESAME_CBROTLI_H
#include <brotli/decode.h>
#endif
