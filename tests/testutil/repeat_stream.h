// A stream of `n` bytes of one text repeated (a log of the same line, a line without end),
// made as it is read: a test of a streaming reader holds none of it.
#ifndef VRAMFIT_TESTS_TESTUTIL_REPEAT_STREAM_H_
#define VRAMFIT_TESTS_TESTUTIL_REPEAT_STREAM_H_

#include <algorithm>
#include <cstdint>
#include <streambuf>
#include <string>
#include <utility>

namespace vramfit::testing {

class RepeatBuf : public std::streambuf {
 public:
  RepeatBuf(std::string unit, uint64_t n) : unit_(std::move(unit)), left_(n) {}

 protected:
  int_type underflow() override {
    if (left_ == 0) return traits_type::eof();
    const size_t k = static_cast<size_t>(std::min<uint64_t>(left_, unit_.size()));
    buf_.assign(unit_, 0, k);
    left_ -= k;
    setg(buf_.data(), buf_.data(), buf_.data() + k);
    return traits_type::to_int_type(buf_[0]);
  }

 private:
  std::string unit_, buf_;
  uint64_t left_;
};

}  // namespace vramfit::testing

#endif  // VRAMFIT_TESTS_TESTUTIL_REPEAT_STREAM_H_
