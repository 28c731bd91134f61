// transformers flags, command line and Python snippet (see command.h).
#include "engines/transformers/command.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <string_view>

#include "core/text.h"
#include "model/hub_revision.h"

namespace vramfit::transformers {
namespace {

// Every flag value that does not read, in the one form (core/text.h).
constexpr auto Bad = core::BadFlagValue;

Result<int64_t> ReadCount(const std::string& flag, const std::string& text) {
  auto n = ParseTokenCount(flag, text);
  if (!n.ok()) return n.status();
  if (*n < 1 || *n > (int64_t{1} << 31) - 1) return Bad(flag, text, "1 to 2147483647");
  return *n;
}

Result<bool> ReadBool(const std::string& flag, const std::string& text) {
  if (text == "true" || text == "True" || text == "1") return true;
  if (text == "false" || text == "False" || text == "0") return false;
  return Bad(flag, text, "true or false");
}

// A Python string literal.
std::string Py(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

const std::vector<FlagSpec>& Flags() {
  static const std::vector<FlagSpec> kFlags = {
      {"--device-map", nullptr,
       "transformers: device_map= auto|balanced|balanced_low_0|sequential|cuda:N or a JSON map",
       "TEXT"},
      {"--max-memory", nullptr, "transformers: max_memory= 0=6GiB,cpu=30GiB or JSON", "TEXT"},
      {"--dtype", nullptr, "Model dtype (transformers: dtype=, default float32 before 5.0)",
       "TEXT"},
      {"--torch-dtype", nullptr, "transformers: torch_dtype= (the older name of dtype=)", "TEXT"},
      {"--attn-implementation", nullptr,
       "transformers: attn_implementation= eager|sdpa|flash_attention_2|flash_attention_3",
       "TEXT"},
      {"--cache-implementation", nullptr,
       "transformers: cache_implementation= dynamic|static|offloaded|offloaded_static|"
       "quantized|sliding_window|hybrid", "TEXT"},
      {"--max-cache-len", nullptr, "transformers: StaticCache(max_cache_len=N)", "INT"},
      {"--max-length", nullptr, "transformers: generate(max_length=N), prompt + new tokens",
       "INT"},
      {"--prompt-tokens", nullptr, "transformers: tokens in each prompt", "INT"},
      {"--max-new-tokens", nullptr, "transformers: generate(max_new_tokens=N) (default 256)",
       "INT"},
      {"--batch-size", nullptr, "transformers: prompts per generate call (default 1)", "INT"},
      {"--num-beams", nullptr, "transformers: generate(num_beams=N)", "INT"},
      {"--num-return-sequences", nullptr, "transformers: generate(num_return_sequences=N)",
       "INT"},
      {"--do-sample", nullptr, "transformers: generate(do_sample=true|false) (default true)",
       "TEXT"},
      {"--load-in-4bit", nullptr, "transformers: BitsAndBytesConfig(load_in_4bit=True)",
       nullptr},
      {"--load-in-8bit", nullptr, "transformers: BitsAndBytesConfig(load_in_8bit=True)",
       nullptr},
      {"--quantization", "-q", "Quantization method (transformers: fbgemm_fp8 on load)", "TEXT"},
      {"--cache-nbits", nullptr, "transformers: QuantizedCache nbits (2 or 4)", "INT"},
      {"--num-gpus", nullptr, "transformers: GPUs device_map spreads the model over", "INT"},
      {"--do-fuse", nullptr, "transformers: AwqConfig(do_fuse=True), AutoAWQ's fused modules",
       nullptr},
      {"--fuse-max-seq-len", nullptr,
       "transformers: AwqConfig(fuse_max_seq_len=N), the fused modules' cache length", "INT"},
      {"--images-per-prompt", nullptr, "transformers: images in each prompt (Qwen-VL models)",
       "INT"},
      {"--max-pixels", nullptr,
       "transformers: the processor's max_pixels (default: preprocessor_config.json's)", "INT"},
      {"--tp-plan", nullptr, "transformers: from_pretrained(tp_plan=...) under torchrun (not "
                             "modelled: refused with a message)", "TEXT"},
  };
  return kFlags;
}

Result<TransformersSettings> ReadFlags(const FlagValues& given, TransformersSettings s) {
  bool prompt_given = false, new_given = false;
  for (const auto& [name, text] : given) {
    if (name == "--device-map") {
      s.device_map = text;
    } else if (name == "--max-memory") {
      s.max_memory = text;
    } else if (name == "--dtype" || name == "--torch-dtype") {
      s.dtype = text;
    } else if (name == "--attn-implementation") {
      s.attn_implementation = text;
    } else if (name == "--cache-implementation") {
      s.cache_implementation = text;
    } else if (name == "--quantization") {
      s.quantization = text;
    } else if (name == "--load-in-4bit") {
      s.load_in_4bit = true;
    } else if (name == "--load-in-8bit") {
      s.load_in_8bit = true;
    } else if (name == "--do-fuse") {
      s.do_fuse = true;
    } else if (name == "--tp-plan") {
      // Tensor parallelism under torchrun splits every projection and the KV heads over the
      // ranks (base_model_tp_plan); vramfit plans one process with a device_map only.
      return Status::InvalidArgument(fmt::format(
          "--tp-plan {}: tp_plan tensor parallelism (torchrun, one process per GPU) is not "
          "modelled for transformers; vramfit plans device_map placement in one process "
          "(--num-gpus N spreads the layers over N GPUs)", core::Printable(text)));
    } else if (name == "--do-sample") {
      auto b = ReadBool(name, text);
      if (!b.ok()) return b.status();
      s.do_sample = *b;
    } else {
      auto n = ReadCount(name, text);
      if (!n.ok()) return n.status();
      if (name == "--max-cache-len") s.max_cache_len = *n;
      if (name == "--max-length") s.max_model_len = *n;
      if (name == "--prompt-tokens") s.prompt_tokens = *n, prompt_given = true;
      if (name == "--max-new-tokens") s.max_new_tokens = *n, new_given = true;
      if (name == "--batch-size") s.max_num_seqs = *n;
      if (name == "--num-beams") s.num_beams = *n;
      if (name == "--num-return-sequences") s.num_return_sequences = *n;
      if (name == "--cache-nbits") s.cache_nbits = *n;
      if (name == "--num-gpus") s.pipeline_parallel_size = *n;
      if (name == "--fuse-max-seq-len") s.fuse_max_seq_len = *n;
      if (name == "--images-per-prompt") s.images_per_prompt = *n;
      if (name == "--max-pixels") s.max_pixels = *n;
    }
  }
  if (prompt_given && new_given) s.max_model_len = s.prompt_tokens + s.max_new_tokens;
  return s;
}

bool HasNoMemoryEffect(std::string_view flag, bool* takes_value) {
  // from_pretrained's keywords that change no GPU memory, as flags: where the files come from
  // and how they are fetched, remote code, the CPU-side loading path (modeling_utils.py,
  // v4.57); the Python reader reads the same keywords (script/python.cc).
  static constexpr std::string_view kSwitches[] = {
      "--trust-remote-code", "--low-cpu-mem-usage", "--local-files-only", "--force-download",
      "--use-safetensors"};
  static constexpr std::string_view kValued[] = {"--cache-dir", "--token"};
  *takes_value = std::find(std::begin(kValued), std::end(kValued), flag) != std::end(kValued);
  return *takes_value ||
         std::find(std::begin(kSwitches), std::end(kSwitches), flag) != std::end(kSwitches);
}

bool IsTransformersCommand(const std::vector<std::string>& argv) {
  return !argv.empty() && argv[0] == "transformers";
}

Result<EngineCommand> ReadTransformersCommand(const std::vector<std::string>& argv) {
  EngineCommand out;
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.rfind("#", 0) == 0) break;  // a shell comment: the plan's Python snippet follows
    if (a.rfind("-", 0) != 0) {
      if (!out.model.empty()) {
        return Status::InvalidArgument(fmt::format(
            "transformers: a second model \"{}\" after {}", core::Printable(a),
            core::Printable(out.model)));
      }
      out.model = a;
      continue;
    }
    const size_t eq = a.find('=');
    const std::string name = a.substr(0, eq);
    const FlagSpec* spec = nullptr;
    for (const FlagSpec& f : Flags()) {
      if (name == f.name || (f.short_name && name == f.short_name)) spec = &f;
    }
    bool valued = false;
    if (spec == nullptr && HasNoMemoryEffect(name, &valued)) {
      if (valued && eq == std::string::npos && i + 1 < argv.size()) ++i;
      out.ReadWithoutMemoryEffect(name);
      continue;
    }
    if (spec == nullptr) {
      out.unmodelled_flags.push_back(core::Printable(a));
      // A value that follows an unknown flag is its value, not the model.
      if (eq == std::string::npos && i + 1 < argv.size() && argv[i + 1].rfind("-", 0) != 0 &&
          !out.model.empty()) {
        out.unmodelled_flags.back() += " " + core::Printable(argv[++i]);
      }
      continue;
    }
    if (spec->type_name == nullptr) {
      out.flags.emplace_back(spec->name, "");
    } else if (eq != std::string::npos) {
      out.flags.emplace_back(spec->name, a.substr(eq + 1));
    } else if (i + 1 < argv.size()) {
      out.flags.emplace_back(spec->name, argv[++i]);
    } else {
      return Status::InvalidArgument(fmt::format("{} needs a value", spec->name));
    }
  }
  if (out.model.empty()) {
    return Status::InvalidArgument("transformers: no model given (transformers MODEL [flags])");
  }
  return out;
}

std::string CommandLine(const Inventory& inv, const TransformersSettings& s) {
  const auto word = core::ShellWord;
  std::string c = "transformers " + word(inv.model.empty() ? inv.repo : inv.model);
  if (!s.dtype.empty()) c += " --dtype " + word(s.dtype);
  if (s.device_map != "auto") c += " --device-map " + word(s.device_map);
  if (!s.max_memory.empty()) c += " --max-memory " + word(s.max_memory);
  if (s.pipeline_parallel_size > 1) c += fmt::format(" --num-gpus {}", s.pipeline_parallel_size);
  if (s.load_in_4bit) c += " --load-in-4bit";
  if (s.load_in_8bit) c += " --load-in-8bit";
  if (!s.quantization.empty()) c += " --quantization " + word(s.quantization);
  if (!s.attn_implementation.empty()) c += " --attn-implementation " + word(s.attn_implementation);
  if (!s.cache_implementation.empty()) {
    c += " --cache-implementation " + word(s.cache_implementation);
  }
  if (s.max_cache_len > 0) c += fmt::format(" --max-cache-len {}", s.max_cache_len);
  if (s.cache_implementation == "quantized" && s.cache_nbits != 4) {
    c += fmt::format(" --cache-nbits {}", s.cache_nbits);
  }
  if (s.prompt_tokens > 0) {
    c += fmt::format(" --prompt-tokens {}", s.prompt_tokens);
  } else if (s.max_model_len > 0) {
    c += fmt::format(" --max-length {}", s.max_model_len);
  }
  if (s.max_new_tokens > 0) c += fmt::format(" --max-new-tokens {}", s.max_new_tokens);
  if (s.max_num_seqs > 1) c += fmt::format(" --batch-size {}", s.max_num_seqs);
  if (s.num_beams > 1) c += fmt::format(" --num-beams {}", s.num_beams);
  if (s.num_return_sequences > 1) {
    c += fmt::format(" --num-return-sequences {}", s.num_return_sequences);
  }
  if (!s.do_sample) c += " --do-sample false";
  if (s.do_fuse) c += " --do-fuse";
  if (s.fuse_max_seq_len > 0) c += fmt::format(" --fuse-max-seq-len {}", s.fuse_max_seq_len);
  if (s.images_per_prompt > 0) c += fmt::format(" --images-per-prompt {}", s.images_per_prompt);
  if (s.max_pixels > 0) c += fmt::format(" --max-pixels {}", s.max_pixels);
  return c;
}

std::string PythonSnippet(const Inventory& inv, const TransformersSettings& s,
                          const Rules& rules) {
  const std::string id = !inv.repo.empty() ? inv.repo : inv.model;
  std::string imports = "AutoModelForCausalLM, AutoTokenizer";
  std::string load = fmt::format("{}", Py(id));
  if (const std::string rev = HubRevision(inv); !rev.empty()) load += ", revision=" + Py(rev);
  if (!s.dtype.empty()) {
    // `dtype=` from 4.56 (torch_dtype before, still accepted with a warning).
    load += fmt::format(", {}={}", rules.release >= 45600 ? "dtype" : "torch_dtype", Py(s.dtype));
  }
  load += ", device_map=" + (s.device_map.find('{') == 0 ? s.device_map : Py(s.device_map));
  if (!s.max_memory.empty()) {
    std::string mm = s.max_memory;
    if (mm.find('{') == std::string::npos) {
      // 0=6GiB,cpu=30GiB -> {0: "6GiB", "cpu": "30GiB"}
      std::string dict;
      size_t at = 0;
      while (at <= mm.size()) {
        const size_t comma = std::min(mm.find(',', at), mm.size());
        const std::string item = mm.substr(at, comma - at);
        const size_t eq = item.find('=');
        if (eq != std::string::npos) {
          const std::string k = item.substr(0, eq);
          const bool num = !k.empty() && k.find_first_not_of("0123456789") == std::string::npos;
          dict += (dict.empty() ? "" : ", ") + (num ? k : Py(k)) + ": " + Py(item.substr(eq + 1));
        }
        at = comma + 1;
      }
      mm = "{" + dict + "}";
    }
    load += ", max_memory=" + mm;
  }
  if (!s.attn_implementation.empty()) {
    load += ", attn_implementation=" + Py(s.attn_implementation);
  }
  if (s.load_in_4bit || s.load_in_8bit) {
    imports += ", BitsAndBytesConfig";
    load += fmt::format(", quantization_config=BitsAndBytesConfig({}=True)",
                        s.load_in_4bit ? "load_in_4bit" : "load_in_8bit");
  } else if (s.quantization == "fbgemm_fp8") {
    imports += ", FbgemmFp8Config";
    load += ", quantization_config=FbgemmFp8Config()";
  } else if (s.do_fuse || s.fuse_max_seq_len > 0) {
    // Loading attributes of a pre-quantized AWQ checkpoint (AwqConfig.get_loading_attributes).
    imports += ", AwqConfig";
    load += ", quantization_config=AwqConfig(bits=4";
    if (s.do_fuse) load += ", do_fuse=True";
    if (s.fuse_max_seq_len > 0) load += fmt::format(", fuse_max_seq_len={}", s.fuse_max_seq_len);
    load += ")";
  }
  const int64_t batch = s.max_num_seqs > 0 ? s.max_num_seqs : 1;
  const int64_t new_tokens = s.max_new_tokens > 0 ? s.max_new_tokens : kDefaultNewTokens;
  const int64_t prompt = s.prompt_tokens > 0 ? s.prompt_tokens
                         : s.max_model_len > new_tokens ? s.max_model_len - new_tokens
                                                        : 0;
  std::string gen = fmt::format("**inputs, max_new_tokens={}", new_tokens);
  const std::string& c = s.cache_implementation;
  if (!c.empty() && c != "dynamic") {
    if (s.max_cache_len > 0 && c == "static") {
      imports += ", StaticCache";
      gen += fmt::format(", past_key_values=StaticCache(config=model.config, "
                         "max_cache_len={})", s.max_cache_len);
    } else {
      gen += ", cache_implementation=" + Py(c);
      if (c == "quantized") {
        gen += fmt::format(", cache_config={{\"backend\": \"quanto\", \"nbits\": {}}}",
                           s.cache_nbits);
      }
    }
  }
  if (s.num_beams > 1) gen += fmt::format(", num_beams={}", s.num_beams);
  if (s.num_return_sequences > 1) {
    gen += fmt::format(", num_return_sequences={}", s.num_return_sequences);
  }
  if (!s.do_sample) gen += ", do_sample=False";
  if (s.images_per_prompt > 0) {
    // A processor and the image-text model class; the prompt's tokens are the text's, the
    // images add theirs.
    std::string mm = imports;
    mm.replace(0, std::string_view("AutoModelForCausalLM, AutoTokenizer").size(),
               "AutoModelForImageTextToText, AutoProcessor");
    const std::string pixels = s.max_pixels > 0 ? fmt::format(", max_pixels={}", s.max_pixels)
                                                : std::string();
    return fmt::format(
        "from transformers import {}; proc = AutoProcessor.from_pretrained({}{}); model = "
        "AutoModelForImageTextToText.from_pretrained({}); inputs = proc(text=[\"<a {}-token "
        "prompt with {} image placeholder(s)>\"] * {}, images=[[\"<image>\"] * {}] * {}, "
        "return_tensors=\"pt\").to(model.device); out = model.generate({})",
        mm, Py(id), pixels, load, prompt, s.images_per_prompt, batch, s.images_per_prompt, batch,
        gen);
  }
  return fmt::format(
      "from transformers import {}; tok = AutoTokenizer.from_pretrained({}); model = "
      "AutoModelForCausalLM.from_pretrained({}); inputs = tok([\"<a {}-token prompt>\"] * {}, "
      "return_tensors=\"pt\").to(model.device); out = model.generate({})",
      imports, Py(id), load, prompt, batch, gen);
}

}  // namespace vramfit::transformers
