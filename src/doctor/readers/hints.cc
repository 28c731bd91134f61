// The engine-neutral hints (readers/reader.h), read after every engine's lines: multimodal
// hints (pixel values, image grids, encoder frames, dummy images in the profile run, image URLs,
// a prompt asking to describe an image), the prompt length of vLLM's request log, kept here
// so that the events stay in the order they always had, MLX's allocation failures, which
// reach the logs of the programs that run MLX (Ollama's MLX runner, mlx-lm) unchanged, and the
// model a front end over several engines (Xinference) names in its out-of-memory line.
#include <algorithm>
#include <cctype>

#include "doctor/readers/reader.h"

namespace vramfit::doctor {

// Lists of literals are written "..."sv: their lengths are known when compiled (a list of
// pointers is measured with strlen on every pass of a loop, on every line of a log).
using std::string_view_literals::operator""sv;
namespace {

// MLX's Metal allocator (mlx/backend/metal/allocator.cpp MetalAllocator::malloc, 0.2x-0.3x)
// throws "[metal::malloc] Attempting to allocate N bytes which is greater than the maximum
// allowed buffer size of M bytes." for one buffer over the device's maxBufferLength, and
// "[metal::malloc] Resource limit (N) exceeded." past the buffer count; mlx/allocator.cpp's
// malloc throws "[malloc] Unable to allocate N bytes." when the allocator returns none. Apple's
// GPUs share the system's memory: each is the GPU running out, the request in bytes.
// (Also where a paste reflowed the first after "Attempting to": its words, which no other
// allocator prints, are read across the two lines.)
void MatchMlxAllocator(const Line& line) {
  const LineView s = line.view();
  if (!Has(s, "malloc] ")) {
    if (const LineView w =
            WholeBoth(line, "Attempting to allocate", "greater than the maximum allowed buffer");
        !w.empty()) {
      Set(line.Emit(EventKind::kCudaOom, "any"), Num::kRequestedBytes,
          BytesAfter(w, "Attempting to allocate"));
    }
    return;
  }
  const char* key = Has(s, "[metal::malloc] Attempting to allocate") ? "Attempting to allocate"
                    : Has(s, "[malloc] Unable to allocate")          ? "Unable to allocate"
                    : Has(s, "[metal::malloc] Resource limit")       ? ""
                                                                     : nullptr;
  if (!key) return;
  auto& e = line.Emit(EventKind::kCudaOom, "any");
  if (*key) Set(e, Num::kRequestedBytes, BytesAfter(s, key));
}

// Xinference's model actor, when a request's generation raises torch's OutOfMemoryError
// (xinference/core/model.py, ModelActor's generator wrappers and _handle_oom_error, 0.1x-1.x):
// "Model actor is out of memory, model id: <uid>, error: ...". The uid is the model's name unless
// the user chose another ("qwen2.5-vl-7b-instruct", "whisper-0"): the model, as a config event.
void MatchXinferenceModel(const Line& line) {
  constexpr std::string_view kKey = "Model actor is out of memory, model id: ";
  const std::string_view t = line.text;
  const size_t at = t.find(kKey);
  if (at == std::string_view::npos) return;
  const size_t b = at + kKey.size();
  size_t e = b;
  while (e < t.size() && e - b < 200 && t[e] != ',' && t[e] != ' ' && t[e] != '\r') ++e;
  if (e > b) line.Emit(EventKind::kConfig, "any").text = std::string(t.substr(b, e - b));
}

// A vLLM request's multimodal features (its mm_features list, 0.11+). The engine's crash dump
// lists every request's, also the text-only ones' ("mm_features=[]",
// vllm/logging_utils/dump_input.py of a SchedulerOutput): an empty list is no image.
bool MmFeaturesGiven(std::string_view s) {
  constexpr std::string_view kKey = "mm_features";
  for (size_t at = s.find(kKey); at != std::string_view::npos; at = s.find(kKey, at + 1)) {
    if (s.substr(at + kKey.size(), 3) != "=[]") return true;
  }
  return false;
}

// A file a traceback's frame line names: Python's `File ".../name", line N` or IPython 8's
// `File .../name:N, in fn(...)` (a notebook's paste, where the path has no quotes).
bool FrameNamesFile(const LineView& s, std::string_view file) {
  for (size_t at = s.find(file); at != std::string_view::npos; at = s.find(file, at + 1)) {
    const size_t end = at + file.size();
    if (end < s.size() && s[end] == '"') return true;
    if (end + 1 < s.size() && s[end] == ':' &&
        std::isdigit(static_cast<unsigned char>(s[end + 1]))) {
      return true;
    }
  }
  return false;
}

// A frame or code line that only a multimodal encoder runs: with it on the stack the failed
// allocation is the encoder's (the mm hint's text "encoder"; readers/pytorch.cc tags the vision
// towers' own files and their patch embeddings the same way).
//  - vLLM: GPUModelRunner._execute_mm_encoder (v1/worker/gpu_model_runner.py, 0.7+), which
//    calls the model's get_multimodal_embeddings (SupportsMultiModal, models/interfaces.py
//    0.6-0.10; embed_multimodal from 0.11); each model's _process_image_input /
//    _process_video_input / _process_audio_input under it; the ViT attention wrappers
//    (attention/ops/vit_attn_wrappers.py 0.11+, v1/attention/ops/ from 0.15); the LLaVA
//    family's _process_image_pixels / _image_pixels_to_features (models/llava*.py, 0.5+) and
//    Pixtral's self.vision_encoder( (models/pixtral.py).
//  - TGI: the vision-language models' get_vision_embeds (server/text_generation_server/models/
//    vlm_causal_lm.py and custom_modeling, 3.x).
//  - transformers: get_image_features / get_video_features / get_audio_features (the
//    vision-language models' modeling files, 4.45+), and the towers' calls in the models'
//    forward: self.visual( (Qwen2-VL and Qwen2.5-VL, also vLLM's), self.visual.encode( (Qwen-VL's
//    remote code), self.vision_tower( (LLaVA family), self.vision_model( (mllama, idefics,
//    BLIP-2), self.audio_tower( (Qwen2-Audio), self.vpm( and get_vllm_embedding (MiniCPM-V's
//    remote code), extract_feature( (InternVL's remote code and vLLM's internvl.py),
//    encode_images( (the LLaVA repository's llava_arch.py).
//  - the ViTs' block loop, "for blk in self.blocks: hidden_states = blk(...)" (Qwen2-VL-style
//    vision towers in transformers and vLLM, GLM-4V, timm's ViT); language models name theirs
//    layer / decoder_layer.
//  - SGLang: embed_mm_inputs and its _get_chunked_prefill_embedding, which call the model's
//    get_image_feature / get_video_feature / get_audio_feature as data_embedding_func
//    (managers/mm_utils.py, 0.4.4-0.5); general_mm_embed_routine is not enough alone: it also
//    runs the language model.
bool EncoderRuns(const LineView& s) {
  for (std::string_view key : {"_execute_mm_encoder"sv,
                               "get_multimodal_embeddings"sv,
                               "embed_multimodal"sv,
                               "_process_image_input"sv,
                               "_process_video_input"sv,
                               "_process_audio_input"sv,
                               "get_image_feature"sv,
                               "get_video_feature"sv,
                               "get_audio_feature"sv,
                               "self.visual("sv,
                               "visual.encode("sv,
                               "self.vision_tower("sv,
                               "self.vision_model("sv,
                               "self.audio_tower("sv,
                               "self.vpm("sv,
                               "self.extract_feature("sv,
                               "self.encode_images("sv,
                               "self.vision_encoder("sv,
                               "_image_pixels_to_features"sv,
                               "_process_image_pixels"sv,
                               "get_vision_embeds"sv,
                               "get_vllm_embedding"sv,
                               "= blk("sv,
                               "embed_mm_inputs"sv,
                               "_get_chunked_prefill_embedding"sv,
                               "data_embedding_func"sv}) {
    if (Has(s, key)) return true;
  }
  // The Qwen2-VL family's vision attention in transformers (VisionSdpaAttention.forward of
  // modeling_qwen2_vl.py, qwen2_5_vl and qwen2_5_omni, 4.45-4.5x): SDPA over every patch of the
  // images with a block-diagonal boolean mask, on this code line; the language model's attention
  // calls it with query_states / key_states and a causal mask.
  if (Has(s, "scaled_dot_product_attention(q, k, v, attention_mask, dropout_p=0.0)")) return true;
  // SGLang's multimodal processors (multimodal/processors/, managers/multimodal_processors/
  // before 0.4.7: base_processor.py process_mm_data and the model's process_mm_data_async) run
  // the image processor in the tokenizer manager's process, on the GPU with the fast image
  // processors (transformers' image_processing_utils_fast.py, torchvision on the tensors'
  // device; SGLang's --disable-fast-image-processor turns it off): the images' pixels, not the
  // language model, take that memory.
  if (Has(s, "File ") && (Has(s, "multimodal/processors/") ||
                          Has(s, "multimodal_processors/") ||
                          FrameNamesFile(s, "image_processing_utils_fast.py"))) {
    return true;
  }
  return FrameNamesFile(s, "vit_attn_wrappers.py");
}

// An OCR program's frame: a path or function whose name has a word beginning or ending in "ocr"
// ("chandra-ocr", "olmocr", "ocr_layout", "GOT-OCR2", "PaddleOCR"). Its model reads page images,
// so the model it runs is a vision-language one.
bool OcrFrame(std::string_view t) {
  if (t.find("File ") == std::string_view::npos || t.find(".py") == std::string_view::npos) {
    return false;
  }
  const auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  // ASCII letters only: setting the 0x20 bit makes 'O' 'o' and no other byte 'o' (nor 'c', 'r').
  const auto ocr_at = [&](size_t i) {
    return i + 3 <= t.size() && (t[i] | 0x20) == 'o' && (t[i + 1] | 0x20) == 'c' &&
           (t[i + 2] | 0x20) == 'r';
  };
  for (size_t i = 0; i + 3 <= t.size(); ++i) {
    if (!ocr_at(i)) continue;
    const bool starts = i == 0 || !alnum(t[i - 1]);
    const bool ends = i + 3 == t.size() || !alnum(t[i + 3]);
    if (starts || ends) return true;
  }
  return false;
}

// The model a training or serving command line, or a loading call, names, where no engine's
// reader reads it: the flags of transformers' example scripts and the trainers built on them
// (--model_name_or_path: LLaMA-Factory, TRL, open-instruct, axolotl's CLI overrides), ms-swift's
// (--model_id_or_path, --model_type), FastChat's and SGLang's --model-path, --model_path,
// --base_model (alpaca-lora style scripts), --pretrained_model_name_or_path (diffusers' and PEFT's
// examples), and from_pretrained("ID") with a literal id. The name says the model's size and
// kind (a vision-language one: facts.cc VisionLanguageName) as vLLM's and TGI's model ids do.
void MatchModelNamed(const Line& line) {
  // Most lines hold neither a flag nor the call: a look at the line's byte pairs each.
  const LineView v = line.view();
  if (!Has(v, "model") ||
      (!Has(v, "--") && !Has(v, "from_pretrained(") && !Has(v, "LLM(") && !Has(v, "Engine("))) {
    return;
  }
  const std::string_view t = line.text;
  // (vLLM's offline LLM(model="ID") and SGLang's Engine(model_path="ID") with a literal id too.)
  constexpr std::string_view kKeys[] = {
      "--model_name_or_path", "--model_id_or_path",       "--model-path", "--model_path",
      "--base_model",         "--pretrained_model_name_or_path", "--model_type",
      "from_pretrained(\"",   "from_pretrained('",         "LLM(model=\"", "LLM(model='",
      "Engine(model_path=\"", "Engine(model_path='"};
  for (std::string_view key : kKeys) {
    const size_t at = t.find(key);
    if (at == std::string_view::npos) continue;
    size_t b = at + key.size();
    const bool call = key.back() == '"' || key.back() == '\'';
    if (!call) {
      if (b < t.size() && t[b] != ' ' && t[b] != '=') continue;  // a longer flag
      while (b < t.size() && (t[b] == ' ' || t[b] == '=' || t[b] == '"' || t[b] == '\'')) ++b;
    }
    size_t e = b;
    while (e < t.size() && e - b < 200 && t[e] != ' ' && t[e] != '"' && t[e] != '\'' &&
           t[e] != ',' && t[e] != '`' && t[e] != '\\' && t[e] != ')' && t[e] != '\r') {
      ++e;
    }
    const std::string_view name = t.substr(b, e - b);
    if (name.empty() || name[0] == '-' || name[0] == '$' || name[0] == '{' ||
        std::none_of(name.begin(), name.end(),
                     [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; })) {
      continue;
    }
    line.Emit(EventKind::kConfig, "any").text = std::string(name);
    return;
  }
}

// A weight quantization the run uses, in the engine's words: vLLM's and SGLang's warning for a
// method without optimized kernels ("awq quantization is not fully optimized yet. The speed can
// be slower than non-quantized models.", config.py _verify_quantization), a --quantization flag
// or an engine config's quantization=X (not None), a server-args dump's quantization='X'.
bool QuantizedRunLine(const LineView& s) {
  if (Has(s, "quantization is not fully optimized yet")) return true;
  for (std::string_view key :
       {"--quantization "sv, "--quantization="sv, " quantization="sv, "quantization='"sv}) {
    const size_t at = s.find(key);
    if (at == std::string_view::npos) continue;
    const std::string_view v = s.substr(at + key.size(), 4);
    if (!v.empty() && !v.starts_with("None") && !v.starts_with("none") && v[0] != ',' &&
        v[0] != ' ' && v[0] != '\'') {
      return true;
    }
  }
  return false;
}

// The line is the rest of an old IPython frame header that a reflow broke after its path ("in
// forward(self, input_ids, ...") or after its "in" ("forward(self, ..." after "... .py in").
bool SignatureTail(const Line& line) {
  std::string_view t = Trimmed(line.text);
  if (t.starts_with("in ")) {
    t.remove_prefix(3);
  } else if (line.joined.empty() || !Has(line.joined, ".py in ")) {
    return false;
  }
  const size_t paren = t.find("(self, ");
  return paren != std::string_view::npos && paren > 0 && paren < t.find(' ');
}

void Match(const Line& line) {
  const LineView s = line.view();
  if (Has(s, "quantization") && QuantizedRunLine(s)) {
    line.Emit(EventKind::kConfig, "any").values[Num::kQuantizedRun] = 1;
  }
  MatchMlxAllocator(line);
  MatchModelNamed(line);
  // (2: after an out-of-memory error on the same line, a paste that lost its line ends.)
  if (Has(s, "was the direct cause of the following exception")) {
    const std::string_view t = line.text;
    const size_t chain = t.find("was the direct cause of the following exception");
    const size_t oom = std::min(t.find("out of memory"), t.find("OutOfMemoryError"));
    line.Emit(EventKind::kConfig, "any").values[Num::kExceptionChained] = oom < chain ? 2 : 1;
  }
  // (3: a handler's exception, "During handling of the above exception, another exception
  // occurred:": linked, not raised from it.)
  if (Has(s, "During handling of the above exception")) {
    line.Emit(EventKind::kConfig, "any").values[Num::kExceptionChained] = 3;
  }
  // (Also a frame a paste reflowed at its path: "File" on the line before.)
  if (OcrFrame(line.text) || (!line.joined.empty() && Has(s, ".py") && !Has(s, "File ") &&
                              OcrFrame(line.joined))) {
    line.Emit(EventKind::kMmHint, "any");
  }
  if (Has(s, "Model actor is out of memory")) MatchXinferenceModel(line);
  // Every hint below holds one of these: most lines hold none and stop here.
  const bool maybe = Has(s, "pixel") || Has(s, "image") || Has(s, "multi") || Has(s, "mm_") ||
                     Has(s, "ision") || Has(s, "isual") || Has(s, "encoder") || Has(s, "<|") ||
                     Has(s, "video") || Has(s, "Encoder cache") ||
                     Has(s, "\xe5\x9b\xbe");
  const bool encoder = EncoderRuns(s);
  if (encoder) line.Emit(EventKind::kMmHint, "any").text = "encoder";
  // IPython's frame header prints the function's whole signature ("modeling_gemma4.py in
  // forward(self, input_ids, pixel_values, pixel_values_videos, ...)"): a multimodal model's
  // parameters, which a text-only call passes as None, not an image or video given.
  // Also its tail where a paste reflowed the header after the path or its "in" ("in forward(self,
  // ..." or "forward(self, ..." on a line of its own).
  const bool signature = Has(s, "(self, ") &&
                         ((Has(s, ".py") && (Has(s, ".py in ") || Has(s, ", in "))) ||
                          SignatureTail(line));
  if (!encoder && maybe && !signature &&
      (Has(s, "pixel_values") || Has(s, "image_grid_thw") ||
       // Video inputs of transformers' vision-language models (Qwen2-VL / Qwen2.5-VL processors
       // and modeling files, 4.45+): the video counterparts of the image keys.
       Has(s, "video_grid_thw") || Has(s, "pixel_values_videos") ||
       Has(s, "get_video_features") || MmFeaturesGiven(s) ||
       Has(s, "multi-modal") || Has(s, "multimodal") || Has(s, "limit_mm_per_prompt") ||
       Has(s, "dummy image") || Has(s, "get_image_features") || Has(s, "_execute_mm_encoder") ||
       Has(s, "get_multimodal_embeddings") || Has(s, "embed_multimodal") || Has(s, "visual(") ||
       Has(s, "vision_tower") || Has(s, "encoder cache") || Has(s, "pixel_values=") ||
       // vLLM V1's profile run sizing the encoder cache before the encoder's dummy pass
       // (gpu_model_runner.py profile_run, 0.8+): "Encoder cache will be initialized with a
       // budget of N tokens, and profiled with M image items of the maximum feature size".
       Has(s, "Encoder cache will be initialized") ||
       Has(s, "image_embeds") || Has(s, "visual_embedding") || Has(s, "VisionTransformer") ||
       Has(s, "Qwen2_5_VisionTransformer") || Has(s, "vision_model") ||
       Has(s, "<|vision_start|>") || Has(s, "<|image_pad|>") || Has(s, "image_url") ||
       Has(s, "describe the image") || Has(s, "Describe the image") ||
       // SGLang's vision path (managers/mm_utils.py embed_mm_inputs -> the model's
       // get_image_feature / get_video_feature, passed as data_embedding_func; 0.4.4-0.5),
       // transformers' get_image_features (4.45+; also matched by the first key), Qwen-VL's
       // remote code (modeling_qwen.py "images = self.visual.encode(images)", visual.py).
       Has(s, "get_image_feature") || Has(s, "get_video_feature") ||
       Has(s, "embed_mm_inputs") || Has(s, "data_embedding_func") || Has(s, "visual.encode(") ||
       FrameNamesFile(s, "/visual.py") || FrameNamesFile(s, "\\visual.py") ||
       Has(s, "\xe5\x9b\xbe\xe7\x89\x87") /* 图片 */ ||
       Has(s, "\xe5\x9b\xbe\xe5\x83\x8f") /* 图像 */)) {
    line.Emit(EventKind::kMmHint, "any");
  }
  // A frame in a vision-language model's own file (transformers' and vLLM's naming:
  // modeling_qwen2_5_vl.py, qwen2_vl/, qwen3_vl.py, deepseek_vl2.py).
  if (Has(s, "_vl") && (FrameNamesFile(s, "_vl.py") || FrameNamesFile(s, "_vl2.py") ||
                         ((Has(s, "_vl/") || Has(s, "_vl\\")) && FrameNamesFile(s, ".py")))) {
    line.Emit(EventKind::kMmHint, "any");
  }
  // vLLM V0's encoder-decoder runner (vllm/worker/enc_dec_model_runner.py, 0.6-0.9), which runs
  // the models with an image or audio encoder (mllama, whisper, florence2; BART the text one):
  // its profile run feeds the encoder the largest dummy images or audio.
  if (FrameNamesFile(s, "enc_dec_model_runner.py")) line.Emit(EventKind::kMmHint, "any");
  if (Has(s, "prompt_token_ids_len=")) {
    auto& e = line.Emit(EventKind::kPrompt, "vllm");
    Set(e, Num::kPromptTokens, NumberAfter(s, "prompt_token_ids_len="));
  }
}

// A shell prompt launching an inference program: "$ python run.py", "user@host:~/app$
// CUDA_VISIBLE_DEVICES=0 torchrun ...", "(venv) PS C:\app> python app.py", "root@c0ffee:/# vllm
// serve ...". Pasted between two runs' output, it begins the second.
bool BeginsRun(const Line& line) {
  const std::string_view s = line.text;
  constexpr size_t kLongestPrompt = 160;
  constexpr std::string_view kPrompts[] = {"$ ", "# ", "> "};
  constexpr std::string_view kLaunchers[] = {"sudo ", "nohup ", "uv run ", "env "};
  constexpr std::string_view kPrograms[] = {
      "python",      "torchrun ", "accelerate ", "deepspeed ", "vllm ",
      "llama-server", "llama-cli", "ollama ",    "text-generation-launcher", "lms "};
  for (const std::string_view prompt : kPrompts) {
    const size_t at = s.find(prompt);
    // The prompt's sign ends the prompt: it follows the path or host, never a space (a comment's
    // "  # python" in a code line).
    if (at == std::string_view::npos || at > kLongestPrompt || (at > 0 && s[at - 1] == ' '))
      continue;
    std::string_view rest = s.substr(at + prompt.size());
    for (bool more = true; more;) {  // launchers and VAR=value assignments before the program
      more = false;
      for (const std::string_view l : kLaunchers) {
        if (rest.substr(0, l.size()) == l) {
          rest.remove_prefix(l.size());
          more = true;
        }
      }
      const size_t space = rest.find(' '), eq = rest.find('=');
      if (eq != std::string_view::npos && space != std::string_view::npos && eq < space &&
          eq > 0) {
        rest.remove_prefix(space + 1);
        more = true;
      }
    }
    for (const std::string_view p : kPrograms) {
      if (rest.substr(0, p.size()) == p) return true;
    }
  }
  return false;
}

}  // namespace

const Reader& HintsReader() {
  static const Reader kReader = {
      .engine = "any",
      .match = Match,
      // An OpenAI-compatible server's lines (the vLLM reader's, with no engine of their own).
      .milestones = {{EventKind::kServing, Stage::kRuntime}},
      .begins_run = BeginsRun,
  };
  return kReader;
}

}  // namespace vramfit::doctor
