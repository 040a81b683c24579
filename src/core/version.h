/* gpuqual's version and git revision as the build stamped them (CMake gives
 * GQ_VERSION to every file and GQ_GIT_REV to core/version.c alone, so a new
 * commit recompiles one file), with the one fallback of each: "0.0.0" and
 * "unknown". */
#ifndef GQ_CORE_VERSION_H
#define GQ_CORE_VERSION_H

extern const char gq_version[];
extern const char gq_git_rev[];

#endif
