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

TEST(Paste, LineEndsLost) {
  // A log whose line ends became spaces: its records apart again, each prefix with its record.
  EXPECT_EQ(Unwrapped("2023-08-14 10:20:58 INFO:Loading settings from settings.yaml... "
                      "2023-08-14 10:21:03 INFO:Loading TheBloke_Llama-2-13B-chat-GPTQ... "
                      "2023-08-14 10:21:11 INFO:Loaded the model in 7.92 seconds. "
                      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 88.00 "
                      "MiB (GPU 0; 7.78 GiB total capacity)"),
            "2023-08-14 10:20:58 INFO:Loading settings from settings.yaml...\n"
            "2023-08-14 10:21:03 INFO:Loading TheBloke_Llama-2-13B-chat-GPTQ...\n"
            "2023-08-14 10:21:11 INFO:Loaded the model in 7.92 seconds.\n"
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 88.00 "
            "MiB (GPU 0; 7.78 GiB total capacity)");
  EXPECT_EQ(Unwrapped("[rank0]: Traceback (most recent call last): [rank0]:   File \"/w/sft.py\", "
                      "line 61, in <module> [rank0]:     model = model.to(\"cuda\") [rank0]: "
                      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 224.00 MiB."),
            "[rank0]: Traceback (most recent call last):\n"
            "[rank0]:   File \"/w/sft.py\", line 61, in <module>\n"
            "[rank0]:     model = model.to(\"cuda\")\n"
            "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 224.00 MiB.");
  // A frame's source line on the frame's own line: apart again, indented as Python prints it;
  // also where a web page typeset it (no-break spaces, curly quotes), read as the plain text.
  const std::string apart =
      "Traceback (most recent call last):\n"
      "File \"/workspace/eval/run_eval.py\", line 97, in <module>\n"
      "    model, tokenizer = load_model(args.model_name_or_path)\n"
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 250.00 MiB.";
  EXPECT_EQ(Unwrapped("Traceback (most recent call last): File \"/workspace/eval/run_eval.py\", "
                      "line 97, in <module> model, tokenizer = load_model(args.model_name_or_path) "
                      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 250.00 "
                      "MiB."),
            apart);
  EXPECT_EQ(Unwrapped("Traceback (most recent call last):\u00a0File "
                      "\u201c/workspace/eval/run_eval.py\u201d, line 97, in <module> model, "
                      "tokenizer = load_model(args.model_name_or_path) "
                      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 250.00 "
                      "MiB."),
            apart);
  // IPython's traceback: its header without a colon, the arrow at the failing line.
  EXPECT_EQ(Unwrapped("OutOfMemoryError                          Traceback (most recent call last) "
                      "Cell In[7], line 3 1 inputs = tokenizer(prompt).to(\"cuda\") ---> 3 out = "
                      "model.generate(**inputs, max_new_tokens=512) OutOfMemoryError: CUDA out of "
                      "memory. Tried to allocate 64.00 MiB."),
            "OutOfMemoryError\n"
            "Traceback (most recent call last)\n"
            "Cell In[7], line 3 1 inputs = tokenizer(prompt).to(\"cuda\")\n"
            "---> 3 out = model.generate(**inputs, max_new_tokens=512)\n"
            "OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB.");
  // An engine's own long line, its beginnings only in its prefixes (a collector's timestamp
  // before the program's own): left alone.
  EXPECT_EQ(Unwrapped("2025-07-14T09:26:53.481734012Z engine.py :190 2024-02-03 03:44:03,976 "
                      "Error initializing vLLM engine: CUDA out of memory. Tried to allocate "
                      "112.00 MiB. GPU 0 has a total capacty of 44.35 GiB of which 53.38 MiB is "
                      "free."),
            "<none>");
  EXPECT_EQ(Unwrapped("vllm-1  | (EngineCore_DP0 pid=412) ERROR 11-02 10:11:12 [core.py:943] "
                      "ValueError: Cannot auto-fit max_model_len: not enough GPU memory available "
                      "to serve even a single token. Try increasing `gpu_memory_utilization`."),
            "<none>");
  EXPECT_EQ(Unwrapped("2023-09-05T10:12:01.000000Z  INFO text_generation_launcher: Args { "
                      "model_id: \"meta-llama/Llama-2-70b-chat-hf\", revision: None, "
                      "validation_workers: 2, sharded: None, num_shard: Some(1), quantize: None, "
                      "max_concurrent_requests: 128 }"),
            "<none>");
}

TEST(Paste, LineEndsLostWithoutRepeatedRecords) {
  // Prose a program printed before its error (four words or more): apart at the exception.
  EXPECT_EQ(Unwrapped("tokens per iteration will be: 491,520 step 0: train loss 10.9865, val loss "
                      "10.9881 RuntimeError: CUDA out of memory. Tried to allocate 786.00 MiB "
                      "(GPU 0; 15.78 GiB total capacity)"),
            "tokens per iteration will be: 491,520 step 0: train loss 10.9865, val loss 10.9881\n"
            "RuntimeError: CUDA out of memory. Tried to allocate 786.00 MiB (GPU 0; 15.78 GiB "
            "total capacity)");
  // A frame's source line before the exception: a statement that ends in a bracket.
  EXPECT_EQ(Unwrapped("return self._apply(lambda t: t.cuda(device)) torch.cuda.OutOfMemoryError: "
                      "CUDA out of memory. Tried to allocate 64.00 MiB (GPU 0; 7.79 GiB total "
                      "capacity; 6.11 GiB already allocated)"),
            "return self._apply(lambda t: t.cuda(device))\n"
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB (GPU 0; "
            "7.79 GiB total capacity; 6.11 GiB already allocated)");
  // After a progress bar's end and after PyTorch's message's end, a line of its own; a shell's
  // prompt opens one.
  EXPECT_EQ(Unwrapped("Replacing layers...:  45%|####5     | 36/80 [00:09<00:11,  3.88it/s] "
                      "torch.cuda.OutOfMemoryError: CUDA out of memory. See documentation for "
                      "Memory Management and PYTORCH_CUDA_ALLOC_CONF Loading vicuna-13b-GPTQ... "
                      "$ nvidia-smi"),
            "Replacing layers...:  45%|####5     | 36/80 [00:09<00:11,  3.88it/s]\n"
            "torch.cuda.OutOfMemoryError: CUDA out of memory. See documentation for Memory "
            "Management and PYTORCH_CUDA_ALLOC_CONF\n"
            "Loading vicuna-13b-GPTQ...\n"
            "$ nvidia-smi");
  // A Go stack under a panic: its frames and files apart.
  EXPECT_EQ(Unwrapped("time=2025-07-01T10:02:11.402Z level=INFO msg=\"starting llama server\" "
                      "panic: insufficient memory goroutine 12 [running]: "
                      "github.com/ollama/ollama/ml/backend/ggml.(*Context).Reserve(0xc000a36000) "
                      "/go/src/github.com/ollama/ollama/ml/backend/ggml/ggml.go:811 +0x345"),
            "time=2025-07-01T10:02:11.402Z level=INFO msg=\"starting llama server\"\n"
            "panic: insufficient memory\n"
            "goroutine 12 [running]:\n"
            "github.com/ollama/ollama/ml/backend/ggml.(*Context).Reserve(0xc000a36000)\n"
            "/go/src/github.com/ollama/ollama/ml/backend/ggml/ggml.go:811 +0x345");
  // Python logging's "LEVEL - " and a Trainer's dicts, repeated: records.
  EXPECT_EQ(Unwrapped("INFO - Start quantizing layer 1/32 INFO - Quantizing mlp.down_proj in layer "
                      "1/32... INFO - Start quantizing layer 2/32 {'loss': 1.93, 'epoch': 0.02} "
                      "{'loss': 1.44, 'epoch': 0.04}"),
            "INFO - Start quantizing layer 1/32\n"
            "INFO - Quantizing mlp.down_proj in layer 1/32...\n"
            "INFO - Start quantizing layer 2/32\n"
            "{'loss': 1.93, 'epoch': 0.02}\n"
            "{'loss': 1.44, 'epoch': 0.04}");
  // IPython 8's frames ("File PATH:N, in NAME") with its header: a traceback on one line.
  EXPECT_EQ(Unwrapped("OutOfMemoryError Traceback (most recent call last) Cell In[4], line 2 "
                      "File ~/venv/lib/python3.11/site-packages/transformers/generation/utils.py"
                      ":2390, in GenerationMixin.generate(self, inputs) OutOfMemoryError: CUDA out "
                      "of memory."),
            "OutOfMemoryError\n"
            "Traceback (most recent call last)\n"
            "Cell In[4], line 2\n"
            "File ~/venv/lib/python3.11/site-packages/transformers/generation/utils.py:2390, in "
            "GenerationMixin.generate(self, inputs)\n"
            "OutOfMemoryError: CUDA out of memory.");
  // Prefixes before an exception are not prose: a collector's, a rank's, a logger's, a
  // terminal's colour (one line as the engine printed it, left alone).
  EXPECT_EQ(Unwrapped("Jul 14 09:26:53 gpu-node-3 serve[48211]: [rank1]: torch.OutOfMemoryError: "
                      "CUDA out of memory. Tried to allocate 224.00 MiB. GPU 1 has a total "
                      "capacity of 79.14 GiB of which 131.56 MiB is free."),
            "<none>");
  EXPECT_EQ(Unwrapped("vllm-server-1  | (EngineCore_DP0 pid=812) ERROR 03-10 08:07:20 "
                      "[core.py:302] torch.OutOfMemoryError: CUDA out of memory. Tried to "
                      "allocate 224.00 MiB. GPU 1 has a total capacity of 79.14 GiB of which "
                      "131.56 MiB is free."),
            "<none>");
  EXPECT_EQ(Unwrapped("\x1b[31mtorch.OutOfMemoryError\x1b[0m: CUDA out of memory. Tried to "
                      "allocate 224.00 MiB. GPU 1 has a total capacity of 79.14 GiB of which "
                      "131.56 MiB is free. Including non-PyTorch memory, this process has"),
            "<none>");
}

}  // namespace
}  // namespace vramfit::doctor
