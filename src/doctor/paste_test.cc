// The wrappers of pasted and collected logs, undone to the engine's lines (paste.h).
#include "doctor/paste.h"

#include <gtest/gtest.h>

#include <string>

namespace vramfit::doctor {
namespace {

std::string Unwrapped(std::string_view line) {
  std::string out = "<none>";
  Unwrap(line, &out);
  return out;
}

TEST(Paste, DockerJsonFileRecord) {
  EXPECT_EQ(Unwrapped(R"({"log":"  File \"/usr/lib/python3/site-packages/vllm/v1/worker/)"
                      R"(gpu_worker.py\", line 276, in compile\n","stream":"stderr",)"
                      R"("time":"2025-04-01T12:00:00.1Z"})"),
            "  File \"/usr/lib/python3/site-packages/vllm/v1/worker/gpu_worker.py\", line 276, "
            "in compile");
}

TEST(Paste, JournaldAndCloudRecordsWithEscapes) {
  EXPECT_EQ(Unwrapped(R"({"_SYSTEMD_UNIT":"ollama.service",)"
                      R"("MESSAGE":"a\u001b[0m \u00e9\ud83d\ude00"})"),
            "a\x1b[0m \xc3\xa9\xf0\x9f\x98\x80");
  // A record holding a whole traceback: its lines.
  EXPECT_EQ(Unwrapped(R"({"textPayload": "Traceback (most recent call last):\n  File \"x.py\""})"),
            "Traceback (most recent call last):\n  File \"x.py\"");
  // Not valid JSON (a lone surrogate, which no collector writes; a string cut off): no record,
  // the line is read as it stands.
  EXPECT_EQ(Unwrapped(R"({"log":"\ud800x"})"), "<none>");
  EXPECT_EQ(Unwrapped(R"({"log":"cut off)"), "<none>");
  EXPECT_EQ(Unwrapped(R"({"log":"bad \u12"})"), "<none>");
}

TEST(Paste, EscapedTracebackString) {
  EXPECT_EQ(Unwrapped(R"(Error: {"error": "Traceback (most recent call last):\n  File )"
                      R"(\"C:\\app\\run.py\", line 3, in <module>\ntorch.OutOfMemoryError: x"})"),
            "Error: {\"error\": \"Traceback (most recent call last):\n  File \"C:\\app\\run.py\", "
            "line 3, in <module>\ntorch.OutOfMemoryError: x\"}");
  // A line with an escaped line end but no traceback is left alone.
  EXPECT_EQ(Unwrapped(R"(prompt: 'a\nb\nc')"), "<none>");
}

TEST(Paste, HtmlEscapes) {
  EXPECT_EQ(Unwrapped("  File &quot;/a/b.py&quot;, line 3, in &lt;module&gt; &amp;&#39;&#x27;"),
            "  File \"/a/b.py\", line 3, in <module> &''");
  EXPECT_EQ(Unwrapped("INFO plain line & more"), "<none>");
}

}  // namespace
}  // namespace vramfit::doctor
