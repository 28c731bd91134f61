// Overflow-checked unsigned 64-bit arithmetic for byte and element counts.
//
// Every count that comes from a file goes through these before it is used, so a hostile
// header can never wrap a size around. Each returns false (and leaves *out unspecified)
// on overflow.
#ifndef VRAMFIT_CORE_CHECKED_H_
#define VRAMFIT_CORE_CHECKED_H_

#include <cstdint>

namespace vramfit::core {

inline bool CheckedMul(uint64_t a, uint64_t b, uint64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}
inline bool CheckedAdd(uint64_t a, uint64_t b, uint64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}
inline uint64_t CeilDiv(uint64_t a, uint64_t b) { return b == 0 ? 0 : (a / b + (a % b != 0)); }

}  // namespace vramfit::core

#endif  // VRAMFIT_CORE_CHECKED_H_
