/* The build's version and revision (core/version.h). */
#include "core/version.h"

#ifndef GQ_VERSION
#define GQ_VERSION "0.0.0"
#endif
#ifndef GQ_GIT_REV
#define GQ_GIT_REV "unknown"
#endif

const char gq_version[] = GQ_VERSION;
const char gq_git_rev[] = GQ_GIT_REV;
