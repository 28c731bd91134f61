// The sequence length a Python program generates with (script/python.cc, GenerationFlags): a
// transformers load's generate() or pipeline calls become --prompt-tokens / --max-new-tokens /
// --batch-size / --num-beams flags; literal prompts and chats are estimated at 3 UTF-8 bytes a
// token (+2 special tokens; a chat + 8 a message + 64), prompts read at run time stay unknown.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "vramfit/script.h"

namespace vramfit {
namespace {

using Argv = std::vector<std::string>;

constexpr std::string_view kLoad =
    "from transformers import AutoModelForCausalLM, AutoTokenizer\n"
    "tok = AutoTokenizer.from_pretrained('Qwen/Qwen3-8B')\n"
    "model = AutoModelForCausalLM.from_pretrained('Qwen/Qwen3-8B', device_map='auto')\n";

ScriptRead Read(std::string_view body, ScriptOptions options = {}) {
  auto r = ReadDeployScript(std::string(kLoad) + std::string(body), "gen.py", options);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : ScriptRead{};
}

// The flags after `transformers Qwen/Qwen3-8B --device-map auto`.
Argv Flags(const ScriptRead& r) {
  if (r.invocations.size() != 1 || r.invocations[0].argv.size() < 4) return {"<no load>"};
  return Argv(r.invocations[0].argv.begin() + 4, r.invocations[0].argv.end());
}

std::string Notes(const ScriptRead& r) {
  std::string all;
  for (const std::string& n : r.notes) all += n + "\n";
  return all;
}

// "Explain a KV cache." is 19 bytes: 19 / 3 + 1 = 7 tokens, + 2 special tokens.
TEST(PythonGenerate, LiteralStringPrompt) {
  const ScriptRead r = Read("inputs = tok('Explain a KV cache.', return_tensors='pt').to('cuda')\n"
                            "out = model.generate(**inputs, max_new_tokens=512)\n");
  EXPECT_EQ(Flags(r), (Argv{"--prompt-tokens", "9", "--max-new-tokens", "512"}));
  EXPECT_EQ(Notes(r), "gen.py:3: generate() on line 5: prompt about 9 tokens (a 19-byte literal: "
                      "3 bytes a token, more than English BPE's 4 characters), "
                      "max_new_tokens=512: planned for 521 tokens\n");
}

// A literal repeated ("Hello " * 3000, 3000 * "ab"): its bytes times the count, 3 bytes a
// token; a count past any context is bounded, never overflowed.
TEST(PythonGenerate, RepeatedLiteralPrompt) {
  const ScriptRead r = Read("inputs = tok('Hello ' * 3000, return_tensors='pt')\n"
                            "out = model.generate(**inputs, max_new_tokens=64)\n");
  EXPECT_EQ(Flags(r), (Argv{"--prompt-tokens", "6003", "--max-new-tokens", "64"}));
  EXPECT_NE(Notes(r).find("(a 6-byte literal repeated 3000 times: 3 bytes a token"),
            std::string::npos) << Notes(r);
  const ScriptRead first = Read("p = 3000 * 'ab'\nmodel.generate(tok(p), max_new_tokens=8)\n");
  EXPECT_EQ(Flags(first), (Argv{"--prompt-tokens", "2003", "--max-new-tokens", "8"}));
  const ScriptRead huge = Read("model.generate(tok('ab' * 99999999999999), max_new_tokens=8)\n");
  EXPECT_EQ(Flags(huge), (Argv{"--max-new-tokens", "8"})) << Notes(huge);
}

// The model card's form: messages -> apply_chat_template(tokenize=False) -> tok([text]) ->
// generate(**model_inputs); and apply_chat_template returning the ids directly.
TEST(PythonGenerate, ChatMessagesThroughTheTemplate) {
  const std::string chat =
      "prompt = 'Give me a short introduction to large language models.'\n"  // 54 bytes
      "messages = [{'role': 'system', 'content': 'Be brief.'},\n"             // 9 bytes
      "            {'role': 'user', 'content': prompt}]\n";
  // (54 + 9) / 3 + 1 = 22, + 2 x 8 + 64 = 102.
  const ScriptRead card = Read(chat +
                               "text = tok.apply_chat_template(messages, tokenize=False,\n"
                               "    add_generation_prompt=True, enable_thinking=False)\n"
                               "model_inputs = tok([text], return_tensors='pt').to(model.device)\n"
                               "ids = model.generate(**model_inputs, max_new_tokens=32768)\n");
  EXPECT_EQ(Flags(card), (Argv{"--prompt-tokens", "102", "--max-new-tokens", "32768"}));
  EXPECT_NE(Notes(card).find("prompt about 102 tokens (a chat of 2 message(s), 63 bytes of "
                             "text: 3 bytes a token, more than English BPE's 4 characters, + 8 a "
                             "message and 64 for the chat template), max_new_tokens=32768: "
                             "planned for 32870 tokens"),
            std::string::npos) << Notes(card);
  const ScriptRead ids = Read(chat +
                              "input_ids = tok.apply_chat_template(messages, "
                              "add_generation_prompt=True,\n    return_tensors='pt').to('cuda')\n"
                              "model.generate(input_ids, max_new_tokens=100)\n");
  EXPECT_EQ(Flags(ids), (Argv{"--prompt-tokens", "102", "--max-new-tokens", "100"}));
}

// A prompt the program makes at run time keeps today's plan (the context filled, less the new
// tokens) and says how to give its length; check --prompt-tokens gives it.
TEST(PythonGenerate, UnknownPromptKeepsTheWholeContext) {
  const std::string fstring = "topic = 'caches'\n"
                              "inputs = tok(f'Tell me about {topic}', return_tensors='pt')\n"
                              "model.generate(**inputs, max_new_tokens=256)\n";
  const ScriptRead f = Read(fstring);
  EXPECT_EQ(Flags(f), (Argv{"--max-new-tokens", "256"}));
  EXPECT_EQ(Notes(f), "gen.py:3: generate() on line 6: the prompt is not known (the f-string "
                      "`\"Tell me about {topic}\"`): planned as before, the prompt filling the "
                      "context (max_position_embeddings); give its length with `vramfit check "
                      "--prompt-tokens N`\n");
  const ScriptRead typed = Read("q = input('> ')\nmodel.generate(**tok(q, return_tensors='pt'))\n");
  EXPECT_EQ(Flags(typed), (Argv{"--max-new-tokens", "20"}));
  EXPECT_NE(Notes(typed).find("the prompt is not known (the result of input(...), a call the "
                                "reader does not follow)"), std::string::npos);
  const ScriptRead built = Read("messages = []\nmessages.append({'role': 'user', 'content': 'x'})\n"
                                "model.generate(tok.apply_chat_template(messages), "
                                "max_new_tokens=64)\n");
  EXPECT_EQ(Flags(built), (Argv{"--max-new-tokens", "64"}));
  EXPECT_NE(Notes(built).find("`messages`, built up at run time"), std::string::npos);
  // A file's text truncated by the tokenizer is at most max_length tokens.
  const ScriptRead cut = Read("doc = open('doc.txt').read()\n"
                              "enc = tok(doc, truncation=True, max_length=4096, "
                              "return_tensors='pt')\n"
                              "model.generate(enc['input_ids'], max_new_tokens=128)\n");
  EXPECT_EQ(Flags(cut), (Argv{"--prompt-tokens", "4096", "--max-new-tokens", "128"}));
  // generate(max_length=N) bounds prompt + new tokens: the context is N.
  const ScriptRead bounded = Read("q = input()\n"
                                  "model.generate(**tok(q, return_tensors='pt'), "
                                  "max_length=2048)\n");
  EXPECT_EQ(Flags(bounded), (Argv{"--max-length", "2048"}));
  EXPECT_NE(Notes(bounded).find("planned as before, the prompt filling max_length; give"),
            std::string::npos) << Notes(bounded);
  ScriptOptions given;
  given.prompt_tokens = 3000;
  EXPECT_EQ(Flags(Read(fstring, given)),
            (Argv{"--prompt-tokens", "3000", "--max-new-tokens", "256"}));
  // Without a generate() call the load is planned as before, with a note.
  const ScriptRead none = Read("");
  EXPECT_TRUE(Flags(none).empty());
  EXPECT_NE(Notes(none).find("gen.py:3: no generate() call of this model read"),
            std::string::npos);
}

// A literal list of prompts is the batch; num_beams and num_return_sequences multiply it in
// the engine (--num-beams / --num-return-sequences); max_length bounds prompt + new tokens;
// neither length: transformers' 20 new tokens.
TEST(PythonGenerate, BatchBeamsAndLengths) {
  const ScriptRead batch = Read(
      "prompts = ['short', 'a somewhat longer prompt of text here', 'mid length']\n"  // 37 bytes
      "enc = tok(prompts, return_tensors='pt', padding=True)\n"
      "model.generate(**enc, max_new_tokens=50, num_beams=4, do_sample=False)\n");
  EXPECT_EQ(Flags(batch), (Argv{"--prompt-tokens", "15", "--max-new-tokens", "50",
                                "--batch-size", "3", "--num-beams", "4", "--do-sample",
                                "false"}));
  const ScriptRead times = Read("enc = tok(['hello'] * 8, return_tensors='pt')\n"
                                "model.generate(**enc, max_length=300, do_sample=True,\n"
                                "               num_return_sequences=2)\n");
  EXPECT_EQ(Flags(times), (Argv{"--prompt-tokens", "4", "--max-new-tokens", "296",
                                "--batch-size", "8", "--num-return-sequences", "2"}));
  const ScriptRead plain = Read("model.generate(**tok('hi', return_tensors='pt'))\n");
  EXPECT_EQ(Flags(plain), (Argv{"--prompt-tokens", "3", "--max-new-tokens", "20"}));
  EXPECT_NE(Notes(plain).find("20 new tokens (transformers' default max_length 20"),
            std::string::npos);
  // Two calls: the longest prompt and the longest total.
  const ScriptRead two = Read("model.generate(**tok('hi', return_tensors='pt'), "
                              "max_new_tokens=1000)\n"
                              "model.generate(**tok('x' * 1, return_tensors='pt'), "
                              "max_new_tokens=10)\n");
  EXPECT_EQ(Flags(two), (Argv{"--prompt-tokens", "3", "--max-new-tokens", "1000"}));
  const ScriptRead cache = Read("model.generate(**tok('hi', return_tensors='pt'), "
                                "max_new_tokens=64, cache_implementation='static')\n");
  EXPECT_EQ(Flags(cache), (Argv{"--prompt-tokens", "3", "--max-new-tokens", "64",
                                "--cache-implementation", "static"}));
}

// Generation keywords spread from a dict the reader sees are read; a `**X` it cannot see, or a
// generation_config object, could set the lengths: the context stays filled.
TEST(PythonGenerate, SpreadKeywordsAndGenerationConfig) {
  const ScriptRead seen = Read("gen = dict(max_new_tokens=700, num_beams=2)\n"
                               "inputs = tok('hello there', return_tensors='pt')\n"
                               "model.generate(**inputs, **gen)\n");
  EXPECT_EQ(Flags(seen), (Argv{"--prompt-tokens", "6", "--max-new-tokens", "700",
                               "--num-beams", "2"}));
  const ScriptRead hidden = Read("import json\ngen = json.load(open('gen.json'))\n"
                                 "inputs = tok('hello there', return_tensors='pt')\n"
                                 "model.generate(**inputs, **gen)\n");
  EXPECT_EQ(Flags(hidden), Argv{});
  EXPECT_NE(Notes(hidden).find("generate() on line 7: `**gen`, whose keys the reader cannot "
                               "see: planned as before"), std::string::npos) << Notes(hidden);
  const ScriptRead config = Read("from transformers import GenerationConfig\n"
                                 "model.generate(**tok('hi'), generation_config="
                                 "GenerationConfig(max_new_tokens=9000))\n");
  EXPECT_EQ(Flags(config), Argv{});
}

// Images in the prompt (a processor's images=, an image part of a chat) are the processor's
// tokens: the prompt is not known.
TEST(PythonGenerate, ImagesLeaveThePromptUnknown) {
  const ScriptRead proc = Read("inputs = tok(text='Describe.', images=img, return_tensors='pt')\n"
                               "model.generate(**inputs, max_new_tokens=128)\n");
  EXPECT_EQ(Flags(proc), (Argv{"--max-new-tokens", "128"}));
  EXPECT_NE(Notes(proc).find("tok(..., images=...): the images' tokens are the processor's"),
            std::string::npos) << Notes(proc);
  const ScriptRead part = Read(
      "messages = [{'role': 'user', 'content': [{'type': 'image', 'url': 'a.png'},\n"
      "                                          {'type': 'text', 'text': 'What is it?'}]}]\n"
      "model.generate(**tok.apply_chat_template(messages, return_dict=True), "
      "max_new_tokens=64)\n");
  EXPECT_EQ(Flags(part), (Argv{"--max-new-tokens", "64"}));
  EXPECT_NE(Notes(part).find("a chat with an image part"), std::string::npos);
}

// A text-generation pipeline: its calls' inputs (a chat, a list of prompts run batch_size at a
// time, default 1) and its default of 256 new tokens; pipeline() keywords apply to each call.
TEST(PythonGenerate, PipelineCalls) {
  auto read = [](std::string_view text) {
    auto r = ReadDeployScript(text, "pipe.py", {});
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? *r : ScriptRead{};
  };
  const ScriptRead chat = read(
      "from transformers import pipeline\n"
      "pipe = pipeline('text-generation', model='m/x', device_map='auto')\n"
      "messages = [{'role': 'user', 'content': 'Who are you?'}]\n"  // 12 bytes: 5 + 8 + 64
      "out = pipe(messages, max_new_tokens=300)\n");
  ASSERT_EQ(chat.invocations.size(), 1u);
  EXPECT_EQ(chat.invocations[0].argv,
            (Argv{"transformers", "m/x", "--device-map", "auto", "--prompt-tokens", "77",
                  "--max-new-tokens", "300"}));
  const ScriptRead listed = read(
      "from transformers import pipeline\n"
      "gen = pipeline('text-generation', model='m/x', num_beams=2, batch_size=2)\n"
      "gen(['one', 'two', 'three'])\n");
  ASSERT_EQ(listed.invocations.size(), 1u);
  EXPECT_EQ(listed.invocations[0].argv,
            (Argv{"transformers", "m/x", "--prompt-tokens", "4", "--max-new-tokens", "256",
                  "--batch-size", "2", "--num-beams", "2"}));
}

// Hostile programs: names that cycle, lists nested deep, counts past any int, a huge literal;
// never a crash or a hang, an unknown prompt or a bounded estimate.
TEST(PythonGenerate, HostilePromptsAreBounded) {
  EXPECT_EQ(Flags(Read("a = b\nb = a\nmodel.generate(a, max_new_tokens=8)\n")),
            (Argv{"--max-new-tokens", "8"}));
  std::string deep = "p = ";
  for (int i = 0; i < 150; ++i) deep += "[";
  deep += "'x'";
  for (int i = 0; i < 150; ++i) deep += "]";
  EXPECT_EQ(Flags(Read(deep + "\nmodel.generate(p, max_new_tokens=8)\n")),
            (Argv{"--max-new-tokens", "8"}));
  EXPECT_EQ(Flags(Read("model.generate(tok(['a'] * 99999999999), max_new_tokens=8)\n")),
            (Argv{"--max-new-tokens", "8"}));
  EXPECT_EQ(Flags(Read("model.generate(tok('a'), max_new_tokens=99999999999)\n")),
            Argv{});
  const std::string huge(3'000'000, 'y');
  EXPECT_EQ(Flags(Read("model.generate(tok('" + huge + "'), max_new_tokens=8)\n")),
            (Argv{"--prompt-tokens", "1000003", "--max-new-tokens", "8"}));
  std::string fan = "l0 = 'x'\n";
  for (int i = 1; i < 40; ++i) {
    fan += "l" + std::to_string(i) + " = [l" + std::to_string(i - 1) + ", l" +
           std::to_string(i - 1) + "]\n";
  }
  EXPECT_EQ(Flags(Read(fan + "model.generate(tok(l39), max_new_tokens=8)\n")),
            (Argv{"--max-new-tokens", "8"}));
  auto bad = ReadDeployScript(std::string(kLoad) + "model.generate(tok('open), "
                              "max_new_tokens=8)\n", "gen.py", {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "gen.py:4: unterminated string ' (opened here)");
}

// The script fuzzer's seeds (tests/scripts, tools/run-fuzz.sh), whole and cut short at 200
// points each, read as shell and as Python: a result or a "file:line: ..." error, never a crash.
TEST(PythonGenerate, SeedScriptsAndTheirPrefixesRead) {
  namespace fs = std::filesystem;
  int files = 0;
  for (const auto& entry :
       fs::recursive_directory_iterator(fs::path(VRAMFIT_SOURCE_DIR) / "tests/scripts")) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream buf;
    buf << in.rdbuf();
    const std::string text = buf.str();
    ++files;
    const size_t step = std::max<size_t>(1, text.size() / 200);
    for (size_t cut = text.size() + step; cut-- > 0;) {
      if (cut % step != 0 && cut != text.size()) continue;
      for (std::string_view name : {"seed.sh", "seed.py"}) {
        auto r = ReadDeployScript(std::string_view(text).substr(0, cut), name, {});
        if (!r.ok()) {
          EXPECT_EQ(r.status().message().rfind(std::string(name) + ":", 0), 0u)
              << entry.path() << " cut at " << cut << ": " << r.status().message();
        }
      }
    }
  }
  EXPECT_GE(files, 8);
}

}  // namespace
}  // namespace vramfit
