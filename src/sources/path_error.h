// How local sources name an errno from stat or open: the C library's text, except that a link
// loop says so (ELOOP reads "Too many levels of symbolic links", which users do not connect
// with a loop).
#ifndef VRAMFIT_SOURCES_PATH_ERROR_H_
#define VRAMFIT_SOURCES_PATH_ERROR_H_

#include <string>

namespace vramfit {

std::string LocalPathError(int err);

}  // namespace vramfit

#endif  // VRAMFIT_SOURCES_PATH_ERROR_H_
