// Diagnosis rules: the reported scenarios, the calibrated plan, fixes with values, and logs
// that hold nothing to diagnose.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

#include "doctor/facts.h"
#include "testutil/catalog.h"
#include "vramfit/doctor.h"
#include "vramfit/report.h"

namespace vramfit {
namespace {

using testutil::Catalog;
using testutil::Gpu;

Diagnosis DiagnoseText(const std::string& text, const DoctorContext& ctx = {}) {
  std::istringstream in(text);
  auto s = ScanLog(in);
  EXPECT_TRUE(s.ok());
  return Diagnose(*s, ctx);
}

// A log and the stage and cause it must get; each checked with the log named on failure.
struct Expected {
  std::string log, stage, cause;
};
void ExpectEach(const std::vector<Expected>& cases) {
  for (const Expected& c : cases) {
    const Diagnosis d = DiagnoseText(c.log);
    EXPECT_EQ(d.stage, c.stage) << c.log;
    EXPECT_EQ(d.cause, c.cause) << c.log;
  }
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A start-up that reached serving with nothing failing is no failure, and is said to be one the
// doctor read, not text it could not place; a text of no engine stays "nothing recognised".
TEST(Diagnose, AHealthyStartUpIsNoFailureButIsRead) {
  const std::string log =
      "INFO 01-15 10:23:53 [gpu_model_runner.py:3470] Model loading took 15.2683 GiB memory and "
      "12.3 seconds\n"
      "INFO 01-15 10:23:58 [gpu_worker.py:333] Available KV cache memory: 51.53 GiB\n"
      "INFO 01-15 10:24:02 [kv_cache_utils.py:1016] GPU KV cache size: 421,984 tokens\n"
      "INFO 01-15 10:24:22 [api_server.py:1880] Starting vLLM API server 0 on "
      "http://0.0.0.0:8000\n"
      "INFO:     Application startup complete.\n";
  std::istringstream in(log);
  const auto scan = ScanLog(in);
  ASSERT_TRUE(scan.ok());
  const Diagnosis d = Diagnose(*scan);
  EXPECT_FALSE(d.found);
  const std::string text = RenderDoctorText(d, *scan);
  EXPECT_NE(text.find("no failure recognised in 5 lines"), std::string::npos) << text;
  EXPECT_NE(text.find("vllm reached serving (line 4"), std::string::npos) << text;
  EXPECT_EQ(text.find("a snapshot alone"), std::string::npos) << text;
  std::istringstream prose("The weather was fine all week.\n");
  const auto none = ScanLog(prose);
  ASSERT_TRUE(none.ok());
  EXPECT_NE(RenderDoctorText(Diagnose(*none), *none).find("nothing recognised in 1 lines"),
            std::string::npos);
}

// llama-server loads the vision projector after the model's layers: a device buffer that fails
// with the projector's tensor loader on the abort's backtrace is the mmproj weights (load), not
// the model's layers; the same failure with the loader named only before it, and no backtrace,
// stays the projector's start-up as before, and without any projector line it is the layers.
TEST(Diagnose, LlamaCppProjectorWeightsOnTheAbortBacktraceAreTheLoad) {
  const std::string failure =
      "0.00.408.510 I srv    load_model: loading model 'Qwen/Qwen3-VL-8B-Instruct-GGUF:Q8_0'\n"
      "/src/llama.cpp/ggml/src/ggml-backend.cpp:179: GGML_ASSERT(buffer) failed\n"
      "0.24.923.820 E ggml_backend_cuda_buffer_type_alloc_buffer: allocating 1139.46 MiB on "
      "device 0: cudaMalloc failed: out of memory\n"
      "0.24.923.823 E alloc_tensor_range: failed to allocate CUDA0 buffer of size 1194810880\n";
  const std::string mangled =
      "/app/libggml-base.so.0(ggml_abort+0x11e) [0x7f3e9b5dbce]\n"
      "/app/libmtmd.so.0(_ZN17clip_model_loader12load_tensorsER8clip_ctx+0x9b86) [0x7f3e9c35586]\n"
      "/app/libmtmd.so.0(_Z9clip_initPKc19clip_context_params+0x305) [0x7f3e9c1fb95]\n"
      "/app/libmtmd.so.0(mtmd_init_from_file+0x2d) [0x7f3e9bf8ca0d]\n";
  const Diagnosis d = DiagnoseText(failure + mangled);
  EXPECT_EQ(d.engine, "llama.cpp");
  EXPECT_EQ(d.stage, "load");
  EXPECT_EQ(d.cause, "multimodal_encoder");
  ASSERT_GE(d.fixes.size(), 2u);
  EXPECT_EQ(d.fixes[0].change, "--no-mmproj-offload");
  EXPECT_EQ(d.fixes[1].change, "--no-mmproj");
  // gdb's demangled frame reads the same.
  const Diagnosis g = DiagnoseText(
      failure + "#5  0x00007f3e9c35586 in clip_model_loader::load_tensors(clip_ctx&) () from "
                "/app/libmtmd.so.0\n");
  EXPECT_EQ(g.stage, "load");
  EXPECT_EQ(g.cause, "multimodal_encoder");
  // No projector frame: the model's layers.
  const Diagnosis layers = DiagnoseText(failure);
  EXPECT_EQ(layers.stage, "load");
  EXPECT_EQ(layers.cause, "weights_too_large");
  // An image being encoded before the failure: the request's image, not the projector's load.
  const Diagnosis image = DiagnoseText("slot launch_slot_: id  0 | task 0 | processing task\n"
                                       "encoding image slice...\n" +
                                       failure + mangled);
  EXPECT_NE(image.stage, "load");
}

// A full card at a small request with no phase's evidence reads as the load for a program that
// places a model (the weights fill it), but as a training step where the command line starts a
// training run: its steps hold gradients, optimizer states and activations beside the weights.
TEST(Diagnose, FullCardInATrainingRunIsItsStep) {
  const std::string oom =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 172.00 MiB. GPU 0 has a "
      "total capacity of 47.49 GiB of which 67.62 MiB is free. Including non-PyTorch memory, this "
      "process has 46.95 GiB memory in use. Of the allocated memory 45.80 GiB is allocated by "
      "PyTorch, and 612.05 MiB is reserved by PyTorch but unallocated.\n";
  const Diagnosis bare = DiagnoseText(oom);
  EXPECT_EQ(bare.stage, "load");
  for (const std::string launch :
       {"python benchmark.py --max_iters 20 --model_name Llama-2-7b-hf --micro_batch_size 1\n",
        "torchrun --nproc_per_node=8 train.py --model Llama-3-8B\n",
        "accelerate launch run_clm.py --per_device_train_batch_size 4 --num_train_epochs 3\n",
        "tune run lora_finetune_single_device --config llama3_1/8B_lora_single_device\n"}) {
    const Diagnosis d = DiagnoseText(launch + oom);
    EXPECT_EQ(d.stage, "runtime") << launch;
    EXPECT_EQ(d.cause, "activation_peak") << launch;
  }
  // Not a training run: an evaluation recipe, a generation script.
  for (const std::string launch : {"tune run eleuther_eval --config eval.yaml\n",
                                   "python generate.py --checkpoint_path model.pth\n"}) {
    EXPECT_EQ(DiagnoseText(launch + oom).stage, "load") << launch;
  }
}

// A training loop's step report after other words on its line (a paste that lost its line
// ends) is still the step: nanoGPT's "step 0: train loss" and "iter 0: loss", torchtune's bar.
TEST(Diagnose, TrainingStepAfterOtherWordsOnItsLine) {
  const std::string oom =
      "RuntimeError: CUDA out of memory. Tried to allocate 786.00 MiB (GPU 0; 15.78 GiB total "
      "capacity; 14.28 GiB already allocated; 620.69 MiB free; 14.32 GiB reserved in total by "
      "PyTorch)\n";
  EXPECT_EQ(DiagnoseText(oom).stage, "load");
  for (const std::string before :
       {"tokens per iteration will be: 491,520 step 0: train loss 10.9865, val loss 10.9881\n",
        "compiling the model... (takes a ~minute) iter 0: loss 10.9819, time 41876.39ms\n",
        "Learning rate scheduler is initialized. 1|12|Loss: 1.0147:   0%|          | 12/7245\n"}) {
    EXPECT_EQ(DiagnoseText(before + oom).stage, "runtime") << before;
  }
  // Not a step: the word and a number with no colon, or no loss after it.
  for (const std::string before : {"the next step 2 is to measure the loss of the model\n",
                                   "checkpoint written at step 3: model.pt\n"}) {
    EXPECT_EQ(DiagnoseText(before + oom).stage, "load") << before;
  }
}

// A tqdm bar described as training steps or epochs (verl, EasyR1, diffusers' training examples,
// Lightning) with steps done places a failure after the load, a Ray worker's prefix before it
// or not; the same bar at step 0, or a bar described otherwise, does not.
TEST(Diagnose, StepsBarPlacesTheFailureInTraining) {
  const std::string oom =
      "RuntimeError: CUDA out of memory. Tried to allocate 786.00 MiB (GPU 0; 15.78 GiB total "
      "capacity; 14.28 GiB already allocated; 620.69 MiB free; 14.32 GiB reserved in total by "
      "PyTorch)\n";
  for (const std::string bar :
       {"(pid=22967) Running step 0:   7%|7         | 4.00/60.0 [2:11:12<23:53:54, 1.54ks/it]\n",
        "Training Progress:   3%|3         | 12/435 [10:01<5:53:12, 50.1s/it]\n",
        "Steps:  40%|####      | 400/1000 [07:10<10:45,  1.08s/it, lr=1e-05, step_loss=0.1]\n",
        "Epoch 2:  45%|####5     | 45/100 [00:30<00:37,  1.47it/s, v_num=3]\n",
        "some earlier text] Training Progress:   3%|3         | 12/435 [10:01<5:53:12]\n"}) {
    const Diagnosis d = DiagnoseText(bar + oom);
    EXPECT_EQ(d.stage, "runtime") << bar;
    EXPECT_NE(d.stage_evidence.find("training run past its first step"), std::string::npos) << bar;
  }
  for (const std::string bar :
       {"Training Progress:   0%|          | 0/435 [00:00<?, ?it/s]\n",
        "Inference Steps:  40%|####      | 20/50 [00:07<00:10,  2.9it/s]\n",
        "Loading checkpoint shards:  52%|#####     | 17/33 [00:41<00:38]\n"}) {
    EXPECT_EQ(DiagnoseText(bar + oom).stage, "load") << bar;
  }
  // A host kill after steps were taken is the run's, not its load's.
  const std::string ray =
      "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n";
  EXPECT_EQ(DiagnoseText(ray).stage, "load");
  EXPECT_EQ(DiagnoseText("(pid=1) Running step 0:   7%|7   | 4.00/60.0 [2:11:12<23:53:54]\n" +
                         ray)
                .stage,
            "runtime");
}

// A convolution's call at runtime is a vision tower's patch embedding, unless a diffusion
// pipeline runs, whose VAE and UNet convolve throughout: then it is the pipeline's activations.
TEST(Diagnose, ConvolutionIsAnEncoderOnlyOutsideDiffusion) {
  const std::string stack =
      "  File \"/usr/local/lib/python3.10/dist-packages/torch/nn/modules/conv.py\", line 720, in "
      "_conv_forward\n"
      "    return F.conv3d(\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.38 GiB. GPU 0 has a total "
      "capacity of 22.17 GiB of which 1.01 GiB is free.\n";
  const std::string run = "output = model.generate(**inputs, max_new_tokens=128)\n";
  EXPECT_EQ(DiagnoseText(run + stack).cause, "multimodal_encoder");
  for (const std::string diffusion :
       {"video = pipe(prompt=prompt, image=image, num_inference_steps=40)\n",
        "vae = AutoencoderKLCogVideoX.from_pretrained(\"THUDM/CogVideoX1.5-5B-I2V\")\n",
        "  File \"/usr/local/lib/python3.10/dist-packages/diffusers/models/autoencoders/"
        "vae.py\", line 300, in forward\n"}) {
    const Diagnosis d = DiagnoseText(run + diffusion + stack);
    EXPECT_EQ(d.stage, "runtime") << diffusion;
    EXPECT_EQ(d.cause, "activation_peak") << diffusion;
  }
  // The pipeline's call, even as IPython's source line of a frame, runs the model: not a load.
  const std::string load =
      "pipe = CogVideoXImageToVideoPipeline.from_pretrained(\"THUDM/CogVideoX1.5-5B-I2V\")\n"
      "transformer = CogVideoXTransformer3DModel.from_pretrained(\"THUDM/CogVideoX1.5-5B-I2V\")\n";
  const std::string oom =
      "OutOfMemoryError: CUDA out of memory. Tried to allocate 1.38 GiB. GPU 0 has a total "
      "capacity of 22.17 GiB of which 1.01 GiB is free.\n";
  EXPECT_EQ(DiagnoseText(load + oom).stage, "load");
  EXPECT_EQ(DiagnoseText(load + "----> 1 video = pipe(prompt=prompt, num_inference_steps=40)\n" +
                         oom)
                .stage,
            "runtime");
}

// verl's vendored vLLM engine prints "before init cache memory allocated" as it allocates the
// KV cache it has sized: a failure after it is the KV cache's.
TEST(Diagnose, VerlInitCacheLineIsTheKvMilestone) {
  const Diagnosis d = DiagnoseText(
      "(WorkerDict pid=3566775) before init cache memory allocated: 5.96926464GB, reserved: "
      "6.079643648GB\n"
      "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n");
  EXPECT_EQ(d.engine, "vllm");
  EXPECT_EQ(d.stage, "kv_cache");
  EXPECT_EQ(d.cause, "host_memory");
}

// The older message on a consumer card: 87% allocated, no byte free and the whole reserve
// allocated is a card filled by weights placed one by one (load); the same card with a quarter
// of its reserve cached and unallocated is what a forward pass leaves (after start-up).
// A training step's or an evaluation's failure is worded as the step's, not generation's,
// although transformers is the engine.
TEST(Diagnose, TrainingAndEvaluationStepsAreNotGeneration) {
  const std::string oom =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 86.00 MiB. GPU 0 has a "
      "total capacity of 79.15 GiB of which 20.00 MiB is free.\n";
  const Diagnosis train = DiagnoseText(
      "Traceback (most recent call last):\n"
      "  File \"/x/transformers/trainer.py\", line 1904, in _inner_training_loop\n"
      "    tr_loss_step = self.training_step(model, inputs)\n"
      "  File \"/x/torch/_tensor.py\", line 487, in backward\n"
      "    torch.autograd.backward(\n" +
      oom);
  EXPECT_EQ(train.stage, "runtime");
  EXPECT_NE(train.summary.find("training step"), std::string::npos) << train.summary;
  EXPECT_EQ(train.summary.find("generat"), std::string::npos) << train.summary;
  const Diagnosis eval = DiagnoseText(
      "Traceback (most recent call last):\n"
      "  File \"/x/transformers/trainer.py\", line 3100, in evaluation_loop\n"
      "    losses, logits, labels = self.prediction_step(model, inputs)\n" +
      oom);
  EXPECT_NE(eval.summary.find("evaluation"), std::string::npos) << eval.summary;
}

TEST(Diagnose, FullReserveWithNothingCachedIsTheLoad) {
  const auto oom = [](const char* reserved) {
    return fmt::format(
        "RuntimeError: CUDA out of memory. Tried to allocate 96.00 MiB (GPU 0; 6.00 GiB total "
        "capacity; 5.27 GiB already allocated; 0 bytes free; {} reserved in total by PyTorch)\n",
        reserved);
  };
  const Diagnosis full = DiagnoseText(oom("5.28 GiB"));
  EXPECT_EQ(full.stage, "load");
  EXPECT_EQ(full.cause, "weights_too_large");
  EXPECT_EQ(DiagnoseText(oom("5.60 GiB")).stage, "runtime");
  // Free memory left: not a full card.
  EXPECT_EQ(DiagnoseText("RuntimeError: CUDA out of memory. Tried to allocate 96.00 MiB (GPU 0; "
                         "6.00 GiB total capacity; 5.27 GiB already allocated; 300.00 MiB free; "
                         "5.28 GiB reserved in total by PyTorch)\n")
                .stage,
            "runtime");
}

// "--model X" and "model='X'" are vLLM's only where the line names vLLM (its engine-config line,
// LLM(model=...), a vLLM command line): a training script's --model or an API client's model=
// beside a PyTorch error is not a vLLM launch at load.
TEST(Diagnose, ModelArgumentsOfOtherProgramsAreNotVllm) {
  const std::string oom =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
      "capacity of 23.55 GiB of which 1.10 GiB is free. Including non-PyTorch memory, this "
      "process has 22.43 GiB memory in use. Of the allocated memory 21.80 GiB is allocated by "
      "PyTorch, and 190.00 MiB is reserved by PyTorch but unallocated.\n";
  for (const std::string other :
       {"llm = ChatOpenAI(model='gpt-4o', base_url='http://localhost:8000/v1')\n",
        "python eval.py --model meta-llama/Llama-3.1-8B --tasks hellaswag\n",
        "torchrun --nproc_per_node=8 pretrain.py --model Llama-3-8B --lr 3e-4\n"}) {
    const Diagnosis d = DiagnoseText(other + oom);
    EXPECT_EQ(d.engine, "pytorch") << other;
    EXPECT_EQ(d.stage, "runtime") << other;
  }
  for (const std::string vllm :
       {"llm = LLM(model='Qwen/Qwen2.5-7B-Instruct', gpu_memory_utilization=0.9)\n",
        "INFO 05-01 10:00:00 [core.py:58] Initializing a V1 LLM engine (v0.8.5) with config: "
        "model='Qwen/Qwen3-8B', speculative_config=None, tokenizer='Qwen/Qwen3-8B'\n",
        "python -m vllm.entrypoints.openai.api_server --model Qwen/Qwen3-8B\n"}) {
    EXPECT_EQ(DiagnoseText(vllm + oom).engine, "vllm") << vllm;
  }
  // SGLang's modules and CLI name their engine the same way.
  for (const std::string sglang :
       {"python -m sglang.bench_one_batch --model-path Qwen/Qwen2.5-7B --batch 32\n",
        "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --port 30000\n"}) {
    EXPECT_EQ(DiagnoseText(sglang + oom).engine, "sglang") << sglang;
  }
}

// --kv-cache-memory-bytes: vLLM skips its profiling and reserves the given pool whatever the
// utilization says, so a pool that does not fit fails as its tensors are allocated, and the fix
// is a smaller fixed size (what was missing when it failed, and a GiB more), not a lower
// --gpu-memory-utilization.
TEST(Diagnose, FixedKvCacheBytesThatDoNotFitGetASmallerSize) {
  const std::string prefix = "(EngineCore_DP0 pid=2211) ";
  const std::string log =
      prefix + "INFO 11-02 10:01:12 [gpu_model_runner.py:2653] Model loading took 61.0342 GiB "
               "and 24.118823 seconds\n" +
      prefix + "INFO 11-02 10:01:31 [gpu_worker.py:276] Initial free memory 78.68 GiB, reserved "
               "20.00 GiB memory for KV Cache as specified by kv_cache_memory_bytes config and "
               "skipped memory profiling. This does not respect the gpu_memory_utilization "
               "config.\n" +
      prefix + "ERROR 11-02 10:01:32 [core.py:708] EngineCore failed to start.\n" + prefix +
      "ERROR 11-02 10:01:32 [core.py:708] Traceback (most recent call last):\n" + prefix +
      "ERROR 11-02 10:01:32 [core.py:708]   File \"/usr/lib/python3/vllm/v1/worker/"
      "gpu_model_runner.py\", line 4012, in initialize_kv_cache_tensors\n" +
      prefix + "ERROR 11-02 10:01:32 [core.py:708] torch.OutOfMemoryError: CUDA out of memory. "
               "Tried to allocate 320.00 MiB. GPU 0 has a total capacity of 79.19 GiB of which "
               "245.62 MiB is free. Process 2211 has 78.94 GiB memory in use. Of the allocated "
               "memory 77.81 GiB is allocated by PyTorch, and 412.02 MiB is reserved by PyTorch "
               "but unallocated.\n";
  const Diagnosis d = DiagnoseText(log);
  EXPECT_EQ(d.engine, "vllm");
  EXPECT_EQ(d.stage, "kv_cache");
  EXPECT_EQ(d.cause, "kv_no_memory");
  EXPECT_NE(d.summary.find("--kv-cache-memory-bytes"), std::string::npos);
  ASSERT_GE(d.fixes.size(), 2u);
  // 20 GiB less what was missing (20 - 16.78 allocated beside the weights - 0.24 free = 2.98),
  // rounded down, less a GiB: 16G.
  EXPECT_EQ(d.fixes[0].change, "--kv-cache-memory-bytes 16G");
  EXPECT_EQ(d.fixes[1].change, "without --kv-cache-memory-bytes");
  for (const auto& fix : d.fixes) {
    EXPECT_EQ(fix.change.find("--gpu-memory-utilization"), std::string::npos) << fix.change;
  }
}

// A load that runs out of memory gets the dtype fix only where the log does not already load 16
// bits: float32 is told to halve, float16 is told to quantize or offload.
TEST(Diagnose, LoadFixFollowsTheDtypeTheLogAsksFor) {
  auto log = [](const std::string& dtype) {
    return "Traceback (most recent call last):\n"
           "  File \"C:\\Users\\me\\chat\\app.py\", line 12, in <module>\n"
           "    model = AutoModelForCausalLM.from_pretrained(name, torch_dtype=" +
           dtype +
           ").to(\"cuda\")\n"
           "  File \"C:\\Python311\\Lib\\site-packages\\transformers\\modeling_utils.py\", "
           "line 3531, in from_pretrained\n"
           "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 136.00 MiB. GPU 0 "
           "has a total capacty of 8.00 GiB of which 0 bytes is free. Of the allocated memory "
           "7.25 GiB is allocated by PyTorch, and 12.46 MiB is reserved by PyTorch but "
           "unallocated.\n";
  };
  const Diagnosis half = DiagnoseText(log("torch.float16"));
  EXPECT_EQ(half.stage, "load");
  EXPECT_EQ(half.cause, "weights_too_large");
  ASSERT_FALSE(half.fixes.empty());
  EXPECT_EQ(half.fixes[0].change.find("torch_dtype=torch.bfloat16"), std::string::npos);
  EXPECT_NE(half.fixes[0].change.find("load_in_4bit=True"), std::string::npos);
  const Diagnosis full = DiagnoseText(log("torch.float32"));
  ASSERT_FALSE(full.fixes.empty());
  EXPECT_EQ(full.fixes[0].change, "from_pretrained(..., torch_dtype=torch.bfloat16)");
}

// A terminal's wrap that cuts a command line's model id: the name is read whole from the two lines
// joined, so its stated size still decides (Mixtral-8x7B on a 16 GB card cannot have loaded);
// a flag that begins the next line is another argument, not the rest of the name.
TEST(Diagnose, ModelIdCutByAWrapIsReadWhole) {
  const std::string oom =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.75 GiB. GPU 0 has a total "
      "capacity of 14.57 GiB of which 182.75 MiB is free. Including non-PyTorch memory, this "
      "process has 14.38 GiB memory in use. Of the allocated memory 14.21 GiB is allocated by "
      "PyTorch, and 50.00 MiB is reserved by PyTorch but unallocated.\n";
  const Diagnosis tgi = DiagnoseText(
      "docker run --gpus all ghcr.io/huggingface/text-generation-inference:2.3.1 --model-id "
      "mistralai/Mixtral\n-8x7B-Instruct-v0.1 --num-shard 1\n" + oom);
  EXPECT_EQ(tgi.engine, "tgi");
  EXPECT_EQ(tgi.stage, "load");
  EXPECT_EQ(tgi.cause, "weights_too_large");
  EXPECT_EQ(tgi.numbers.count("weights_estimate_bytes"), 1u);
  const Diagnosis vllm = DiagnoseText(
      "$ vllm serve mistralai/Mixtral\n-8x7B-Instruct-v0.1 --max-model-len 4096\n" + oom);
  EXPECT_EQ(vllm.engine, "vllm");
  EXPECT_EQ(vllm.stage, "load");
  EXPECT_EQ(vllm.cause, "weights_too_large");
  EXPECT_EQ(vllm.numbers.count("weights_estimate_bytes"), 1u);
  // The next line begins a flag: the name is the first line's, whose 0.6B fits the card.
  const Diagnosis flag =
      DiagnoseText("$ vllm serve Qwen/Qwen3-0.6B\n--max-model-len 4096\n" + oom);
  EXPECT_EQ(flag.numbers.count("weights_estimate_bytes"), 0u);
}

// A model's name: its size, and the bits its quantization states (8-bit marks before 4-bit
// ones; GGUF's quant types and a bare "bnb" state none).
TEST(Diagnose, ModelNameStatesParametersAndBits) {
  EXPECT_DOUBLE_EQ(doctor::ParamsFromName("Qwen/Qwen1.5-72B-Chat"), 72e9);
  // A mixture's name gives a lower bound: 7B x (1 + 0.6 x 7).
  EXPECT_DOUBLE_EQ(doctor::ParamsFromName("mistralai/Mixtral-8x7B-v0.1"), 7 * 5.2 * 1e9);
  EXPECT_EQ(doctor::NamedParamsWords("mistralai/Mixtral-8x7B-v0.1"), "at least 36B");
  EXPECT_EQ(doctor::NamedParamsWords("Qwen/Qwen1.5-72B-Chat"), "72B");
  EXPECT_DOUBLE_EQ(doctor::ParamsFromName("Qwen/Qwen3-30B-A3B"), 30e9);
  EXPECT_EQ(doctor::NameBits("meta-llama/Llama-2-70b-chat-hf"), 16);
  EXPECT_EQ(doctor::NameBits("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8"), 8);
  EXPECT_EQ(doctor::NameBits("TheBloke/vicuna-13b-GPTQ-4bit-128g"), 4);
  EXPECT_EQ(doctor::NameBits("neuralmagic/Meta-Llama-3-70B-Instruct-FP8"), 8);
  EXPECT_EQ(doctor::NameBits("openai/gpt-oss-20b-MXFP4"), 4);
  EXPECT_EQ(doctor::NameBits("TheBloke/Llama-2-13B-chat-GGUF"), 0);
  EXPECT_EQ(doctor::NameBits("unsloth/llama-3-8b-bnb"), 0);
  // A GGUF quantization level as a part of its own.
  EXPECT_TRUE(doctor::NameSaysGgufLevel("/data/models/DeepSeek-R1-Q2/"));
  EXPECT_TRUE(doctor::NameSaysGgufLevel("unsloth/DeepSeek-V3-0324-UD-Q2_K_XL"));
  EXPECT_TRUE(doctor::NameSaysGgufLevel("models/qwen3-8b.Q4_K_M"));
  EXPECT_TRUE(doctor::NameSaysGgufLevel("gemma-3-27b-it-IQ2_XXS"));
  EXPECT_TRUE(doctor::NameSaysGgufLevel("TheBloke/Llama-2-13B-chat-GGUF"));
  EXPECT_FALSE(doctor::NameSaysGgufLevel("Qwen/Qwen2.5-7B-Instruct"));
  EXPECT_FALSE(doctor::NameSaysGgufLevel("Qwen/QwQ-32B-AWQ"));
  EXPECT_FALSE(doctor::NameSaysGgufLevel("meta-llama/Llama-3.1-8B"));
}

// A model's name that says it takes images (or audio): "VL" as a word of the name, or a
// vision-language family's name; "-vllm" in a path is no "VL".
TEST(Diagnose, ModelNameStatesAVisionLanguageModel) {
  for (const char* name :
       {"Qwen/Qwen2.5-VL-7B-Instruct", "qwen2-vl-72b", "OpenGVLab/InternVL2_5-8B",
        "deepseek-ai/deepseek-vl2-small", "llava-hf/llava-v1.6-mistral-7b-hf",
        "meta-llama/Llama-3.2-11B-Vision-Instruct", "openai/whisper-large-v3",
        "moonshotai/Kimi-VL-A3B-Instruct"}) {
    EXPECT_TRUE(doctor::VisionLanguageName(name)) << name;
  }
  for (const char* name : {"Qwen/Qwen2.5-7B-Instruct", "/srv/vllm-models/Llama-3.1-8B",
                           "my_vllm_deploy", "mistralai/Devstral-Small-2505", ""}) {
    EXPECT_FALSE(doctor::VisionLanguageName(name)) << name;
  }
}

TEST(Diagnose, ImageUploadIsAnEncoderOrActivationProblemNotKv) {
  const std::string log =
      ReadFile(std::string(VRAMFIT_SOURCE_DIR) +
               "/tests/doctor/reported/seed-001-qwen3.5-35b-a3b-awq-image-upload.log");
  ASSERT_FALSE(log.empty());
  const Diagnosis plain = DiagnoseText(log);
  ASSERT_TRUE(plain.found);
  EXPECT_EQ(plain.stage, "runtime");
  EXPECT_EQ(plain.cause, "activation_peak");
  EXPECT_DOUBLE_EQ(plain.numbers.at("requested_bytes"), 18.0 * 1073741824.0);
  // With the model, which has a vision tower: the encoder.
  const Inventory model = Catalog("qwen3.5-35b-a3b-awq");
  DoctorContext ctx;
  ctx.model = &model;
  const Diagnosis mm = DiagnoseText(log, ctx);
  EXPECT_EQ(mm.stage, "runtime");
  EXPECT_EQ(mm.cause, "multimodal_encoder");
  ASSERT_FALSE(mm.fixes.empty());
  EXPECT_NE(mm.fixes[0].change.find("max_pixels"), std::string::npos);
}

TEST(Diagnose, AwqLoadAllocatingALayersSixteenBitSizeIsADequantizedCopy) {
  // Field report 000 quotes no numbers: the failed allocation is built from the model's own
  // sizes, the 16-bit bytes of layer 0's experts (what a dequantize-then-repack path allocates).
  const Inventory model = Catalog("qwen3.5-35b-a3b-awq");
  uint64_t layer0_experts = 0;
  for (const TensorEntry& t : model.tensors) {
    if (t.layer == 0 && t.quantized && t.part == Part::kWeight &&
        t.component == Component::kExperts) {
      layer0_experts += t.parameters * 2;
    }
  }
  ASSERT_GT(layer0_experts, 0u);
  const std::string log = fmt::format(
      "INFO 05-01 10:00:00 [gpu_model_runner.py:2338] Starting to load model "
      "/models/Qwen3.5-35B-A3B-AWQ...\n"
      "ERROR 05-01 10:00:09 [core.py:700]   File "
      "\"/vllm/model_executor/model_loader/default_loader.py\", line 300, in "
      "load_weights\n"
      "ERROR 05-01 10:00:09 [core.py:700] torch.OutOfMemoryError: CUDA out of memory. Tried to "
      "allocate {:.2f} GiB. "
      "GPU 0 has a total capacity of 23.64 GiB of which 1.10 GiB is free. Including non-PyTorch "
      "memory, this process "
      "has 22.50 GiB memory in use.\n",
      static_cast<double>(layer0_experts) / 1073741824.0);
  DoctorContext ctx;
  ctx.model = &model;
  const Diagnosis d = DiagnoseText(log, ctx);
  EXPECT_EQ(d.stage, "load");
  EXPECT_EQ(d.cause, "dequantized_copy") << d.summary;
  EXPECT_NE(d.summary.find("layer 0"), std::string::npos) << d.summary;
  // Without the model the same log is a load-time OOM of the weights.
  EXPECT_EQ(DiagnoseText(log).cause, "weights_too_large");
}

TEST(Diagnose, KvTooLongGivesTheLengthThatFitsAndTheCalibratedPlanAgrees) {
  const std::string log =
      "INFO 12-02 model_runner.py:1072] Loading model weights took 14.9888 GB\n"
      "INFO 12-02 worker.py:232] Memory profiling results: total_gpu_memory=23.58GiB "
      "initial_memory_usage=15.34GiB "
      "peak_torch_memory=17.98GiB memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB "
      "kv_cache_size=2.89GiB "
      "gpu_memory_utilization=0.90\n"
      "INFO 12-02 distributed_gpu_executor.py:57] # GPU blocks: 1478, # CPU blocks: 2048\n"
      "ValueError: The model's max seq len (29000) is larger than the maximum number of tokens "
      "that can be stored in "
      "KV cache (23648). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` "
      "when initializing the "
      "engine.\n";
  const Diagnosis d = DiagnoseText(log);
  EXPECT_EQ(d.stage, "kv_cache");
  EXPECT_EQ(d.cause, "kv_too_long_context");
  ASSERT_FALSE(d.fixes.empty());
  EXPECT_EQ(d.fixes[0].change, "--max-model-len 23552");
  // With the model and GPU: the V0 plan reproduces the reported KV memory once calibrated on
  // the measured activation (17.98 - 14.99 GiB) and non-torch memory, and its advice fits.
  const Inventory model = Catalog("llama-3.1-8b-instruct");
  DoctorContext ctx;
  ctx.model = &model;
  ctx.gpu = Gpu("3090");
  const Diagnosis c = DiagnoseText(log, ctx);
  bool calibrated = false;
  for (const auto& n : c.notes)
    calibrated = calibrated || n.find("calibrated plan") != std::string::npos;
  EXPECT_TRUE(calibrated);
  ASSERT_FALSE(c.fixes.empty());
  EXPECT_NE(c.fixes[0].effect.find("fits: KV cache 2.89 GiB"), std::string::npos)
      << c.fixes[0].effect;
}

TEST(Diagnose, SglangNotEnoughMemoryIsCalibratedOnTheLoadEndLine) {
  // Qwen3-8B at --mem-fraction-static 0.6 on a 24 GB card (tests/doctor/cases/): the load-end
  // line gives F = avail 7.55 + mem usage 15.40 = 22.95 GiB free before the load and 7.55
  // after it; rest = 7.55 - 22.95 x (1 - 0.6) = -1.63 GiB, SGLang's "Not enough memory".
  // Calibrated on those two numbers, the plan's fix is the lowest fraction whose pool holds one
  // request of the model's 40,960 tokens (36 layers x 2 x 8 KV heads x 128 x 2 B = 147,456 B
  // per token: 5.625 GiB): 0.91 leaves 7.55 - 22.95 x 0.09 = 5.48 GiB (39,936 tokens), 0.92
  // leaves 5.71 GiB (41,608 tokens).
  const std::string log =
      ReadFile(std::string(VRAMFIT_SOURCE_DIR) +
               "/tests/doctor/cases/sglang-calibrated-not-enough-qwen3-8b-4090.log");
  ASSERT_FALSE(log.empty());
  const Inventory model = Catalog("qwen3-8b");
  for (const bool with_gpu : {true, false}) {
    DoctorContext ctx;
    ctx.model = &model;
    if (with_gpu) ctx.gpu = Gpu("4090");
    const Diagnosis d = DiagnoseText(log, ctx);
    EXPECT_EQ(d.engine, "sglang");
    EXPECT_EQ(d.stage, "kv_cache");
    bool calibrated = false;
    for (const auto& n : d.notes) {
      calibrated = calibrated ||
                   n.find("calibrated plan (free memory before the load 22.95 GiB") == 0;
    }
    EXPECT_TRUE(calibrated) << with_gpu;
    EXPECT_NEAR(d.numbers.at("calibrated_free_before_load_bytes"), 22.95 * 1073741824.0, 1);
    EXPECT_EQ(d.numbers.at("calibrated_kv_cache_tokens"), 0);
    ASSERT_FALSE(d.fixes.empty());
    EXPECT_EQ(d.fixes[0].change, "--mem-fraction-static 0.92") << with_gpu;
    EXPECT_NE(d.fixes[0].effect.find("41,6"), std::string::npos) << d.fixes[0].effect;
  }
  // Without the model: the reader's arithmetic on the same line, 1 - 7.55 / 22.95 + 0.03.
  const Diagnosis plain = DiagnoseText(log);
  ASSERT_FALSE(plain.fixes.empty());
  EXPECT_EQ(plain.fixes[0].change, "--mem-fraction-static 0.71");
}

// The KV pool's failure where the weights alone fill what any memory setting could give:
// weights_too_large with fewer weight bytes as the way out, not a larger budget (rules.cc
// WeightsFillTheCard). Just below the line, the budget is what ran out (kv_no_memory).
TEST(Diagnose, WeightsThatFillTheCardAreWhatLeftNoKvPool) {
  auto vllm = [](const char* weights) {
    return DiagnoseText(fmt::format(
        "INFO worker.py:267] the current vLLM instance can use total_gpu_memory (40.00GiB) x "
        "gpu_memory_utilization (0.90) = 36.00GiB\n"
        "INFO worker.py:267] model weights take {}GiB; non_torch_memory takes 0.10GiB; PyTorch "
        "activation peak memory takes 1.20GiB; the rest of the memory reserved for KV Cache is "
        "-4.00GiB.\n"
        "ValueError: No available memory for the cache blocks. Try increasing "
        "`gpu_memory_utilization` when initializing the engine.\n",
        weights));
  };
  const Diagnosis full = vllm("38.70");  // 97% of the card
  EXPECT_EQ(full.stage, "kv_cache");
  EXPECT_EQ(full.cause, "weights_too_large") << full.summary;
  ASSERT_FALSE(full.fixes.empty());
  EXPECT_EQ(full.fixes[0].change.find("--gpu-memory-utilization"), std::string::npos);
  const Diagnosis room = vllm("37.00");  // 92.5%: 0.95 leaves 1 GiB
  EXPECT_EQ(room.stage, "kv_cache");
  EXPECT_EQ(room.cause, "kv_no_memory") << room.summary;

  auto sglang = [](const char* avail, const char* usage, const char* raise) {
    return DiagnoseText(fmt::format(
        "[2026-07-08 10:00:00 TP0] Load weight begin. avail mem=31.50 GB\n"
        "[2026-07-08 10:04:29 TP0] Load weight end. type=Glm4MoeLiteForCausalLM, avail mem={} "
        "GB, mem usage={} GB.\n"
        "ValueError: Loaded weights leave no GPU memory for the KV cache under "
        "--mem-fraction-static=0.85.{}\n",
        avail, usage, raise));
  };
  const Diagnosis own_floor =
      sglang("0.00", "31.50", " Raise --mem-fraction-static above 1.000 (minimum viable = 1 - "
                              "available/pre = 1.0000).");
  EXPECT_EQ(own_floor.engine, "sglang");
  EXPECT_EQ(own_floor.stage, "kv_cache");
  EXPECT_EQ(own_floor.cause, "weights_too_large") << own_floor.summary;
  ASSERT_GE(own_floor.fixes.size(), 2u);
  EXPECT_NE(own_floor.fixes[1].change.find("quantized checkpoint"), std::string::npos);
  // SGLang's floor below 0.95 is a fraction that works.
  const Diagnosis floor_ok =
      sglang("4.20", "27.30", " Raise --mem-fraction-static above 0.867 (minimum viable = 1 - "
                              "available/pre = 0.8667).");
  EXPECT_EQ(floor_ok.cause, "kv_no_memory") << floor_ok.summary;
  // Without SGLang's floor, the load-end figures: 1.00 of 31.50 GiB left (97% weights).
  EXPECT_EQ(sglang("1.00", "30.50", "").cause, "weights_too_large");
  EXPECT_EQ(sglang("6.00", "25.50", "").cause, "kv_no_memory");
}

// V0's worker relays the message on the line that names the method it ran: the method is the
// outermost frame (executor/multiproc_worker_utils.py), whatever follows it on the line.
TEST(Diagnose, V0WorkerMethodOnTheMessagesLineIsItsFrame) {
  const Diagnosis d = DiagnoseText(
      "(VllmWorkerProcess pid=2841) ERROR 09-05 10:42:14 multiproc_worker_utils.py:226] "
      "Exception in worker VllmWorkerProcess while processing method "
      "determine_num_available_blocks: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has "
      "a total capacity of 23.64 GiB of which 1.20 GiB is free.\n");
  EXPECT_EQ(d.engine, "vllm");
  EXPECT_EQ(d.stage, "profile") << d.stage_evidence;
}

// SGLang 0.5.10's piecewise graphs log their failure and re-raise, at capture and at replay
// (compilation/piecewise_context_manager.py): a capture, unless the server was serving; the
// serving lines in the forms of 0.5.4+ ("Decode batch [N], #running-req", "Decode batch,
// #running-req") count as serving.
TEST(Diagnose, SglangPiecewiseGraphFailureIsACaptureUnlessServing) {
  const std::string failure =
      "[2026-03-27 10:00:01 TP0] Piecewise CUDA Graph failed with error: CUDA out of memory. "
      "Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 512.00 MiB "
      "is free.\n"
      "Piecewise CUDA Graph is enabled by default as an experimental feature.\n"
      "To work around this error, add --disable-piecewise-cuda-graph to your launch command.\n";
  const Diagnosis capture = DiagnoseText(
      "[2026-03-27 09:59:00 TP0] Load weight end. type=Qwen3ForCausalLM, avail mem=60.10 GB, "
      "mem usage=15.30 GB.\n" + failure);
  EXPECT_EQ(capture.engine, "sglang");
  EXPECT_EQ(capture.stage, "cudagraph");
  EXPECT_EQ(capture.cause, "cudagraph_capture");
  bool disable = false;
  for (const auto& fx : capture.fixes) {
    disable = disable || fx.change == "--disable-piecewise-cuda-graph";
  }
  EXPECT_TRUE(disable);
  for (const char* serving :
       {"[2026-03-27 10:00:00 TP0] Decode batch, #running-req: 212, #token: 441203, token "
        "usage: 0.99, cuda graph: True, gen throughput (token/s): 2710.33, #queue-req: 37\n",
        "[2025-11-02 10:00:00 TP0] Prefill batch [118], #new-seq: 1, #new-token: 8192, "
        "#cached-token: 0, token usage: 0.41, #running-req: 3, #queue-req: 0\n"}) {
    const Diagnosis d = DiagnoseText(std::string(serving) + failure);
    EXPECT_EQ(d.stage, "runtime") << serving;
  }
}

// SGLang's watchdog on a child the kernel killed (SIGKILL: the OOM killer).
TEST(Diagnose, SglangChildKilledBySigkillIsHostMemory) {
  const Diagnosis d = DiagnoseText(
      "[2026-04-05 10:00:00] Subprocess scheduler_0 (pid=2714) crashed with exit code -9. "
      "Triggering SIGQUIT for cleanup...\n");
  EXPECT_EQ(d.engine, "sglang");
  EXPECT_EQ(d.cause, "host_memory");
  EXPECT_FALSE(DiagnoseText("[2026-04-05 10:00:00] Subprocess scheduler_0 (pid=2714) crashed "
                            "with exit code -11. Triggering SIGQUIT for cleanup...\n")
                   .found);
}

// ggml's host allocator refusing in its own words (ggml.c ggml_aligned_malloc: ENOMEM), with
// nothing else of the CPU buffer's failure in the excerpt.
TEST(Diagnose, GgmlAlignedMallocRefusalIsHostMemory) {
  const Diagnosis d = DiagnoseText(
      "load_tensors: loading model tensors, this can take a while... (mmap = false)\n"
      "ggml_aligned_malloc: insufficient memory (attempted to allocate 32768.00 MB)\n");
  EXPECT_EQ(d.engine, "llama.cpp");
  EXPECT_EQ(d.stage, "load");
  EXPECT_EQ(d.cause, "host_memory");
  EXPECT_DOUBLE_EQ(d.numbers.at("requested_bytes"), 32768.0 * 1024 * 1024);
}

// ik_llama.cpp's --fit refusing before it allocates (src/llama.cpp, 2026): a load failure whose
// fixes are its own (the cache at the full context, a smaller quantization), not --fit.
TEST(Diagnose, IkLlamaAutoFitRefusalIsTheLoad) {
  const Diagnosis d = DiagnoseText(
      "Memory required for model tensors + cache: 30412 MiB\n"
      "Memory available on all devices - compute: 22528 MiB\n"
      "Required memory 30412 MiB is still greater than available memory 22528 MiB after "
      "overriding all MoE tensors to CPU\n"
      "llama_model_load: error loading model: Unable to auto-fit model\n"
      "llama_load_model_from_file: failed to load model\n");
  EXPECT_EQ(d.engine, "llama.cpp");
  EXPECT_EQ(d.stage, "load");
  EXPECT_EQ(d.cause, "weights_too_large");
  ASSERT_FALSE(d.fixes.empty());
  EXPECT_EQ(d.fixes[0].change, "-c lower");
  EXPECT_NE(d.summary.find("ik_llama.cpp's --fit"), std::string::npos) << d.summary;
}

// Start-up lines of releases the readers first missed, each the furthest phase before a bare
// PyTorch out-of-memory message (the engines' sources: vLLM's backends.py and gpu_worker.py,
// SGLang's memory_pool.py and cuda_graph_runner.py).
TEST(Diagnose, MilestonesOfOtherReleasesPlaceABareOom) {
  const std::string oom =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
      "capacity of 79.19 GiB of which 1.10 GiB is free.\n";
  const struct {
    const char* line;
    const char* engine;
    const char* stage;
  } cases[] = {
      {"(EngineCore pid=2714) INFO 03-16 10:42:14 [gpu_model_runner.py:5697] Estimated CUDA "
       "graph memory: 0.71 GiB total",
       "vllm", "kv_cache"},
      {"INFO 07-25 10:42:14 [backends.py:215] Compiling a graph for dynamic shape takes 18.75 s",
       "vllm", "profile"},
      {"[2025-01-15 10:00:00 TP0] KV Cache is allocated. K size: 27.10 GB, V size: 27.10 GB.",
       "sglang", "cudagraph"},
      {"[2025-10-16 10:00:00 TP0] SWAKVPool mem usage: 61.52 GB, swa size: 168755, full size: "
       "210944",
       "sglang", "cudagraph"},
      {"Capturing batches (avail_mem=8.93 GB):  43%|####      | 10/23 [00:07<00:09,  1.31it/s]",
       "sglang", "cudagraph"},
  };
  for (const auto& c : cases) {
    const Diagnosis d = DiagnoseText(std::string(c.line) + "\n" + oom);
    EXPECT_EQ(d.stage, c.stage) << c.line << "\n" << d.stage_evidence;
    if (std::string(c.line).rfind("Capturing", 0) != 0) EXPECT_EQ(d.engine, c.engine) << c.line;
  }
}

// llama.cpp of 2024 printed its weight buffers without "model" ("llm_load_tensors: CUDA0 buffer
// size = X MiB"), after allocating them: a device buffer failing next is past the weights.
TEST(Diagnose, LlamaCpp2024WeightBufferLineIsTheWeightsPlaced) {
  const std::string head =
      "llm_load_tensors: offloaded 33/33 layers to GPU\n"
      "llm_load_tensors:        CPU buffer size =   281.81 MiB\n"
      "llm_load_tensors:      CUDA0 buffer size =  3820.93 MiB\n";
  const Diagnosis d = DiagnoseText(
      head + "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 1024.00 MiB on device 0: "
             "cudaMalloc failed: out of memory\n");
  EXPECT_EQ(d.engine, "llama.cpp");
  EXPECT_EQ(d.stage, "kv_cache") << d.stage_evidence;
  EXPECT_NEAR(d.numbers.at("weights_bytes"), 3820.93 * 1024 * 1024, 1024);
  // Its KV and compute lines keep their own readings.
  const Diagnosis kv =
      DiagnoseText("llama_kv_cache_init:      CUDA0 KV buffer size =  1024.00 MiB\n"
                   "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 788.01 MiB on device "
                   "0: cudaMalloc failed: out of memory\n");
  EXPECT_FALSE(kv.numbers.count("weights_bytes"));
}

// Quantizers' progress past the first layer, in the forms their sources print (auto-round's
// multi-block bar and 0.2's per-block line, llm-compressor's propagation bar and 0.3's
// per-module line, GPTQModel's bracketed title and replay bar, optimum's block bar): the layers
// before fitted, and what grows is the calibration data the run keeps on the GPU.
TEST(Diagnose, QuantizerProgressFormsPlaceTheCalibration) {
  const std::string oom =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
      "capacity of 79.19 GiB of which 1.10 GiB is free.\n";
  for (const char* progress : {
           "Quantizing [13-14]/32:  38%|###8      | 12/32 [06:40<11:07, 33.36s/it]",
           "2024-08-01 10:39:09 INFO autoround.py L1039: quantizing 12/32, model.layers.11",
           "(13/33): Propagating: 100%|##########| 512/512 [00:07<00:00, 68.02it/s]",
           "2024-10-01T10:00:00.123456+0000 | compress | INFO - Compressing "
           "model.layers.11.mlp.down_proj...",
           "Quantizing mlp.down_proj in layer [11 of 31] | 0:04:12 / 0:11:09 [12/32] 37.5%",
           "Forward replay (layer=`model.layers.11`, batches=128, rows=262144)",
           "Quantizing model.layers blocks :  34%|###4      | 11/32 [03:02<05:48, 16.60s/it]",
       }) {
    const Diagnosis d = DiagnoseText(std::string(progress) + "\n" + oom);
    EXPECT_EQ(d.stage, "load") << progress;
    EXPECT_EQ(d.cause, "activation_peak") << progress;
  }
}

// TGI's router exits with the warm-up's error as Rust's Debug prints it, in both of its shapes
// (router/src/main.rs before 2.3, the backends' routers after): the warm-up, TGI's profile.
TEST(Diagnose, TgiRouterExitWithTheWarmupsError) {
  for (const char* shape : {"Error: Warmup(Generation(\"", "Error: Backend(Warmup(Generation(\""}) {
    const Diagnosis d = DiagnoseText(
        std::string(shape) +
        "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 22.19 GiB total capacity; 19.85 "
        "GiB already allocated; 1.25 GiB free; 20.11 GiB reserved in total by PyTorch)\"))\n");
    EXPECT_EQ(d.engine, "tgi") << shape;
    EXPECT_EQ(d.stage, "profile") << shape;
  }
  // The launcher starting the router once the shards are ready: the warm-up is next.
  const Diagnosis after = DiagnoseText(
      "2025-03-10T09:13:13.521377Z  INFO text_generation_launcher: Starting Webserver\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
      "capacity of 79.19 GiB of which 1.10 GiB is free.\n");
  EXPECT_EQ(after.engine, "tgi");
  EXPECT_EQ(after.stage, "profile");
}

// Ollama 0.30+ runs llama.cpp's llama-server: its start and its "started in" line are the
// load and the serving; the scheduler's "runtime OOM detected" is logged only for an error its
// own check found out of memory (llm/status.go IsOutOfMemory), so it is the failure even where
// the error's words are none the readers know.
TEST(Diagnose, OllamaLlamaServerEraRuntimeOom) {
  const std::string start =
      "time=2026-08-20T09:12:30.871Z level=INFO source=llama_server.go:433 msg=\"starting "
      "llama-server\" cmd=\"/usr/lib/ollama/llama-server --model "
      "/root/.ollama/models/blobs/sha256-3a8e1c --ctx-size 32768\"\n"
      "time=2026-08-20T09:12:37.101Z level=INFO source=llama_server.go:1362 msg=\"llama-server "
      "started in 6.18 seconds\"\n";
  const Diagnosis d = DiagnoseText(
      start +
      "time=2026-08-20T09:13:30.871Z level=WARN source=sched.go:1648 msg=\"runtime OOM "
      "detected; expiring loaded models to clear memory before next request\" model=gemma3:27b "
      "error=\"llama-server process no longer running: exit status 1\"\n");
  EXPECT_TRUE(d.found);
  EXPECT_EQ(d.engine, "ollama");
  EXPECT_EQ(d.stage, "runtime");
  // Healthy up to serving: nothing failed.
  EXPECT_FALSE(DiagnoseText(start).found);
}

// A graph reservation failing after llama-server said it listens: only requests run after
// that, so the compute buffer grew for a request's batch (runtime), not the context's (profile).
TEST(Diagnose, LlamaServerReservationAfterListeningIsARequests) {
  const Diagnosis d = DiagnoseText(
      "main: server is listening on http://127.0.0.1:8080 - starting the main loop\n"
      "ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 1073741824\n");
  EXPECT_EQ(d.engine, "llama.cpp");
  EXPECT_EQ(d.stage, "runtime");
  EXPECT_EQ(d.cause, "compute_buffer");
}

TEST(Diagnose, NegativeKvSaysWhichUtilizationLeavesRoom) {
  const Diagnosis d = DiagnoseText(
      "INFO worker.py:267] the current vLLM instance can use total_gpu_memory (8.00GiB) x "
      "gpu_memory_utilization (0.70) "
      "= 5.60GiB\n"
      "INFO worker.py:267] model weights take 5.20GiB; non_torch_memory takes 0.03GiB; PyTorch "
      "activation peak memory "
      "takes 1.42GiB; the rest of the memory reserved for KV Cache is -1.05GiB.\n");
  EXPECT_EQ(d.stage, "kv_cache");
  EXPECT_EQ(d.cause, "kv_no_memory");
  ASSERT_FALSE(d.fixes.empty());
  // (5.20 + 1.42 + 0.03 + 1) / 8.00 = 0.956 -> 0.96
  EXPECT_EQ(d.fixes[0].change, "--gpu-memory-utilization 0.96");
}

TEST(Diagnose, StartupAndFragmentationAndSampler) {
  const Diagnosis s = DiagnoseText(
      "ValueError: Free memory on device (10.5/23.5 GiB) on startup is less than desired GPU "
      "memory "
      "utilization (0.9, 21.15 GiB). Decrease GPU memory utilization\n");
  EXPECT_EQ(s.stage, "startup");
  EXPECT_EQ(s.cause, "other_process");
  ASSERT_FALSE(s.fixes.empty());
  EXPECT_EQ(s.fixes[0].change, "--gpu-memory-utilization 0.43");
  // Since 0.11 the message names the device before the figures.
  const Diagnosis named = DiagnoseText(
      "(EngineCore_DP0 pid=211) ValueError: Free memory on device cuda:1 (30.12/47.40 GiB) on "
      "startup is less than desired GPU memory utilization (0.9, 42.66 GiB). Decrease GPU memory "
      "utilization or reduce GPU memory used by other processes.\n");
  EXPECT_EQ(named.stage, "startup");
  ASSERT_FALSE(named.fixes.empty());
  // 30.12 / 47.40 = 0.635, less a 0.01 margin -> 0.62
  EXPECT_EQ(named.fixes[0].change, "--gpu-memory-utilization 0.62");
  const Diagnosis f = DiagnoseText(
      "INFO Avg prompt throughput: 10 tokens/s\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 960.00 MiB. GPU 0 has a total "
      "capacity of 79.14 GiB of which 712.75 MiB is free. Of the allocated memory 74.40 GiB is "
      "allocated by PyTorch, and 2.22 GiB is reserved by PyTorch but unallocated.\n");
  EXPECT_EQ(f.stage, "runtime");
  EXPECT_EQ(f.cause, "fragmentation");
  EXPECT_EQ(f.fixes[0].change, "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");
  // Ascend's torch_npu message (the older caching-allocator shape): its own variable.
  const Diagnosis npu = DiagnoseText(
      "torch.OutOfMemoryError: NPU out of memory. Tried to allocate 72.00 MiB (NPU 0; 61.27 GiB "
      "total capacity; 50.05 GiB already allocated; 50.05 GiB current active; 5.04 MiB free; "
      "58.39 GiB reserved in total by PyTorch)\n");
  EXPECT_EQ(npu.cause, "fragmentation");
  ASSERT_FALSE(npu.fixes.empty());
  EXPECT_EQ(npu.fixes[0].change, "PYTORCH_NPU_ALLOC_CONF=expandable_segments:True");
  const Diagnosis w = DiagnoseText(
      "RuntimeError: CUDA out of memory occurred when warming up sampler with 1024 dummy "
      "requests.\n");
  EXPECT_EQ(w.cause, "sampler_warmup");
  EXPECT_EQ(w.fixes[0].change, "--max-num-seqs 256");
}

TEST(Diagnose, FuzzRegressionsRunClean) {
  // Inputs the fuzzer once broke (tests/doctor/fuzz-regressions/): they must diagnose without
  // undefined behaviour (the sanitizer build runs this too).
  const std::string dir = std::string(VRAMFIT_SOURCE_DIR) + "/tests/doctor/fuzz-regressions";
  int n = 0;
  // (context-size-message-words-out-of-order.log: node-llama-cpp's refusal whose words, joined
  // across a line, came in the other order, which threw out_of_range before the reader checked
  // their order.)
  for (const char* name :
       {"huge-number-in-estimate.log", "context-size-message-words-out-of-order.log"}) {
    const std::string text = ReadFile(dir + "/" + name);
    ASSERT_FALSE(text.empty()) << name;
    const Diagnosis d = DiagnoseText(text);
    for (const auto& [k, v] : d.numbers) EXPECT_LE(std::abs(v), 1e15) << k;
    ++n;
  }
  EXPECT_EQ(n, 2);
}

TEST(Diagnose, NothingToDiagnose) {
  EXPECT_FALSE(DiagnoseText("").found);
  EXPECT_FALSE(DiagnoseText("hello world\nnothing here\n").found);
  // A healthy start-up that reached serving is not a failure.
  EXPECT_FALSE(
      DiagnoseText(
          "INFO Loading model weights took 14.99 GB\nINFO GPU KV cache size: 100,000 tokens\n"
          "INFO Application startup complete.\n")
          .found);
}

}  // namespace
}  // namespace vramfit

namespace vramfit {
namespace {

// Ollama and LM Studio run llama.cpp, but their users set Ollama's and LM Studio's settings:
// neither the fixes nor the summary of their logs name llama.cpp's flags.
TEST(Diagnose, WrappedEnginesNeverSpeakLlamaCppFlags) {
  const std::string dir = std::string(VRAMFIT_SOURCE_DIR) + "/tests/doctor/cases/";
  for (const char* id : {"ollama-compute-buffer", "ollama-cuda0-buffer-offload-estimate",
                         "ollama-memory-layout-num-gpu", "ollama-memory-layout-backoff",
                         "ollama-serving-compute-growth",
                         "lm-studio-estimate-fits-context-buffer",
                         "lm-studio-estimate-no-verdict-weights"}) {
    const std::string log = ReadFile(dir + id + ".log");
    ASSERT_FALSE(log.empty()) << id;
    const Diagnosis d = DiagnoseText(log);
    ASSERT_TRUE(d.found) << id;
    std::string all = d.summary + "\n";
    for (const Fix& f : d.fixes) all += f.change + "\n";
    for (const char* flag :
         {"-ngl", "-ub", "-c ", "-ctk", "--fit", "n_ubatch", "--max-model-len"}) {
      EXPECT_EQ(all.find(flag), std::string::npos) << id << " names " << flag << ":\n" << all;
    }
  }
}

// ggml-cuda's "current device" line after an out-of-memory is the allocation that failed, also
// when a journal's timestamps put the two lines a second apart; after another CUDA error it is
// where that error struck, and the log holds no out-of-memory.
TEST(Diagnose, GgmlCurrentDeviceLineFollowsTheErrorBeforeIt) {
  const std::string pre = "Mar 03 19:22:0";
  const std::string tail =
      " gpubox llama-server[9921]:   current device: 0, in function ggml_cuda_op_mul_mat at "
      "/build/ggml/src/ggml-cuda/ggml-cuda.cu:1636\n";
  const Diagnosis oom =
      DiagnoseText(pre + "5 gpubox llama-server[9921]: CUDA error: out of memory\n" + pre + "6" +
                   tail);
  EXPECT_TRUE(oom.found);
  EXPECT_NE(oom.cause, "not_out_of_memory");
  EXPECT_FALSE(oom.other_error.has_value());
  const Diagnosis other = DiagnoseText(
      pre + "5 gpubox llama-server[9921]: CUDA error: an illegal memory access was encountered\n" +
      pre + "6" + tail);
  EXPECT_EQ(other.cause, "not_out_of_memory");
  ASSERT_TRUE(other.other_error.has_value());
  EXPECT_EQ(other.other_error->kind, "illegal_memory_access");
  EXPECT_EQ(other.other_error->line, 1u);
  for (const Fix& f : other.fixes) EXPECT_EQ(f.change.find("-ub"), std::string::npos) << f.change;
}

// A line that names the error whole, wrapped by a terminal mid-word: the quote is the joined
// text, not the first piece; a next line of its own (ggml's indented "current device") is not
// joined.
// vLLM's offline LLM.generate draws "Processed prompts" when it starts stepping the requests;
// the bar at 0% is closed, and so printed, only after the error that stopped it. Its work had
// begun: the failure is while serving (a request's images in the encoder), not the profile run.
// Any other line after the error places nothing.
TEST(Diagnose, AProgressBarClosedByTheErrorWasBegunBeforeIt) {
  const std::string encoder =
      "[rank0]:   File \"/app/deepencoder/sam_vary_sdpa.py\", line 309, in forward\n"
      "[rank0]:     attn_bias = (rel_h + rel_w).view(B, self.num_heads, rel_h.size(2), -1)\n"
      "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 352.00 MiB. GPU 0 "
      "has a total capacity of 11.75 GiB of which 278.19 MiB is free.\n";
  const Diagnosis served = DiagnoseText(
      encoder + "Processed prompts:   0%|          | 0/5 [00:00<?, ?it/s, est. speed input: 0.00 "
                "toks/s, output: 0.00 toks/s]\n");
  EXPECT_EQ(served.stage, "runtime") << served.stage_evidence;
  EXPECT_NE(served.stage_evidence.find("milestone line 4: Processed prompts"), std::string::npos)
      << served.stage_evidence;
  const Diagnosis later = DiagnoseText(
      encoder + "Processed prompts: 100%|##########| 5/5 [00:09<00:00, 1.8s/it]\n");
  EXPECT_EQ(later.stage_evidence.find("Processed prompts"), std::string::npos)
      << later.stage_evidence;
}

// PyTorch's figures without the message's head are still its out-of-memory error: the sentence
// "GPU N has a total capacity of T of which F is free" is printed by that message alone.
TEST(Diagnose, TheAllocatorsFiguresAloneAreItsOutOfMemoryError) {
  const Diagnosis d = DiagnoseText(
      "ERROR: could not start the model.\n"
      "GPU 0 has a total capacity of 22.03 GiB of which 17.06 MiB is free.\n");
  EXPECT_TRUE(d.found);
  EXPECT_NEAR(d.numbers.at("total_bytes"), 22.03 * 1073741824.0, 1e6);
  EXPECT_NEAR(d.numbers.at("free_bytes"), 17.06 * 1048576.0, 1e4);
  EXPECT_FALSE(DiagnoseText("GPU 0 has a total capacity of 22.03 GiB.\n").found);
}

// PyTorch's MPS message broken after its first sentence (a terminal's cut at a space): the
// request on the next line is read with the figures of the line before.
TEST(Diagnose, AnMpsMessageBrokenAfterItsFirstSentenceIsReadWhole) {
  const Diagnosis d = DiagnoseText(
      "RuntimeError: MPS backend out of memory (MPS allocated: 17.27 GB, other allocations: "
      "819.94 MB, max allowed: 18.13 GB). \n"
      "Tried to allocate 192.00 MB on private pool. Use \n"
      "PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable the upper limit for memory allocations.\n");
  ASSERT_TRUE(d.found);
  EXPECT_NEAR(d.numbers.at("requested_bytes"), 192.0 * 1048576.0, 1e3);
  EXPECT_NEAR(d.numbers.at("total_bytes"), 18.13 * 1073741824.0, 1e6);
  EXPECT_EQ(d.stage, "load") << d.stage_evidence;
}

TEST(Diagnose, AWrappedErrorLineIsQuotedWhole) {
  const Diagnosis d = DiagnoseText(
      "(EngineCore_DP0 pid=2841) ERROR 10-14 08:12:40 [core.py:708] torch.AcceleratorError: CUDA "
      "error: an illegal memory access was encountered. Search for `cudaErrorIllegalAddress' in h\n"
      "ttps://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more "
      "information.\n");
  ASSERT_TRUE(d.other_error.has_value());
  EXPECT_EQ(d.other_error->kind, "illegal_memory_access");
  EXPECT_EQ(d.other_error->line, 1u);
  EXPECT_NE(d.other_error->text.find("in https://docs.nvidia.com"), std::string::npos)
      << d.other_error->text;
  EXPECT_NE(d.other_error->text.find("for more information."), std::string::npos);
  const Diagnosis own = DiagnoseText(
      "CUDA error: an illegal memory access was encountered\n"
      "  current device: 0, in function ggml_backend_cuda_synchronize at ggml-cuda.cu:2463\n");
  ASSERT_TRUE(own.other_error.has_value());
  EXPECT_EQ(own.other_error->text, "CUDA error: an illegal memory access was encountered");
  const std::string p = "(EngineCore_0 pid=3311) ERROR 09-02 11:31:07 [core.py:700] ";
  const Diagnosis next = DiagnoseText(
      p + "torch.AcceleratorError: CUDA error: an illegal memory access was encountered\n" + p +
      "CUDA kernel errors might be asynchronously reported at some other API call, so the "
      "stacktrace below might be incorrect.\n");
  ASSERT_TRUE(next.other_error.has_value());
  EXPECT_EQ(next.other_error->text.find("CUDA kernel errors"), std::string::npos)
      << next.other_error->text;
}

// Ollama's "llama runner process has terminated: CUDA error" hides which error: the runner's
// own lines before it decide (an out-of-memory, or another error); with none, the diagnosis says
// it cannot tell and advises no memory setting.
TEST(Diagnose, OllamaRunnerEndIsDecidedByTheRunnersLines) {
  const std::string start =
      "time=2025-03-10T14:02:11.125Z level=INFO source=server.go:405 msg=\"starting llama "
      "server\" cmd=\"/usr/local/bin/ollama runner --model /m --ctx-size 16384 --n-gpu-layers 65 "
      "--port 35121\"\n";
  const std::string end =
      "llama/ggml-cuda/ggml-cuda.cu:96: CUDA error\n"
      "time=2025-03-10T14:02:19.874Z level=ERROR source=sched.go:455 msg=\"error loading llama "
      "server\" error=\"llama runner process has terminated: CUDA error\"\n";
  const Diagnosis oom = DiagnoseText(
      start + "CUDA error: out of memory\n  current device: 0, in function alloc at "
              "llama/ggml-cuda/ggml-cuda.cu:375\n  cuMemCreate(&handle, reserve_size, &prop, 0)\n" +
      end);
  EXPECT_TRUE(oom.found);
  EXPECT_NE(oom.cause, "undetermined");
  EXPECT_NE(oom.cause, "not_out_of_memory");
  EXPECT_FALSE(oom.other_error.has_value()) << oom.other_error->kind;
  const Diagnosis other = DiagnoseText(
      start + "CUDA error: an illegal memory access was encountered\n  current device: 0, in "
              "function ggml_backend_cuda_synchronize at llama/ggml-cuda/ggml-cuda.cu:2463\n" +
      end);
  EXPECT_EQ(other.cause, "not_out_of_memory");
  ASSERT_TRUE(other.other_error.has_value());
  EXPECT_EQ(other.other_error->kind, "illegal_memory_access");
  const Diagnosis none = DiagnoseText(start + end);
  EXPECT_EQ(none.cause, "undetermined");
  EXPECT_NE(none.summary.find("does not say whether"), std::string::npos) << none.summary;
  ASSERT_TRUE(none.other_error.has_value());
  EXPECT_EQ(none.other_error->kind, "runner_exit");
  for (const Fix& f : none.fixes) EXPECT_EQ(f.change.find("num_"), std::string::npos) << f.change;
}

// The summary says plainly that the failure is not an out-of-memory and names the error; the
// out-of-memory of the same log wins, with the other error in a note.
TEST(Diagnose, AnErrorThatIsNotOutOfMemoryIsSaidSo) {
  const Diagnosis d = DiagnoseText(
      "[rank0]: RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for "
      "details)\n");
  ASSERT_TRUE(d.found);
  EXPECT_EQ(d.cause, "not_out_of_memory");
  EXPECT_NE(d.summary.find("not an out-of-memory: an NCCL"), std::string::npos) << d.summary;
  ASSERT_TRUE(d.other_error.has_value());
  EXPECT_EQ(d.other_error->kind, "nccl");
  EXPECT_NE(d.other_error->usual_cause.find("peer-to-peer"), std::string::npos);
  const Diagnosis both = DiagnoseText(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
      "capacity of 23.64 GiB of which 1.10 GiB is free.\n"
      "[rank0]: RuntimeError: NCCL error: unhandled cuda error\n");
  EXPECT_NE(both.cause, "not_out_of_memory");
  ASSERT_TRUE(both.other_error.has_value());
  bool noted = false;
  for (const std::string& n : both.notes) {
    noted = noted || n.find("the log also shows an NCCL") == 0;
  }
  EXPECT_TRUE(noted);
}

// vLLM's warning that a KV connector turned the hybrid KV cache manager off: for a KV-stage
// failure the first fix keeps the manager, offered for a model with sliding-window layers
// (worded so where the model is not given), not for a model of one layer type.
TEST(Diagnose, KvConnectorTurningTheHybridManagerOffIsNamedFirst) {
  const std::string log =
      "(APIServer pid=1) WARNING 05-10 10:00:01 [vllm.py:1345] Turning off hybrid kv cache "
      "manager because `--kv-transfer-config` is set. This will reduce the performance of vLLM "
      "on LLMs with sliding window attention or Mamba attention.\n"
      "(EngineCore_DP0 pid=200) ERROR 05-10 10:01:12 [core.py:708] ValueError: To serve at least "
      "one request with the models's max seq len (131072), (12.00 GiB KV cache is needed, which "
      "is larger than the available KV cache memory (10.50 GiB). Based on the available memory, "
      "the estimated maximum model length is 114688.\n";
  const Diagnosis plain = DiagnoseText(log);
  ASSERT_FALSE(plain.fixes.empty());
  EXPECT_EQ(plain.fixes[0].change, "--no-disable-hybrid-kv-cache-manager");
  EXPECT_NE(plain.fixes[0].effect.find("for a model with sliding-window layers"),
            std::string::npos);
  const Inventory oss = Catalog("gpt-oss-20b");
  DoctorContext with_oss;
  with_oss.model = &oss;
  const Diagnosis sliding = DiagnoseText(log, with_oss);
  ASSERT_FALSE(sliding.fixes.empty());
  EXPECT_EQ(sliding.fixes[0].change, "--no-disable-hybrid-kv-cache-manager");
  const Inventory dense = Catalog("qwen3-8b");
  DoctorContext with_dense;
  with_dense.model = &dense;
  for (const auto& fix : DiagnoseText(log, with_dense).fixes) {
    EXPECT_NE(fix.change, "--no-disable-hybrid-kv-cache-manager");
  }
}

// exllamav2's cache constructor allocates the whole max_seq_len: the KV stage, a preallocated
// cache, and the fix in exllamav2's own words.
TEST(Diagnose, ExllamaCacheConstructorIsAPreallocatedCache) {
  const Diagnosis d = DiagnoseText(
      " -- Loaded model in 9.7356 seconds\n"
      "Traceback (most recent call last):\n"
      "  File \"/home/u/exllamav2/test_inference.py\", line 192, in <module>\n"
      "    cache = ExLlamaV2Cache(model)\n"
      "  File \"/home/u/exllamav2/exllamav2/cache.py\", line 256, in __init__\n"
      "    self.create_state_tensors(copy_from, lazy)\n"
      "  File \"/home/u/exllamav2/exllamav2/cache.py\", line 91, in create_state_tensors\n"
      "    p_key_states = torch.zeros(self.shape_wk, dtype = self.dtype, device = device)\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 320.00 MiB. GPU 0 has a "
      "total capacity of 44.52 GiB of which 100.00 MiB is free.\n");
  EXPECT_EQ(d.stage, "kv_cache");
  EXPECT_EQ(d.cause, "static_cache");
  ASSERT_FALSE(d.fixes.empty());
  EXPECT_NE(d.fixes[0].change.find("max_seq_len"), std::string::npos);
}

// ggml-cuda's abort after another error ("ROCm error: invalid device function", then "current
// device: 0, in function ggml_cuda_compute_forward") is no out-of-memory, also where a paste lost
// the line ends between them.
TEST(Diagnose, AnotherGpuErrorBeforeTheAbortIsNoOutOfMemory) {
  const std::string log =
      "load_tensors:        ROCm0 model buffer size =  4403.49 MiB\n"
      "ROCm error: invalid device function\n"
      "  current device: 0, in function ggml_cuda_compute_forward at ggml-cuda.cu:2362\n";
  EXPECT_EQ(DiagnoseText(log).cause, "not_out_of_memory");
  std::string one_line = log;
  std::replace(one_line.begin(), one_line.end(), '\n', ' ');
  EXPECT_EQ(DiagnoseText(one_line + "\n").cause, "not_out_of_memory");
}

// ggml-cuda's abort right after llama_kv_cache's buffer size is that buffer not being backed: on
// the next line, or on the same one where a paste lost the line end.
TEST(Diagnose, CudaAbortRightAfterTheKvBufferIsTheKvCache) {
  const std::string kv =
      "llama_context: n_ctx_seq (1000192) > n_ctx_train (262144) -- possible training context "
      "overflow\nllama_kv_cache:      CUDA0 KV buffer size = 16604.75 MiB\n";
  const std::string abort =
      "CUDA error: out of memory\nD:\\a\\llama.cpp\\ggml-cuda.cu:98: CUDA error\n";
  EXPECT_EQ(DiagnoseText(kv + abort).stage, "kv_cache");
  std::string one_line = kv + abort;
  std::replace(one_line.begin(), one_line.end(), '\n', ' ');
  EXPECT_EQ(DiagnoseText(one_line + "\n").stage, "kv_cache");
  EXPECT_NE(DiagnoseText("llama_kv_cache:      CUDA0 KV buffer size = 16604.75 MiB load_tensors: "
                         "CUDA error: out of memory\n")
                .stage,
            "kv_cache");
}

// llama.cpp prints the KV cache's total once every one of its device buffers is allocated
// ("KV self size" to b5400, "llama_kv_cache: size = ..." after): a device buffer failing after
// it is a compute buffer being reserved, not the KV cache or the weights. A failure after only
// one device's "KV buffer size" line may still be the next device's KV buffer.
TEST(Diagnose, GgmlBufferAfterTheKvTotalIsTheComputeBuffer) {
  for (const char* kv_total :
       {"llama_kv_cache_unified: KV self size  = 51200.00 MiB, K (f16): 25600.00 MiB, V (f16): "
        "25600.00 MiB\n",
        "llama_kv_cache: size = 51200.00 MiB (655360 cells,  40 layers, 20/20 seqs), K (f16): "
        "25600.00 MiB, V (f16): 25600.00 MiB\n"}) {
    const Diagnosis d = DiagnoseText(
        std::string("llama_context: n_ctx_per_seq (32768) < n_ctx_train (131072)\n"
                    "llama_kv_cache_unified:      CUDA0 KV buffer size = 51200.00 MiB\n") +
        kv_total +
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 42256.00 MiB on device 0: "
        "cudaMalloc failed: out of memory\n");
    EXPECT_EQ(d.stage, "profile") << kv_total;
    EXPECT_EQ(d.cause, "compute_buffer") << kv_total;
  }
  const Diagnosis per_device = DiagnoseText(
      "llama_context: n_ctx = 131072\n"
      "llama_kv_cache:      CUDA0 KV buffer size =  8192.00 MiB\n"
      "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 8192.00 MiB on device 1: "
      "cudaMalloc failed: out of memory\n");
  EXPECT_NE(per_device.cause, "compute_buffer");
}

// The GGML-era llama.cpp (2023) evaluated each batch in fixed buffers sized at load; a batch
// above the 512 its tools allowed overflowed them ("not enough space in the context's memory
// pool", or the scratch pool's), then crashed: the compute buffer at the request, cut by the
// batch, not a device out-of-memory and not the crash after it.
TEST(Diagnose, GgmlEraMemoryPoolOverflowIsTheComputeBuffer) {
  for (const char* pool : {"context's", "scratch"}) {
    const Diagnosis d = DiagnoseText(
        std::string("Llama.generate: prefix-match hit\n"
                    "ggml_new_tensor_impl: not enough space in the ") +
        pool + " memory pool (needed 337076992, available 268435456)\n"
               "Segmentation fault (core dumped)\n");
    EXPECT_EQ(d.stage, "runtime") << pool;
    EXPECT_EQ(d.cause, "compute_buffer") << pool;
    ASSERT_FALSE(d.fixes.empty());
    EXPECT_NE(d.fixes[0].change.find("-b 512"), std::string::npos) << d.fixes[0].change;
  }
}

// Partial offload prints the host's buffers first ("CPU_Mapped model buffer", "CPU KV buffer",
// "CUDA_Host compute buffer"): the weights and KV figures the doctor reports and compares are
// the device's, not the first line's (a Qwen3.5-27B load with 26 of 65 layers on a 12 GB card,
// validation/llamacpp r42).
TEST(Diagnose, GgmlFiguresAreTheDeviceBuffersNotTheHostOnes) {
  const Diagnosis d = DiagnoseText(
      "load_tensors: offloaded 26/65 layers to GPU\n"
      "load_tensors:   CPU_Mapped model buffer size =  8740.26 MiB\n"
      "load_tensors:        CUDA0 model buffer size =  6096.65 MiB\n"
      "llama_kv_cache:        CPU KV buffer size =  4608.00 MiB\n"
      "llama_kv_cache:      CUDA0 KV buffer size =  3584.00 MiB\n"
      "sched_reserve: reserving ...\n"
      "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 1401.75 MiB on device 0: "
      "cudaMalloc failed: out of memory\n"
      "graph_reserve: failed to allocate compute buffers\n");
  EXPECT_EQ(d.stage, "profile");
  EXPECT_EQ(d.cause, "compute_buffer");
  EXPECT_DOUBLE_EQ(d.numbers.at("weights_bytes"), 6096.65 * 1048576.0);
  EXPECT_DOUBLE_EQ(d.numbers.at("kv_cache_bytes"), 3584.0 * 1048576.0);
}

// In a vLLM model's file only the vision tower calls an attention kernel directly
// (F.scaled_dot_product_attention, flash_attn_varlen_func): under such a frame the failure is
// the encoder's, at the profile run when nothing shows serving, while serving when it does. The
// same call in transformers' own attention is no multimodal evidence.
TEST(Diagnose, AttentionKernelInAVllmMultimodalFileIsTheEncoder) {
  const std::string frames =
      "(EngineCore_DP0 pid=936) ERROR 10-31 10:58:27 [core.py:779]   File \"/usr/local/lib/"
      "python3.12/dist-packages/vllm/model_executor/models/qwen2_vl.py\", line 402, in forward\n"
      "(EngineCore_DP0 pid=936) ERROR 10-31 10:58:27 [core.py:779]     output = "
      "F.scaled_dot_product_attention(q, k, v, dropout_p=0.0)\n"
      "(EngineCore_DP0 pid=936) ERROR 10-31 10:58:27 [core.py:779] torch.OutOfMemoryError: CUDA "
      "out of memory. Tried to allocate 48.00 GiB. GPU 0 has a total capacity of 23.56 GiB of "
      "which 9.08 GiB is free.\n";
  const Diagnosis start = DiagnoseText(frames);
  EXPECT_EQ(start.stage, "profile");
  EXPECT_EQ(start.cause, "multimodal_encoder");
  const Diagnosis serving = DiagnoseText(
      "INFO 10-31 10:50:02 [loggers.py:123] Engine 000: Avg prompt throughput: 812.4 tokens/s, "
      "Avg generation throughput: 40.1 tokens/s, Running: 2 reqs\n" + frames);
  EXPECT_EQ(serving.stage, "runtime");
  EXPECT_EQ(serving.cause, "multimodal_encoder");
  const Diagnosis text_model = DiagnoseText(
      "  File \"/usr/lib/python3/site-packages/transformers/integrations/sdpa_attention.py\", "
      "line 96, in sdpa_attention_forward\n"
      "    attn_output = torch.nn.functional.scaled_dot_product_attention(\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB. GPU 0 has a total "
      "capacity of 23.56 GiB of which 2.08 GiB is free.\n");
  EXPECT_NE(text_model.cause, "multimodal_encoder");
}

// vLLM's profile run is its worst case: one allocation larger than the whole card, with no
// phase in the log, is the profile's, and only attention scores over a long sequence (a vision
// tower without flash attention) reach that size. Once the log shows serving, it is not.
TEST(Diagnose, VllmAllocationLargerThanTheCardIsTheProfile) {
  const std::string oom =
      "(VllmWorker rank=0 pid=4211) ERROR 03-02 10:11:12 [multiproc_executor.py:470] "
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 408.29 GiB. GPU 0 has a "
      "total capacity of 79.33 GiB of which 50.72 GiB is free.\n";
  const Diagnosis d = DiagnoseText(oom);
  EXPECT_EQ(d.stage, "profile");
  EXPECT_EQ(d.cause, "multimodal_encoder");
  const Diagnosis small = DiagnoseText(
      "(VllmWorker rank=0 pid=4211) ERROR 03-02 10:11:12 [multiproc_executor.py:470] "
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.29 GiB. GPU 0 has a "
      "total capacity of 79.33 GiB of which 1.72 GiB is free.\n");
  EXPECT_NE(small.stage, "profile");
  const Diagnosis serving = DiagnoseText(
      "INFO 03-02 10:10:02 [loggers.py:123] Engine 000: Avg prompt throughput: 812.4 tokens/s, "
      "Avg generation throughput: 40.1 tokens/s, Running: 2 reqs\n" + oom);
  EXPECT_EQ(serving.stage, "runtime");
}

// KoboldAI's API wraps its endpoints' out-of-memory errors in its own 507 answer ("KoboldAI ran
// out of memory: ..."): a request was being served, even with the card found full; the bare
// allocator message with the card full reads as the load.
TEST(Diagnose, KoboldAiApiOutOfMemoryIsARequest) {
  const std::string oom =
      "CUDA out of memory. Tried to allocate 26.00 MiB (GPU 0; 14.75 GiB total capacity; 13.66 "
      "GiB already allocated; 18.81 MiB free; 13.83 GiB reserved in total by PyTorch)\n";
  const Diagnosis api = DiagnoseText("{\n  detail: {\n    msg: 'KoboldAI ran out of memory: " +
                                     oom + "    type: 'out_of_memory.gpu.cuda'\n  }\n}\n");
  EXPECT_EQ(api.stage, "runtime");
  EXPECT_EQ(DiagnoseText("RuntimeError: " + oom).stage, "load");
}

// PyTorch's message with the process's own line and no other process listed: what is neither free
// nor this process's is held by processes NVML does not list (another container's on a shared
// card), and where that is most of the card they are the cause.
TEST(Diagnose, MemoryNoListedProcessHoldsIsOtherProcesses) {
  const std::string head =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 768.00 MiB. GPU 0 has a total "
      "capacity of 15.60 GiB of which 747.88 MiB is free. Including non-PyTorch memory, this "
      "process has ";
  const Diagnosis others = DiagnoseText(head + "2.46 GiB memory in use. Of the allocated memory "
                                               "2.14 GiB is allocated by PyTorch.\n");
  EXPECT_EQ(others.cause, "other_process");
  EXPECT_NEAR(others.numbers.at("unlisted_process_bytes") / (1024.0 * 1024 * 1024), 12.41, 0.01);
  const Diagnosis own = DiagnoseText(head + "14.80 GiB memory in use. Of the allocated memory "
                                            "14.40 GiB is allocated by PyTorch.\n");
  EXPECT_NE(own.cause, "other_process");
}

// PyTorch's message with no process line at all (ROCm's HIP message; Windows, where NVML has no
// per-process figures) still gives what this process's allocator holds (allocated plus reserved
// but unallocated): what is neither that nor free, less 1 GiB for the context, is others'. Not
// read where the message lacks its reserved figure (cut, or an NPU's shorter message), nor
// where the remainder is under 1 GiB (a small card's desktop and context).
TEST(Diagnose, MessageWithoutProcessLineStillCountsOthers) {
  const Diagnosis rocm = DiagnoseText(
      "Error: HIP out of memory. Tried to allocate 320.00 MiB. GPU 0 has a total capacity of "
      "15.98 GiB of which 8.00 MiB is free. Of the allocated memory 2.79 GiB is allocated by "
      "PyTorch, and 303.87 MiB is reserved by PyTorch but unallocated.\n");
  EXPECT_EQ(rocm.cause, "other_process");
  const Diagnosis small = DiagnoseText(
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 12.00 MiB. GPU 0 has a "
      "total capacty of 2.00 GiB of which 0 bytes is free. Of the allocated memory 472.67 MiB is "
      "allocated by PyTorch, and 3.33 MiB is reserved by PyTorch but unallocated.\n");
  EXPECT_NE(small.cause, "other_process");
  const Diagnosis cut = DiagnoseText(
      "torch.OutOfMemoryError: NPU out of memory. Tried to allocate 386.00 MiB\n"
      "(NPU 0; 61.27 GiB total; 13.40 GiB already allocated; 26.41 MiB free)\n");
  EXPECT_NE(cut.cause, "other_process");
}

// vLLM's launch and an out-of-memory whose allocated memory exceeds the weights the model's name
// states: the weights were in, so the profile run (not the load); not where --dtype float makes
// the weights twice what the name says.
TEST(Diagnose, VllmAllocatedPastTheNamedWeightsIsTheProfile) {
  const std::string oom =
      "ERROR 05-06 18:20:49 [engine.py:448] CUDA out of memory. Tried to allocate 96.00 MiB. GPU 0 "
      "has a total capacity of 15.77 GiB of which 64.44 MiB is free. Including non-PyTorch "
      "memory, this process has 15.70 GiB memory in use. Of the allocated memory 15.33 GiB is "
      "allocated by PyTorch, and 8.97 MiB is reserved by PyTorch but unallocated.\n";
  const std::string launch =
      "vllm serve deepseek-ai/DeepSeek-R1-Distill-Llama-8B --max-model-len 12288";
  EXPECT_EQ(DiagnoseText(launch + " --dtype=half\n" + oom).stage, "profile");
  EXPECT_EQ(DiagnoseText(launch + " --dtype=float\n" + oom).stage, "load");
}

// Ollama's runner dying while the server waited for the load, with cuBLAS failing to make its
// handle (the first matrix multiplication of a graph): the llama.cpp server's warm-up decode.
TEST(Diagnose, OllamaRunnerCublasHandleFailureIsTheWarmup) {
  const Diagnosis d = DiagnoseText(
      "Error: llama runner process has terminated: signal: aborted (core dumped) CUDA error: "
      "CUBLAS_STATUS_ALLOC_FAILED\n"
      "  current device: 0, in function cublas_handle at /go/src/github.com/ollama/ollama/llm/"
      "llama.cpp/ggml-cuda/common.cuh:826\n"
      "  cublasCreate_v2(&cublas_handles[device])\n");
  EXPECT_EQ(d.stage, "warmup");
  EXPECT_EQ(d.cause, "compute_buffer");
}

// The report's own words placing the failure in CUDA graph capture decide where no frame or
// milestone does; a traceback's source line saying so is not the report's words.
TEST(Diagnose, CaptureWordsPlaceABareOutOfMemory) {
  const std::string oom =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 60.00 MiB. GPU 1 has a "
      "total capacity of 139.81 GiB of which 48.06 MiB is free.\n";
  const Diagnosis d =
      DiagnoseText("The worker died during CUDA-graph capture with mem-fraction 0.88:\n" + oom);
  EXPECT_EQ(d.stage, "cudagraph");
  EXPECT_EQ(d.cause, "cudagraph_capture");
  EXPECT_NE(DiagnoseText(oom).stage, "cudagraph");
  EXPECT_NE(DiagnoseText("  File \"/app/run.py\", line 3, in <module>  # in graph capture\n" + oom)
                .stage,
            "cudagraph");
}

// A report that retells vLLM's sampler warm-up failure in its own words ("CUDA out of memory
// during sampler warmup") is that failure; "room" is no OOM, and the warm-up alone is none.
TEST(Diagnose, SamplerWarmupWordsAreTheSamplerFailure) {
  for (const char* words : {"- **Error:** CUDA out of memory during sampler warmup.\n",
                            "vLLM OOMs in the sampler warm-up with max_num_seqs=1024\n"}) {
    const Diagnosis d = DiagnoseText(std::string("vllm serve moonshotai/Kimi-K2.5\n") + words);
    EXPECT_EQ(d.stage, "warmup") << words;
    EXPECT_EQ(d.cause, "sampler_warmup") << words;
  }
  EXPECT_NE(DiagnoseText("vllm serve m\nThere was no room left for the sampler warmup.\n").cause,
            "sampler_warmup");
  EXPECT_NE(DiagnoseText("vllm serve m\nThe sampler warmup took 3 s.\n").cause,
            "sampler_warmup");
}

// The report's words placing an out-of-memory in the load decide where nothing else does: a
// load phrase beside a word of running out; a load phrase alone is not one.
TEST(Diagnose, LoadPhaseWordsPlaceABareOutOfMemory) {
  const std::string oom =
      "CUDA out of memory. Tried to allocate 1.45 GiB. GPU 0 has a total capacity of 15.47 GiB "
      "of which 956.62 MiB is free. Of the allocated memory 14.23 GiB is allocated by PyTorch.\n";
  EXPECT_EQ(DiagnoseText("- Diagnosis: the OOM occurred during **model load** (accelerate).\n" +
                         oom).stage,
            "load");
  EXPECT_EQ(DiagnoseText("\xe6\xa8\xa1\xe5\x9e\x8b\xe5\x8a\xa0\xe8\xbd\xbd"
                         "\xe9\x98\xb6\xe6\xae\xb5\xe5\xb0\xb1 OOM\n" + oom).stage,
            "load");
  EXPECT_NE(DiagnoseText("Timing: 188 s during model loading, then 5 prompts.\n" + oom).stage,
            "load");
  // The program's words and the message on one line (its own, or a paste that lost the line
  // ends between them).
  EXPECT_EQ(DiagnoseText("ERROR: Failed to load model - not enough GPU memory. GPU 0 has a total "
                         "capacity of 22.03 GiB of which 17.06 MiB is free.\n")
                .stage,
            "load");
  EXPECT_EQ(DiagnoseText("RuntimeError: Failed to load model: " + oom).stage, "load");
  EXPECT_NE(DiagnoseText("RuntimeError: Error initializing engine: " + oom).stage, "load");
  // A quantization run is the load: the verb beside the out-of-memory; a model that is already
  // quantized, or the phrase without an out-of-memory on its line, is not.
  EXPECT_EQ(DiagnoseText("I am unable to quantize this model to 4-bit due to \"CUDA out of "
                         "memory\".\n" + oom).stage,
            "load");
  EXPECT_EQ(DiagnoseText("OOM while quantizing layer 12\n" + oom).stage, "load");
  EXPECT_NE(DiagnoseText("I quantized the model with AutoAWQ and serving it gives OOM.\n" + oom)
                .stage,
            "load");
  EXPECT_NE(DiagnoseText("Quantizing took 2 hours.\n" + oom).stage, "load");
}

// Windows' commit limit (error 1455) and a DataLoader worker ended by SIGKILL are host memory,
// each with its own way out; the driver API's and HIP's names for the status are a device's
// out-of-memory.
TEST(Diagnose, CommitLimitDataLoaderKillAndStatusNames) {
  const Diagnosis paging = DiagnoseText(
      "OSError: [WinError 1455] The paging file is too small for this operation to complete. "
      "Error loading \"C:\\venv\\lib\\site-packages\\torch\\lib\\cudnn_cnn_infer64_8.dll\" or "
      "one of its dependencies.\n");
  EXPECT_EQ(paging.cause, "host_memory");
  ASSERT_FALSE(paging.fixes.empty());
  EXPECT_NE(paging.fixes[0].change.find("page file"), std::string::npos);
  for (const std::string& note : paging.notes) {
    EXPECT_EQ(note.find("the log also shows"), std::string::npos) << note;
  }
  const Diagnosis worker = DiagnoseText(
      "  File \"/opt/conda/lib/python3.10/site-packages/torch/utils/data/_utils/"
      "signal_handling.py\", line 66, in handler\n"
      "RuntimeError: DataLoader worker (pid 88213) is killed by signal: Killed.\n");
  EXPECT_EQ(worker.stage, "runtime");
  EXPECT_EQ(worker.cause, "host_memory");
  ASSERT_FALSE(worker.fixes.empty());
  EXPECT_NE(worker.fixes[0].change.find("num_workers"), std::string::npos);
  // A bus error in a worker stays shared memory's.
  EXPECT_NE(DiagnoseText("RuntimeError: DataLoader worker (pid 88213) is killed by signal: Bus "
                         "error. It is possible that dataloader's workers are out of shared "
                         "memory. Please try to raise your shared memory limit.\n")
                .summary.find("shared memory"),
            std::string::npos);
  // The kernel driver's own line (dmesg) is a device's out-of-memory; beside the OOM killer's on
  // a unified-memory part it stays host memory.
  const std::string nvrm =
      "[ 8812.004113] NVRM: nvCheckOkFailedNoLog: Check failed: Out of memory [NV_ERR_NO_MEMORY] "
      "(0x00000051) returned from _memdescAllocInternal(pMemDesc) @ mem_desc.c:1359\n";
  const Diagnosis driver = DiagnoseText(nvrm);
  EXPECT_TRUE(driver.found);
  EXPECT_NE(driver.cause, "host_memory");
  EXPECT_EQ(DiagnoseText(nvrm +
                         "[ 8812.411020] Out of memory: Killed process 40121 (python3) "
                         "total-vm:190312412kB, anon-rss:101230112kB\n")
                .cause,
            "host_memory");
  for (const char* status : {"cupy_backends.cuda.api.driver.CUDADriverError: "
                             "CUDA_ERROR_OUT_OF_MEMORY: out of memory\n",
                             "rocBLAS error: hipErrorOutOfMemory\n",
                             "RuntimeError: cuDNN error: "
                             "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED\n",
                             "Error out of memory at line 384 in file "
                             "/src/csrc/pythonInterface.cpp\n",
                             "cuda API failed with status 2: out of memory\n"}) {
    const Diagnosis d = DiagnoseText(status);
    EXPECT_TRUE(d.found) << status;
    EXPECT_NE(d.cause, "host_memory") << status;
  }
}

// AutoGPTQ fusing the attention as from_quantized loads: a repacked copy, with its own switch.
TEST(Diagnose, AutoGptqFusedAttentionInjection) {
  const Diagnosis d = DiagnoseText(
      "  File \"/venv/lib/python3.10/site-packages/auto_gptq/modeling/_base.py\", line 902, in "
      "from_quantized\n"
      "    cls.fused_attn_module_type.inject_to_model(\n"
      "  File \"/venv/lib/python3.10/site-packages/auto_gptq/nn_modules/fused_llama_attn.py\", "
      "line 154, in inject_to_model\n"
      "    qweights = torch.cat([q_proj.qweight, k_proj.qweight, v_proj.qweight], dim=1)\n"
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 140.00 MiB (GPU 0; "
      "44.35 GiB total capacity; 43.90 GiB already allocated; 98.00 MiB free; 44.01 GiB "
      "reserved in total by PyTorch)\n");
  EXPECT_EQ(d.stage, "load");
  EXPECT_EQ(d.cause, "dequantized_copy");
  ASSERT_FALSE(d.fixes.empty());
  EXPECT_NE(d.fixes[0].change.find("inject_fused_attention=False"), std::string::npos);
}

// A sentence that names the loading call before PyTorch's words places the failure at the load;
// one that also names the model running does not (and "pretrained" is no word of training).
TEST(Diagnose, SentenceNamingTheLoaderBeforeTheOom) {
  EXPECT_EQ(DiagnoseText("On my A5000 (24 GB, nothing else on it) at model = "
                         "AutoModelForCausalLM.from_pretrained(...) I get CUDA out of memory\n")
                .stage,
            "load");
  EXPECT_NE(DiagnoseText("After model = AutoModelForCausalLM.from_pretrained(...), generating "
                         "a long answer gives CUDA out of memory\n")
                .stage,
            "load");
}

// The report's words that the process was killed, with no GPU out-of-memory in the excerpt: the
// kernel's OOM killer (host memory). A person's kill is not one, and a GPU out-of-memory decides.
TEST(Diagnose, ProseKilledWithNoGpuOomIsHostMemory) {
  const std::string bar = "Loading checkpoint shards:  52%|#####     | 17/33 [00:41<00:38]\n";
  const Diagnosis d =
      DiagnoseText(bar + "Generate.py fails on `Loading checkpoint shards: 52%` with message "
                         "`killed`.\n");
  EXPECT_EQ(d.stage, "load");
  EXPECT_EQ(d.cause, "host_memory");
  EXPECT_NE(DiagnoseText(bar + "The process was killed by me with Ctrl-C.\n").cause,
            "host_memory");
  EXPECT_NE(DiagnoseText(bar + "It then got killed.\ntorch.OutOfMemoryError: CUDA out of memory. "
                               "Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.64 "
                               "GiB of which 3.06 MiB is free.\n")
                .cause,
            "host_memory");
  // The shell's notice retyped in lower case on its own line.
  EXPECT_EQ(
      DiagnoseText("Using GPU NVIDIA GeForce GTX 1660\nGPU memory_allocated: 0\nkilled\n").cause,
      "host_memory");
  EXPECT_NE(DiagnoseText("the job was not killed\n").cause, "host_memory");
  // The kill right after a progress bar it left unfinished; the CPU allocator's Windows words
  // quoted without its name.
  EXPECT_EQ(DiagnoseText("Loading checkpoint shards:   0%|          | 0/7 [00:00<?, ?it/s]"
                         "Killed\n")
                .cause,
            "host_memory");
  EXPECT_EQ(DiagnoseText("at 94% it says not enough memory: you tried to allocate 283115520 "
                         "bytes. What to do?\n")
                .cause,
            "host_memory");
  // The Chinese forms: "the program was killed", "the process was killed".
  for (const char* words : {"\xe7\xa8\x8b\xe5\xba\x8f\xe8\xa2\xabkill\xe6\x8e\x89\n",
                            "\xe8\xbf\x9b\xe7\xa8\x8b\xe8\xa2\xab\xe6\x9d\x80\n"}) {
    EXPECT_EQ(DiagnoseText(bar + words).cause, "host_memory") << words;
  }
}

// ExLlama's autosplit loader places each module with its slice of the cache and raises its own
// error when the split has no room left for both (exllamav2 model.py load_autosplit_gen;
// exllamav3's split planner, as TabbyAPI prints it): the cache, sized for every token of its
// length, is what grows with the context, with ExLlama's and TabbyAPI's settings as fixes.
TEST(Diagnose, ExllamaSplitErrorIsTheCacheWithCacheFixes) {
  for (const char* log :
       {"Loading model modules ââ 46/50\n"
        "ERROR:    RuntimeError: Insufficient VRAM in split for model and cache\n",
        "  File \"/app/exllamav2/model.py\", line 373, in load_autosplit_gen\n"
        "    raise RuntimeError(\"Insufficient VRAM for model and cache\")\n"
        "RuntimeError: Insufficient VRAM for model and cache\n"}) {
    const Diagnosis d = DiagnoseText(log);
    EXPECT_EQ(d.stage, "kv_cache") << log;
    EXPECT_EQ(d.cause, "kv_too_long_context") << log;
    ASSERT_FALSE(d.fixes.empty()) << log;
    EXPECT_NE(d.fixes[0].change.find("cache_size"), std::string::npos) << log;
  }
  // A CUDA error under the loader's frame is a module's weights.
  const Diagnosis cuda = DiagnoseText(
      "  File \"/app/exllamav2/model.py\", line 360, in load_autosplit_gen\n"
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 112.00 MiB.\n");
  EXPECT_EQ(cuda.stage, "load");
  EXPECT_EQ(cuda.cause, "weights_too_large");
  // Other "insufficient VRAM" prose is not the loader's error.
  EXPECT_NE(DiagnoseText("WARNING: insufficient VRAM for the preview window\n").stage,
            "kv_cache");
}

// The allocator's message reflowed at a space inside "total capacity": its figures are read
// from the line that continues it.
TEST(Diagnose, OomMessageWrappedInsideTotalCapacityKeepsItsFigures) {
  const Diagnosis d = DiagnoseText(
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 118.00 GiB. GPU 0 has "
      "a total\n"
      "capacity of 79.33 GiB of which 76.77 GiB is free.\n");
  ASSERT_TRUE(d.numbers.count("free_bytes"));
  EXPECT_NEAR(d.numbers.at("free_bytes") / (1ull << 30), 76.77, 0.01);
  EXPECT_NEAR(d.numbers.at("total_bytes") / (1ull << 30), 79.33, 0.01);
}

// A launch command continued over lines with the shell's backslash is read as one line: the
// model it names (here a 7B at 8 bits on a 6 GiB card) places the failure at the load. A log
// record after it, or a blank line, ends it.
TEST(Diagnose, ShellContinuedCommandIsReadAsOneLine) {
  const std::string oom =
      "OutOfMemoryError: CUDA out of memory. Tried to allocate 86.00 MiB (GPU 0; 6.00 GiB total "
      "capacity; 4.01 GiB already allocated; 84.00 MiB free; 4.55 GiB reserved in total by "
      "PyTorch)\n";
  const Diagnosis d = DiagnoseText(
      "$ python -m fastchat.serve.cli \\\n"
      "    --model-path ./model_weights/lmsys/vicuna-7b-delta-v1.1 \\\n"
      "    --load-8bit\n" + oom);
  EXPECT_EQ(d.stage, "load");
  EXPECT_EQ(d.cause, "weights_too_large");
  // Cut after the backslash: the OOM line is still read as itself.
  const Diagnosis cut = DiagnoseText("python -m fastchat.serve.cli --load-8bit \\\n\n" + oom);
  EXPECT_EQ(cut.stage, "runtime");
  EXPECT_DOUBLE_EQ(cut.numbers.at("requested_bytes"), 86.0 * 1048576.0);
}

// A continued command where a collector prefixed every line (docker compose's service column):
// the prefix on each continued piece is the collector's, and the command is read whole, as bare.
TEST(Diagnose, ShellContinuedCommandUnderACollectorsPrefixIsReadAsOneLine) {
  // LlamaFactory's export with GPTQ quantization, named only by the flags on the continued
  // pieces; the log stops there (a silent end of a quantization run).
  const std::string lines[] = {
      "CUDA_VISIBLE_DEVICES=0 python ../../src/export_model.py \\",
      "    --model_name_or_path ../../models/llama3-8b-sft \\",
      "    --export_dir ../../models/llama3-8b-sft-int4 \\",
      "    --export_quantization_bit 4 \\",
      "    --export_quantization_dataset ../../data/c4_demo.json",
  };
  std::string bare, prefixed;
  for (const std::string& l : lines) {
    bare += l + "\n";
    prefixed += "app-1  | " + l + "\n";
  }
  const Diagnosis want = DiagnoseText(bare);
  ASSERT_TRUE(want.found);
  EXPECT_EQ(want.stage, "load");
  const Diagnosis d = DiagnoseText(prefixed);
  ASSERT_TRUE(d.found);
  EXPECT_EQ(d.stage, want.stage);
  EXPECT_EQ(d.cause, want.cause);
}

// The engines' long messages reflowed at spaces over three lines and more are read whole: vLLM's
// max-length error, and SGLang's "Load weight end." milestone before its pool error. Cut by a
// terminal at one width (two lines of 80 columns), a word cut in two is joined as it was.
TEST(Diagnose, EngineMessagesReflowedOverSeveralLinesAreReadWhole) {
  const Diagnosis vllm = DiagnoseText(
      "ERROR 05-10 10:12:40 [core.py:396] ValueError: To serve at least one request with the\n"
      "models's max seq len (131072), (16.00 GiB KV cache is needed, which is\n"
      "larger than the available KV cache memory (5.12 GiB). Based on the\n"
      "available memory, the estimated maximum model length is 41904. Try\n"
      "increasing `gpu_memory_utilization` or decreasing `max_model_len` when\n"
      "initializing the engine.\n");
  EXPECT_EQ(vllm.stage, "kv_cache");
  EXPECT_EQ(vllm.cause, "kv_too_long_context");
  const Diagnosis sglang = DiagnoseText(
      "[2025-03-29 18:18:34 TP0] Load weight end.\n"
      "type=Gemma3ForConditionalGeneration, dtype=torch.bfloat16, avail\n"
      "mem=3.64 GB, mem usage=18.82 GB.\n"
      "[2025-03-29 18:18:35 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
      "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n");
  EXPECT_EQ(sglang.stage, "kv_cache");
  EXPECT_EQ(sglang.cause, "kv_no_memory");
  const std::string cut =
      "ValueError: The model's max seq len (131072) is larger than the maximum number \n"
      "of tokens that can be stored in KV cache (39024). Try increasing `gpu_memory_uti\n"
      "lization` or decreasing `max_model_len` when initializing the engine.\n";
  EXPECT_EQ(DiagnoseText(cut).cause, "kv_too_long_context");
  // Reflowed, with the first and third lines of one width (the widest): the second line's
  // other width shows a reflow, whose joints get their spaces back ("maximum" + "number").
  const std::string reflowed =
      "ValueError: The model's max seq len (131072) is larger than the maximum\n"
      "number of tokens that can be stored in KV cache (39024). Try increasing\n"
      "`gpu_memory_utilization` or decreasing `max_model_len` when initializing\n"
      "the engine.\n";
  EXPECT_EQ(DiagnoseText(reflowed).cause, "kv_too_long_context");
}

// A reflow that broke an engine's message or milestone inside its key words, on a short excerpt
// where no reflow width shows: the previous line's part is read with this one's. And where four
// workers' copies of one record, reflowed at the same place, looked like a terminal's wrap, the
// pieces joined between two letters are read with the space a reflow took away too.
TEST(Diagnose, KeyWordsBrokenByAReflowAreReadWhole) {
  const Diagnosis sglang = DiagnoseText(
      "| `coder-30b` | FAIL | `RuntimeError: Not enough\n"
      "memory. Please try to increase --mem-fraction-static` at MEM=0.85 / CTX=4096. |\n");
  EXPECT_EQ(sglang.stage, "kv_cache");
  EXPECT_EQ(sglang.cause, "kv_no_memory");
  std::string workers;
  for (int r = 0; r < 4; ++r) {
    workers += fmt::format(
        "(Worker_TP{} pid=26{}) INFO 10-29 19:57:20 [gpu_model_runner.py:3480] Graph capturing\n"
        "finished in 28 secs, took 1.88 GiB\n",
        r, r);
  }
  const Diagnosis vllm = DiagnoseText(
      workers +
      "(Worker_TP2 pid=262) ERROR 10-29 19:57:21 [multiproc_executor.py:671] "
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 150.00 MiB. GPU 2 has a "
      "total capacity of 23.52 GiB of which 11.69 MiB is free.\n");
  EXPECT_EQ(vllm.stage, "warmup");
  // A llama.cpp line of exactly 100 columns whose next line is the rest of its message: read as
  // a terminal's cut and joined tight ("bufferfor"), and with the space as well.
  const std::string head =
      "0.06.650.537 E llama_init_from_model: failed to initialize the context: failed to allocate "
      "buffer";
  ASSERT_EQ(head.size(), 97u);  // quoted and indented as a JSON array's item: 100 columns
  const Diagnosis llama = DiagnoseText(
      "0.02.678.576 W llama_context: n_ctx_seq (1500160) > n_ctx_train (262144) -- possible "
      "training\n"
      "context overflow\n"
      "0.05.982.175 E alloc_tensor_range: failed to allocate Vulkan0 buffer of size 1632174080\n"
      "  \"" + head + "\n"
      "for kv cache\",\n"
      "0.06.660.464 E srv  llama_server: exiting due to model loading error\n");
  EXPECT_EQ(llama.stage, "kv_cache");
  // vLLM's max-length message retyped by a user and reflowed at 100 characters, its first line
  // exactly 100 wide: read as a terminal's cut ("KVcache") and with its space back.
  const std::string first =
      "The model's max sew len (32768) is larger than the maximum number of tokens that can be "
      "stored in KV";
  ASSERT_EQ(first.size(), 100u);
  const Diagnosis retyped = DiagnoseText(
      first + "\ncache (18896). Try increasing 'gpu_memory_utilization' or decreasing "
              "'max_model_len' when\ninitializing the engine.\n");
  EXPECT_EQ(retyped.stage, "kv_cache");
  EXPECT_EQ(retyped.cause, "kv_too_long_context");
}

// More messages a reflow broke where the readers looked at one line: PyTorch's mmap refusal with
// its path on a line of its own, Ollama's runner "no" + "longer running", MLX's allocator after
// "Attempting to", transformers' shard bar after its description, and IPython's old frame header
// after its path.
TEST(Diagnose, MessagesAndMilestonesReflowedAtTheirWordsAreRead) {
  const Diagnosis mmap = DiagnoseText(
      "RuntimeError: unable to mmap 4993859720 bytes from file\n"
      "</data2/ckpt/model-00060-of-00135.safetensors>: Cannot\n"
      "allocate memory (12)\n");
  EXPECT_EQ(mmap.stage, "load");
  EXPECT_EQ(mmap.cause, "host_memory");
  const Diagnosis ollama = DiagnoseText(
      "level=ERROR source=sched.go:388 msg=\"error loading llama server\" error=\"llama runner "
      "process no\n"
      "longer running: -1 \"\n");
  EXPECT_EQ(ollama.stage, "load");
  EXPECT_EQ(ollama.cause, "host_memory");
  const Diagnosis mlx = DiagnoseText(
      "Error: 500 Internal Server Error: mlx runner failed: panic: mlx: [metal::malloc] "
      "Attempting to\n"
      "allocate 133872076800 bytes which is greater than the maximum allowed buffer size of "
      "30150672384\n"
      "bytes.\n");
  ASSERT_TRUE(mlx.found);
  EXPECT_EQ(mlx.numbers.count("requested_bytes"), 1u);
  const std::string oom =
      "OutOfMemoryError: CUDA out of memory. Tried to allocate 5.25 GiB. GPU 0 has a total "
      "capacity of 14.56 GiB of which 1.41 GiB is free.\n";
  const Diagnosis shards = DiagnoseText(
      "Loading checkpoint shards:\n"
      "100%|##########| 2/2\n"
      "[00:02<00:00,  1.44s/it]\n" + oom);
  EXPECT_EQ(shards.stage, "runtime");
  EXPECT_NE(shards.stage_evidence.find("milestone line 2"), std::string::npos)
      << shards.stage_evidence;
  const Diagnosis header = DiagnoseText(
      "Loading google/gemma-4-E4B...\n"
      "OutOfMemoryError                          Traceback (most recent call last)\n"
      "-> 2455         outputs = self.model(\n"
      "/usr/local/lib/python3.12/dist-packages/transformers/models/gemma4/modeling_gemma4.py\n"
      "in forward(self, input_ids, pixel_values, pixel_values_videos, attention_mask)\n" + oom);
  EXPECT_EQ(header.stage, "runtime");
  EXPECT_NE(header.cause, "multimodal_encoder");
  EXPECT_NE(header.stage_evidence.find("forward"), std::string::npos) << header.stage_evidence;
}

// Milestones and verdicts a reflow broke inside their words: TGI's inferred token budget and its
// warm-up span before the server's error, transformers' max-length reminder while generating,
// and llm-compressor's line that the run finished (a run that finished is no silent kill).
TEST(Diagnose, MilestonesReflowedInsideTheirWordsStillPlaceTheStage) {
  const std::string oom =
      "2024-06-10T09:03:12.000000Z ERROR text_generation_launcher: torch.OutOfMemoryError: CUDA "
      "out of\nmemory. Tried to allocate 3.00 GiB. GPU 0 has a total capacity of 79.11 GiB of "
      "which 1.40 GiB is\nfree.\n";
  EXPECT_EQ(DiagnoseText("2024-06-10T09:00:01.000000Z  INFO text_generation_router: "
                         "router/src/main.rs:420: Warming up model\n"
                         "2024-06-10T09:00:20.000000Z  WARN text_generation_router: "
                         "router/src/main.rs:436: Inferred max batch\n"
                         "total tokens: 30816\n" + oom)
                .stage,
            "runtime");
  EXPECT_EQ(DiagnoseText("2024-09-25T15:04:34.598137Z ERROR warmup{max_input_length=Some(4095) "
                         "max_prefill_tokens=4096\n"
                         "max_total_tokens=Some(4096) max_batch_size=None}:warmup: "
                         "text_generation_router_v3::client:\n"
                         "backends/v3/src/client/mod.rs:45: Server error: CUDA out of memory. "
                         "Tried to allocate 1.00 GiB. GPU\n"
                         "0 has a total capacity of 79.11 GiB of which 600.00 MiB is free.\n")
                .stage,
            "profile");
  EXPECT_EQ(DiagnoseText("This is a friendly reminder - the current text generation call will "
                         "exceed the model's predefined\n"
                         "maximum length (32768). Depending on the model, you may observe "
                         "exceptions.\n"
                         "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.02 GiB. "
                         "GPU 0 has a total capacity of 79.14 GiB of which 1.20 GiB is free. Of "
                         "the allocated memory 77.31 GiB is allocated by PyTorch.\n")
                .stage,
            "runtime");
  EXPECT_FALSE(DiagnoseText("(33/33): Calibrating: 100%|##########| 512/512\n"
                            "2025-06-01T10:20:22.000 | compress_modules | INFO - Quantizing\n"
                            "model.layers.31.mlp.down_proj using 512 samples\n"
                            "2025-06-01T10:20:30.000 | finalize | INFO - Compression lifecycle\n"
                            "finalized for 1 modifiers\n"
                            "Saved model to Meta-Llama-3-8B-Instruct-W4A16-G128\n")
                   .found);
}

// Ray's RayTaskError names the remote method; an RL worker's init_model builds and loads the
// model, so an OOM there is the load stage (another process's memory is the cause here).
TEST(Diagnose, RayTaskHeaderNamesTheFailingMethod) {
  const std::string oom =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 260.00 MiB. GPU 0 has a "
      "total capacity of 21.95 GiB of which 202.62 MiB is free. Process 136096 has 18.46 GiB "
      "memory in use. Including non-PyTorch memory, this process has 3.28 GiB memory in use.\n";
  const Diagnosis bare = DiagnoseText(oom);
  EXPECT_EQ(bare.stage, "runtime");
  const Diagnosis d = DiagnoseText(
      oom + "ray.exceptions.RayTaskError(OutOfMemoryError): ray::FSDPPolicyWorkerBase.init_model() "
            "(pid=141722, ip=10.0.42.164)\n");
  EXPECT_EQ(d.stage, "load");
  EXPECT_EQ(d.cause, "other_process");
  // A name without a method call is no frame.
  EXPECT_EQ(DiagnoseText(oom + "see ray::init_model docs\n").stage, "runtime");
}

// Frames a paste reflowed at spaces: "File" / "\"PATH\", line" / "N, in NAME", and a name alone
// after a line that ended in ", in", read as the frames they are.
TEST(Diagnose, FramesReflowedAtSpacesAreReadWhole) {
  const Diagnosis d = DiagnoseText(
      "(Worker pid=7) ERROR 10-25 13:12:42 [multiproc_executor.py:671]   File\n"
      "\"/opt/venv/lib/python3.13/site-packages/torch/utils/_contextlib.py\", line 120, in\n"
      "decorate_context\n"
      "(Worker pid=7) ERROR 10-25 13:12:42 [multiproc_executor.py:671]     return func(*args)\n"
      "(Worker pid=7) ERROR 10-25 13:12:42 [multiproc_executor.py:671]   File\n"
      "\"/opt/venv/lib/python3.13/site-packages/vllm/v1/worker/gpu_model_runner.py\", line\n"
      "3221, in _dummy_sampler_run\n"
      "(Worker pid=7) ERROR 10-25 13:12:42 [multiproc_executor.py:671]     raise RuntimeError(\n");
  EXPECT_EQ(d.stage, "warmup");
  EXPECT_EQ(d.cause, "sampler_warmup");
}

// A vision tower added to vLLM after 0.10 (Kimi-VL's MoonViT) on the profile run's stack.
TEST(Diagnose, NewerVllmVisionTowerInTheProfileRun) {
  const Diagnosis d = DiagnoseText(
      "ERROR 05-11 09:41:40 [core.py:396]   File \"/opt/vllm/v1/engine/core.py\", line 129, in "
      "_initialize_kv_caches\n"
      "ERROR 05-11 09:41:40 [core.py:396]     available_gpu_memory = "
      "self.model_executor.determine_available_memory()\n"
      "ERROR 05-11 09:41:40 [core.py:396]   File \"/opt/vllm/model_executor/models/moonvit.py\", "
      "line 477, in forward\n"
      "ERROR 05-11 09:41:40 [core.py:396]     attn_out = self.attention_qkvpacked(hidden_states,\n"
      "ERROR 05-11 09:41:40 [core.py:396] torch.OutOfMemoryError: CUDA out of memory. Tried to "
      "allocate 12.00 GiB. GPU 0 has a total capacity of 79.10 GiB of which 8.00 GiB is free.\n");
  EXPECT_EQ(d.stage, "profile");
  EXPECT_EQ(d.cause, "multimodal_encoder");
}

// vLLM's sleep mode: wake_up failing in a trainer's own process is the trainer's cached blocks
// (fragmentation, with empty_cache as the fix); in a colocated actor, another process.
TEST(Diagnose, SleepModeWakeUpInAnRlTrainer) {
  const std::string frames =
      "  File \"/usr/lib/python3/dist-packages/vllm/entrypoints/llm.py\", line 1244, in "
      "wake_up\n"
      "    self.llm_engine.wake_up()\n"
      "  File \"/usr/lib/python3/dist-packages/vllm/device_allocator/cumem.py\", line 75, in "
      "create_and_map\n"
      "    python_create_and_map(*allocation_handle)\n"
      "RuntimeError: CUDA Error: out of memory at /workspace/csrc/cumem_allocator.cpp:62\n";
  const Diagnosis in_trainer = DiagnoseText(
      "Traceback (most recent call last):\n"
      "  File \"/w/verl/workers/fsdp_workers.py\", line 481, in generate_sequences\n"
      "    with self.rollout_sharding_manager:\n"
      "  File \"/w/verl/workers/sharding_manager/fsdp_vllm.py\", line 82, in __enter__\n"
      "    self.inference_engine.wake_up()\n" +
      frames);
  EXPECT_EQ(in_trainer.stage, "runtime");
  EXPECT_EQ(in_trainer.cause, "fragmentation");
  ASSERT_FALSE(in_trainer.fixes.empty());
  EXPECT_NE(in_trainer.fixes[0].change.find("torch.cuda.empty_cache()"), std::string::npos);
  const Diagnosis beside = DiagnoseText("Traceback (most recent call last):\n" + frames);
  EXPECT_EQ(beside.stage, "runtime");
  EXPECT_EQ(beside.cause, "other_process");
  ASSERT_FALSE(beside.fixes.empty());
  EXPECT_NE(beside.fixes[0].change.find("offload the trainer"), std::string::npos);
}

// A traceback cut in SGLang's ModelRunner.initialize is the start-up's construction (the
// milestones say how far it got), not serving.
TEST(Diagnose, SglangTracebackCutInModelRunnerInitialize) {
  const std::string cut =
      "[2025-05-29 14:59:00 TP5] Scheduler hit an exception: Traceback (most recent call last):\n"
      "  File \"/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py\", line 280, in "
      "__init__\n"
      "    self.tp_worker = TpWorkerClass(\n"
      "  File \"/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py\", line "
      "233, in __init__\n"
      "    self.initialize(min_per_gpu_memory)\n"
      "  File \"/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py\", line "
      "300, in initialize\n"
      "    self\n";
  EXPECT_EQ(DiagnoseText(cut).stage, "load");
}

// PyTorch's own OOM advice, expandable segments, stops vLLM's sleep-mode allocator at load: not
// an out-of-memory, whatever the "memory pool" in its message.
TEST(Diagnose, ExpandableSegmentsRefusedBySleepMode) {
  const Diagnosis d = DiagnoseText(
      "ERROR 08-13 10:01:02 [core.py:708]   File \"/x/vllm/v1/worker/gpu_worker.py\", line 238, "
      "in load_model\n"
      "ERROR 08-13 10:01:02 [core.py:708]     allocator = CuMemAllocator.get_instance()\n"
      "ERROR 08-13 10:01:02 [core.py:708] AssertionError: Expandable segments are not compatible "
      "with memory pool. Please track https://github.com/pytorch/pytorch/issues/147851 for the "
      "latest updates.\n");
  EXPECT_EQ(d.cause, "not_out_of_memory");
  ASSERT_FALSE(d.fixes.empty());
  EXPECT_NE(d.fixes[0].change.find("unset PYTORCH_CUDA_ALLOC_CONF"), std::string::npos);
}

// llama.cpp: a device buffer failing after "sched_reserve: reserving" is the compute buffer.
TEST(Diagnose, GgmlBufferAfterTheReservationBeganIsTheComputeBuffer) {
  const std::string alloc =
      "0.11.257.162 E ggml_backend_cuda_buffer_type_alloc_buffer: allocating 14656.12 MiB on "
      "device 0: cudaMalloc failed: out of memory\n";
  const Diagnosis d = DiagnoseText("0.11.118.576 I sched_reserve: reserving ...\n" + alloc);
  EXPECT_EQ(d.stage, "profile");
  EXPECT_EQ(d.cause, "compute_buffer");
  // Without it, a bare buffer failure is the weights'.
  EXPECT_EQ(DiagnoseText(alloc).stage, "load");
}

// Ollama's runner dying in the compute graph's reservation, its last words in the server's
// message; and the scheduler's older system check ("requested model ... is too large").
TEST(Diagnose, OllamaReservationAndSystemCheckMessages) {
  const Diagnosis graph = DiagnoseText(
      "500 Internal Server Error: llama runner process has terminated: error:failed to allocate "
      "buffer, size = 16571.89 MiB ggml_gallocr_reserve_n: failed to allocate Metal buffer of "
      "size 17376872352\n");
  EXPECT_EQ(graph.engine, "ollama");
  EXPECT_EQ(graph.stage, "profile");
  EXPECT_EQ(graph.cause, "compute_buffer");
  // The same message cut over two lines, also inside the function's name.
  for (const char* cut : {"size = 16571.89 MiB\nggml_gallocr_reserve_n: failed",
                          "size = 16571.89 MiB ggml_galloc\nr_reserve_n: failed"}) {
    const Diagnosis two = DiagnoseText(
        std::string("Error: llama runner process has terminated: error:failed to allocate "
                    "buffer, ") +
        cut + " to allocate CUDA0 buffer of size 17376872352\n");
    EXPECT_EQ(two.stage, "profile") << cut;
    EXPECT_EQ(two.cause, "compute_buffer") << cut;
  }
  // A reservation failure Ollama's layout search logs and recovers from is not the runner's.
  const Diagnosis searched = DiagnoseText(
      "time=2025-10-01T10:00:00.000Z level=INFO source=ggml.go:494 msg=\"ggml_gallocr_reserve_n: "
      "failed to allocate CUDA0 buffer of size 9663676416\"\n"
      "time=2025-10-01T10:00:09.000Z level=INFO source=server.go:1289 msg=\"llama runner started "
      "in 9.01 seconds\"\n");
  EXPECT_NE(searched.cause, "compute_buffer");
  const Diagnosis system = DiagnoseText(
      "{\"error\":\"requested model (18.4 GiB) is too large for this system (6.8 GiB)\"}\n");
  EXPECT_EQ(system.stage, "startup");
  EXPECT_EQ(system.cause, "host_memory");
  EXPECT_NEAR(system.numbers.at("host_required_bytes"), 18.4 * (1 << 30), 1e6);
  const Diagnosis logged = DiagnoseText(
      "time=2024-12-20T02:51:46.001Z level=WARN source=sched.go:216 msg=\"model request too "
      "large for system\" requested=\"18.4 GiB\" available=7301234688 total=\"15.9 GiB\"\n");
  EXPECT_EQ(logged.stage, "startup");
  EXPECT_EQ(logged.cause, "host_memory");
}

// TGI 1.x's warm-up allocating its KV blocks (cache_manager.py) before the prefill: the KV
// stage, whatever the warm-up's error line says.
TEST(Diagnose, TgiOneCacheManagerIsTheKvStage) {
  const Diagnosis d = DiagnoseText(
      "2024-03-19T09:54:39.063000Z ERROR lorax_launcher: interceptor.py:41 Method Warmup "
      "encountered an error.\n"
      "Traceback (most recent call last):\n"
      "  File \"/opt/conda/lib/python3.10/site-packages/lorax_server/models/flash_causal_lm.py\", "
      "line 775, in warmup\n"
      "    cache_manager = set_cache_manager(\n"
      "  File \"/opt/conda/lib/python3.10/site-packages/lorax_server/models/cache_manager.py\", "
      "line 29, in __init__\n"
      "    self.kv_cache = [\n"
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 320.00 MiB. GPU 0 has a "
      "total capacity of 39.39 GiB of which 197.62 MiB is free.\n");
  EXPECT_EQ(d.stage, "kv_cache");
  EXPECT_EQ(d.cause, "kv_no_memory");
  // Both pieces of evidence are named: the warm-up's error line and the frame that places it.
  EXPECT_NE(d.stage_evidence.find("tgi_warmup_fail"), std::string::npos);
  EXPECT_NE(d.stage_evidence.find("cache_manager.py"), std::string::npos);
}

// TGI's warm-up prefill did not fit: the fix halves --max-batch-prefill-tokens, and where that
// falls below the prompt limit the launcher's Args give, lowers --max-input-tokens with it (the
// launcher refuses a prefill budget below it); with no limit in the log, the prefill alone.
TEST(Diagnose, TgiWarmupPrefillFixKeepsTheInputLimitBelowIt) {
  const std::string warmup =
      "2024-11-02T10:00:45.000Z ERROR warmup{max_input_length=Some(30000) max_prefill_tokens=32000 "
      "max_total_tokens=Some(32000) max_batch_size=None}:warmup: text_generation_router_v3::"
      "client: backends/v3/src/client/mod.rs:45: Server error: Not enough memory to handle 32000 "
      "prefill tokens. You need to decrease `--max-batch-prefill-tokens`\n";
  const std::string bare_error =
      "Error: Backend(Warmup(Generation(\"Not enough memory to handle 32000 prefill tokens. You "
      "need to decrease `--max-batch-prefill-tokens`\")))\n";
  const Diagnosis d = DiagnoseText(warmup);
  EXPECT_EQ(d.engine, "tgi");
  EXPECT_EQ(d.stage, "profile");
  ASSERT_FALSE(d.fixes.empty());
  EXPECT_EQ(d.fixes[0].change, "--max-batch-prefill-tokens 16000 --max-input-tokens 16000");
  const Diagnosis args = DiagnoseText(
      "2024-11-02T10:00:01.000Z  INFO text_generation_launcher: Args { model_id: \"x/y\", "
      "max_input_tokens: Some(12000), max_total_tokens: Some(32000) }\n" +
      bare_error);
  ASSERT_FALSE(args.fixes.empty());
  EXPECT_EQ(args.fixes[0].change, "--max-batch-prefill-tokens 16000");
  const Diagnosis args_over = DiagnoseText(
      "text-generation-launcher --model-id x/y --max-input-tokens 20000 --max-total-tokens "
      "32000\n" + bare_error);
  ASSERT_FALSE(args_over.fixes.empty());
  EXPECT_EQ(args_over.fixes[0].change, "--max-batch-prefill-tokens 16000 --max-input-tokens 16000");
  const Diagnosis bare = DiagnoseText(bare_error);
  ASSERT_FALSE(bare.fixes.empty());
  EXPECT_EQ(bare.fixes[0].change, "--max-batch-prefill-tokens 16000");
}

// Ollama's answer to a completion whose runner died: "an error was encountered while running the
// model: <the runner's last line>". With an out-of-memory there, a request's buffers (runtime,
// in Ollama's settings); with "unexpected EOF" alone, no out-of-memory is claimed.
TEST(Diagnose, OllamaCompletionErrorWithOutOfMemoryIsTheRequest) {
  const Diagnosis d = DiagnoseText(
      "{\"error\":\"an error was encountered while running the model: CUDA error\\nCUDA error: "
      "out of memory\"}\n");
  EXPECT_EQ(d.engine, "ollama");
  EXPECT_EQ(d.stage, "runtime");
  EXPECT_EQ(d.cause, "compute_buffer");
  ASSERT_FALSE(d.fixes.empty());
  for (const auto& fix : d.fixes) EXPECT_EQ(fix.change.find("-ub"), std::string::npos);
  const Diagnosis eof =
      DiagnoseText("Error: an error was encountered while running the model: unexpected EOF\n");
  EXPECT_NE(eof.cause, "compute_buffer");
  EXPECT_TRUE(eof.stage.empty());
}

// LM Studio's own lines make it the engine: its toasts that name no reason are said as such
// (cause undetermined, GPU Offload to test memory), with the stage they state; a llama.cpp
// failure among its Developer Logs is diagnosed in its settings.
TEST(Diagnose, LmStudioToastsAndItsLlamaCppFailures) {
  const Diagnosis load = DiagnoseText(
      "\xf0\x9f\xa5\xb2 Failed to load the model\n\nError loading model.\n\n(Exit code: "
      "18446744072635812000). Unknown error. Try a different model and/or config.\n");
  EXPECT_EQ(load.engine, "lm-studio");
  EXPECT_EQ(load.stage, "load");
  EXPECT_EQ(load.cause, "undetermined");
  ASSERT_FALSE(load.fixes.empty());
  EXPECT_NE(load.fixes[0].change.find("GPU Offload"), std::string::npos);
  const Diagnosis json = DiagnoseText(
      "{\n  \"title\": \"Failed to load model\",\n  \"cause\": \"\",\n  \"errorData\": {\n"
      "    \"n_ctx\": 1048576\n  },\n  \"data\": {\n    \"gpu\": {\n"
      "      \"vram_recommended_capacity\": \"141.90 GB\"\n    }\n  }\n}\n");
  EXPECT_EQ(json.engine, "lm-studio");
  EXPECT_EQ(json.stage, "load");
  EXPECT_EQ(json.cause, "undetermined");
  const Diagnosis crash = DiagnoseText(
      "The model has crashed without additional information. (Exit code: "
      "18446744072635812000)\n");
  EXPECT_EQ(crash.engine, "lm-studio");
  EXPECT_EQ(crash.stage, "runtime");
  EXPECT_EQ(crash.cause, "undetermined");
  // With llama.cpp's allocation failure before the toast, that failure is the diagnosis.
  const Diagnosis weights = DiagnoseText(
      " [LM Studio] GPU Configuration:\n"
      "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 14180.00 MiB on device 0: "
      "cudaMalloc failed: out of memory\n"
      "llama_model_load: error loading model: unable to allocate CUDA0 buffer\n"
      " lmstudio-llama-cpp: failed to load model. Error: Failed to load model\n"
      "\xf0\x9f\xa5\xb2 Failed to load the model\n");
  EXPECT_EQ(weights.engine, "lm-studio");
  EXPECT_EQ(weights.stage, "load");
  EXPECT_EQ(weights.cause, "weights_too_large");
  ASSERT_FALSE(weights.fixes.empty());
  EXPECT_NE(weights.fixes[0].change.find("GPU Offload"), std::string::npos);
  // 0.4.x's guardrail panel: refused before loading.
  const Diagnosis guard =
      DiagnoseText("Not enough resources to load the model with the current settings\n");
  EXPECT_EQ(guard.engine, "lm-studio");
  EXPECT_EQ(guard.stage, "startup");
  EXPECT_EQ(guard.cause, "host_memory");
  // The Context Length its estimate line gives sizes the fix.
  const Diagnosis context = DiagnoseText(
      " [LM Studio] Model load size estimate with raw num offload layers 'max' and context length "
      "'131072':\n"
      "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv "
      "cache\n");
  EXPECT_EQ(context.engine, "lm-studio");
  EXPECT_EQ(context.cause, "kv_too_long_context");
  ASSERT_FALSE(context.fixes.empty());
  EXPECT_NE(context.fixes[0].change.find("Context Length 65536"), std::string::npos);
  // "error loading model: ..." is llama.cpp's, not LM Studio's toast.
  EXPECT_NE(DiagnoseText("llama_model_load: error loading model: unknown model architecture: "
                         "'x'\n")
                .engine,
            "lm-studio");
}

// llama.cpp's recurrent-state cache (hybrid and Mamba models) refused after the KV cache: one
// state per slot, so fewer slots first.
TEST(Diagnose, LlamaCppRecurrentStateCacheIsTheSlots) {
  const Diagnosis d = DiagnoseText(
      "llama_kv_cache:      CUDA0 KV buffer size =  2048.00 MiB\n"
      "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 201.00 MiB on device 0: cudaMalloc "
      "failed: out of memory\n"
      "alloc_tensor_range: failed to allocate CUDA0 buffer of size 210763776\n"
      "llama_init_from_model: failed to initialize the context: failed to allocate buffer for rs "
      "cache\n");
  EXPECT_EQ(d.stage, "kv_cache");
  EXPECT_EQ(d.cause, "kv_too_many_sequences");
  ASSERT_FALSE(d.fixes.empty());
  EXPECT_EQ(d.fixes[0].change, "-np 1 (or fewer slots than now)");
  // The KV cache's own failure stays the context's.
  EXPECT_EQ(DiagnoseText("llama_init_from_model: failed to initialize the context: failed to "
                         "allocate buffer for kv cache\n")
                .cause,
            "kv_too_long_context");
}

// KoboldCpp runs llama.cpp in its own process: its banner makes it the engine, and llama.cpp's
// failures are advised in its launch options.
TEST(Diagnose, KoboldCppFailuresInItsOwnOptions) {
  const std::string banner =
      "***\nWelcome to KoboldCpp - Version 1.79.1\n"
      "[Threads: 7, BlasThreads: 7, SmartContext: False, ContextShift: True]\n";
  const Diagnosis weights = DiagnoseText(
      banner +
      "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 15488.00 MiB on device 0: "
      "cudaMalloc failed: out of memory\n"
      "llama_model_load: error loading model: unable to allocate CUDA0 buffer\n");
  EXPECT_EQ(weights.engine, "koboldcpp");
  EXPECT_EQ(weights.stage, "load");
  EXPECT_EQ(weights.cause, "weights_too_large");
  ASSERT_FALSE(weights.fixes.empty());
  EXPECT_NE(weights.fixes[0].change.find("--gpulayers"), std::string::npos);
  for (const auto& fix : weights.fixes) EXPECT_EQ(fix.change.find("-ngl"), std::string::npos);
  const Diagnosis kv = DiagnoseText(
      banner + "llama_new_context_with_model: n_ctx      = 32768\n"
               "llama_init_from_model: failed to initialize the context: failed to allocate "
               "buffer for kv cache\n");
  EXPECT_EQ(kv.engine, "koboldcpp");
  EXPECT_EQ(kv.cause, "kv_too_long_context");
  ASSERT_FALSE(kv.fixes.empty());
  EXPECT_EQ(kv.fixes[0].change, "--contextsize 16384 (now 32768)");
}

// A Python program on llama-cpp-python: llama.cpp's failures are advised as the Llama class's
// arguments, not llama-server's flags.
TEST(Diagnose, LlamaCppPythonFailuresInItsArguments) {
  const Diagnosis d = DiagnoseText(
      "llama_new_context_with_model: n_ctx      = 32768\n"
      "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4096.00 MiB on device 0: cudaMalloc "
      "failed: out of memory\n"
      "llama_kv_cache_init: failed to allocate buffer for kv cache\n"
      "Traceback (most recent call last):\n"
      "  File \"/home/u/.venv/lib/python3.11/site-packages/llama_cpp/_internals.py\", line 264, in "
      "__init__\n"
      "    raise ValueError(\"Failed to create llama_context\")\n"
      "ValueError: Failed to create llama_context\n");
  EXPECT_EQ(d.engine, "llama-cpp-python");
  EXPECT_EQ(d.stage, "kv_cache");
  EXPECT_EQ(d.cause, "kv_too_long_context");
  ASSERT_FALSE(d.fixes.empty());
  EXPECT_EQ(d.fixes[0].change, "Llama(..., n_ctx=16384) (now 32768)");
  for (const auto& fix : d.fixes) EXPECT_EQ(fix.change.find("-c "), std::string::npos);
  // The context full while decoding ("llama_decode returned 1"): a larger n_ctx.
  const Diagnosis full = DiagnoseText(
      "llama_new_context_with_model: n_ctx      = 2048\n"
      "RuntimeError: llama_decode returned 1\n");
  EXPECT_EQ(full.engine, "llama-cpp-python");
  ASSERT_FALSE(full.fixes.empty());
  EXPECT_EQ(full.fixes[0].change, "Llama(..., n_ctx=4096)");
}

// The report says two instances of vLLM shared the GPU: the other instance's memory is the
// cause of the KV cache the second found no room for; without those words, the budget's.
TEST(Diagnose, AnotherInstanceOnTheGpuIsTheOtherProcess) {
  const std::string error =
      "ERROR 03-05 13:46:50 core.py:291] ValueError: No available memory for the cache blocks. "
      "Try increasing `gpu_memory_utilization` when initializing the engine.\n";
  const Diagnosis two = DiagnoseText(
      "We start two instances on the same GPU, each with --gpu-memory-utilization 0.4; the "
      "second one exits:\n" + error);
  EXPECT_EQ(two.stage, "kv_cache");
  EXPECT_EQ(two.cause, "other_process");
  ASSERT_FALSE(two.fixes.empty());
  EXPECT_NE(two.fixes[0].change.find("start the second instance"), std::string::npos);
  const Diagnosis zh = DiagnoseText(
      "\xe5\x90\x8c\xe4\xb8\x80\xe5\xbc\xa0\xe5\x8d\xa1\xe5\x90\x8c\xe6\x97\xb6"
      "\xe5\x90\xaf\xe5\x8a\xa8 2 \xe4\xb8\xaa vLLM\n" + error);
  EXPECT_EQ(zh.cause, "other_process");
  EXPECT_EQ(DiagnoseText(error).cause, "kv_no_memory");
  EXPECT_EQ(DiagnoseText("The second time I ran it, it failed.\n" + error).cause,
            "kv_no_memory");
}

// HQQ's prepare_for_inference repacking for the torchao int4 backend: the load's repack copy,
// advised in HQQ's own call.
TEST(Diagnose, HqqBackendRepackIsTheLoadsCopy) {
  const Diagnosis d = DiagnoseText(
      "Traceback (most recent call last):\n"
      "  File \"/home/u/run.py\", line 82, in <module>\n"
      "    prepare_for_inference(model, backend=\"torchao_int4\")\n"
      "  File \"/env/lib/python3.10/site-packages/hqq/utils/patching.py\", line 87, in "
      "prepare_for_inference\n"
      "    patch_linearlayers(model, patch_hqq_to_aoint4)\n"
      "  File \"/env/lib/python3.10/site-packages/hqq/backends/torchao.py\", line 320, in "
      "patch_hqq_to_aoint4\n"
      "    hqq_aoint4_layer.initialize_with_hqq_quants(\n"
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 224.00 MiB. GPU 0 has a "
      "total capacity of 39.39 GiB of which 203.06 MiB is free.\n");
  EXPECT_EQ(d.stage, "load");
  EXPECT_EQ(d.cause, "dequantized_copy");
  ASSERT_FALSE(d.fixes.empty());
  EXPECT_NE(d.fixes[0].change.find("prepare_for_inference"), std::string::npos);
  for (const auto& fix : d.fixes) {
    EXPECT_EQ(fix.change.find("--tensor-parallel"), std::string::npos);
  }
}

// Pieces of two messages a report keeps alone: vLLM's max-length check's last clause quoted in
// prose, and ggml-cuda's allocation failure's tail on a line of its own.
TEST(Diagnose, LoneEndsOfEngineMessages) {
  const Diagnosis vllm = DiagnoseText(
      "- fp16 cannot serve a 32k request (vLLM refuses with \"estimated maximum model length is "
      "25968\"); fp8 reaches ~52k.\n");
  EXPECT_EQ(vllm.engine, "vllm");
  EXPECT_EQ(vllm.stage, "kv_cache");
  EXPECT_EQ(vllm.cause, "kv_too_long_context");
  const Diagnosis ggml = DiagnoseText(
      "NvMapMemAllocInternalTagged: error 12\ncudaMalloc failed: out of memory\n");
  EXPECT_TRUE(ggml.found);
  EXPECT_EQ(ggml.engine, "llama.cpp");
  // Inside Ollama's runner message it stays the runner's.
  EXPECT_EQ(DiagnoseText("Error: llama runner process has terminated: cudaMalloc failed: out of "
                         "memory\n")
                .engine,
            "ollama");
}

// ggml-cuda's old check reflowed over three lines ("CUDA error 2 at" / the path / "out of
// memory") is still the allocation failure.
TEST(Diagnose, OldGgmlCudaCheckOverThreeLines) {
  const Diagnosis d = DiagnoseText(
      "CUDA error 2 at\n"
      "/go/src/github.com/jmorganca/ollama/llm/llama.cpp/ggml/ggml-cuda.cu:4856:\n"
      "out of memory\n");
  EXPECT_TRUE(d.found);
  EXPECT_EQ(d.cause, "weights_too_large");
  EXPECT_FALSE(DiagnoseText("ggml-cuda.cu:4856: all good\nout of memory? no\n").cause ==
               "weights_too_large");
}

// The same old check after a completion's timings (or llama-cpp-python's prefix-match line): the
// device pool growing while a later request decodes, not the weights; before any request it
// stays the weights' buffer.
TEST(Diagnose, OldGgmlCudaCheckAfterARequestIsTheComputePool) {
  const std::string check =
      "CUDA error 2 at /tmp/pip-install-q1w2e3/llama-cpp-python_0a1b2c3d/vendor/llama.cpp/"
      "ggml-cuda.cu:7110: out of memory\n"
      "current device: 0\n";
  const Diagnosis served = DiagnoseText(
      "llama_print_timings:        load time =     812.40 ms\n"
      "llama_print_timings:       total time =   14230.11 ms\n"
      "Llama.generate: prefix-match hit\n" +
      check);
  EXPECT_EQ(served.engine, "llama-cpp-python");
  EXPECT_EQ(served.stage, "runtime");
  EXPECT_EQ(served.cause, "compute_buffer");
  EXPECT_NE(served.stage_evidence.find("furthest milestone"), std::string::npos);
  const Diagnosis cold = DiagnoseText(check);
  EXPECT_EQ(cold.stage, "load");
  EXPECT_EQ(cold.cause, "weights_too_large");
  // Newer builds print the same timings as llama_perf_context_print.
  EXPECT_EQ(DiagnoseText("llama_perf_context_print:        load time =     812.40 ms\n" + check)
                .cause,
            "compute_buffer");
}

// vLLM V0 preempting by swap with the CPU swap space full: the KV cache held too many sequences.
TEST(Diagnose, VllmSwapSpaceExhausted) {
  const Diagnosis d = DiagnoseText(
      "(WorkerDict pid=111417)     raise RuntimeError(\n"
      "(WorkerDict pid=111417) RuntimeError: Aborted due to the lack of CPU swap space. Please "
      "increase the swap space to avoid this error.\n");
  EXPECT_EQ(d.engine, "vllm");
  EXPECT_EQ(d.stage, "runtime");
  EXPECT_EQ(d.cause, "kv_too_many_sequences");
  bool swap = false;
  for (const auto& fix : d.fixes) swap = swap || fix.change.find("--swap-space") == 0;
  EXPECT_TRUE(swap);
}

// SGLang's memory saver failing to map the memory back for resume_memory_occupation; and 0.5's
// KV pools built in _init_pools.
TEST(Diagnose, SglangMemorySaverAndInitPools) {
  const Diagnosis resume = DiagnoseText(
      "(SGLangHttpServer pid=250977) [torch_memory_saver.cpp] CUresult error: 2 (out of memory) "
      "file=csrc/utils.h func=cu_mem_create line=194\n"
      "(WorkerDict pid=209740) WARNING:2025-11-28 16:00:45,396:Async request to "
      "resume_memory_occupation timed out (attempt 1)\n");
  EXPECT_EQ(resume.stage, "runtime");
  EXPECT_EQ(resume.cause, "other_process");
  const Diagnosis pools = DiagnoseText(
      "Scheduler hit an exception during server startup\n"
      "File \".../model_runner_kv_cache_mixin.py\", line 790, in _init_pools\n"
      "  self.token_to_kv_pool = pool_cls(...)\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 484.00 MiB.\n");
  EXPECT_EQ(pools.stage, "kv_cache");
}

// llama.cpp's Metal buffer over the device's largest (2023) is the weights'; a kill pasted as
// Markdown inline code ("`Killed`") is the OOM killer's, also behind a kubectl prefix.
TEST(Diagnose, MetalBufferMaximumAndInlineCodeKill) {
  const Diagnosis metal = DiagnoseText(
      "ggml_metal_add_buffer: buffer 'data' size 9763717120 is larger than buffer maximum of "
      "8589934592\nllama_init_from_file: failed to add buffer\n");
  EXPECT_EQ(metal.stage, "load");
  EXPECT_EQ(metal.cause, "weights_too_large");
  for (const char* prefix : {"", "[pod/llm-7d9f/llm] "}) {
    const Diagnosis killed = DiagnoseText(
        std::string(prefix) +
        "`Loading checkpoint shards:   0%|          | 0/2 [00:00<?, ?it/s]`\n" + prefix +
        "`Killed`\n");
    EXPECT_EQ(killed.cause, "host_memory") << prefix;
  }
}

// transformers refusing a device map with every module on the disk (max_memory too small for one
// layer): a load failure in memory's words, with the max_memory fix first.
TEST(Diagnose, WholeModelOffloadedToDisk) {
  const Diagnosis d = DiagnoseText(
      "Traceback (most recent call last):\n"
      "  File \"run.py\", line 5, in <module>\n"
      "    model = AutoModelForCausalLM.from_pretrained(name, device_map=\"auto\", "
      "max_memory={0: \"10GiB\", \"cpu\": \"20GiB\"})\n"
      "ValueError: You are trying to offload the whole model to the disk. Please use the "
      "`disk_offload` function instead.\n");
  EXPECT_EQ(d.stage, "load");
  EXPECT_EQ(d.cause, "weights_too_large");
  ASSERT_FALSE(d.fixes.empty());
  EXPECT_EQ(d.fixes[0].change.rfind("max_memory", 0), 0u);
}

// SGLang's rank labels ("[... TP3]") on its own lines and a launcher's "[rank0]: " on every line
// of the same rank's traceback name one process twice: one rank, not two (facts.cc counts the
// ranks of each naming scheme apart), so the Transformers backend at TP 1 is an unquantized
// fallback, not an unsharded slice.
TEST(Diagnose, RankSchemesAreCountedApart) {
  const Diagnosis d = DiagnoseText(
      "[rank0]: [2026-02-26 06:25:15 TP3] Using Transformers backend.\n"
      "[rank0]: [2026-02-26 06:25:15 TP3] Scheduler hit an exception: Traceback (most recent "
      "call last):\n"
      "[rank0]:   File \"/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py\", "
      "line 889, in load_model\n"
      "[rank0]:     self.model = self.loader.load_model(\n"
      "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 12.00 GiB. GPU 3 "
      "has a total capacity of 287.98 GiB of which 3.11 GiB is free.\n");
  EXPECT_EQ(d.stage, "load");
  EXPECT_EQ(d.cause, "fp16_fallback");
}

// Hugging Face's SageMaker deployment code names the container (TGI), the model, the shards and
// the instance, whose GPU gives the card: a 70B model at 16 bits on one A10G cannot have got
// past its load. With SM_NUM_GPUS left out, the instance's GPUs count (ml.g5.48xlarge: 8 x
// 22.06 GiB holds the same model), and 'HF_MODEL_QUANTIZE' leaves the name's bits unread.
TEST(Diagnose, SageMakerDeploymentNamesTheCard) {
  const std::string oom = "torch.cuda.OutOfMemoryError: CUDA out of memory.\n";
  const std::string code =
      "image_uri=get_huggingface_llm_image_uri(\"huggingface\",version=\"1.4.2\"),\n"
      "  'HF_MODEL_ID':'defog/sqlcoder-70b-alpha',\n";
  const Diagnosis d = DiagnoseText(oom + code + "  'SM_NUM_GPUS': json.dumps(1)\n" +
                                   "instance_type=\"ml.g5.2xlarge\",\n");
  EXPECT_EQ(d.engine, "tgi");
  EXPECT_EQ(d.stage, "load");
  EXPECT_EQ(d.cause, "weights_too_large");
  EXPECT_NE(d.summary.find("22.06 GiB"), std::string::npos) << d.summary;
  ASSERT_FALSE(d.fixes.empty());
  EXPECT_EQ(d.fixes[0].change, "'SM_NUM_GPUS': json.dumps(8) on an instance with 8 such GPUs");
  const Diagnosis eight = DiagnoseText(oom + code + "instance_type=\"ml.g5.48xlarge\",\n");
  EXPECT_EQ(eight.engine, "tgi");
  EXPECT_NE(eight.stage, "load") << eight.stage_evidence;
  const Diagnosis quantized = DiagnoseText(oom + code + "  'HF_MODEL_QUANTIZE': 'awq',\n" +
                                           "  'SM_NUM_GPUS': json.dumps(1)\n" +
                                           "instance_type=\"ml.g5.2xlarge\",\n");
  EXPECT_EQ(quantized.cause == "weights_too_large" &&
                quantized.summary.find("name says") != std::string::npos,
            false)
      << quantized.summary;
  // An instance type that is no GPU family's reads nothing.
  const Diagnosis cpu = DiagnoseText(oom + code + "instance_type=\"ml.m5.2xlarge\",\n");
  EXPECT_NE(cpu.stage, "load");
}

// TGI's warm-up raises its own error from the CUDA one in every release ("raise
// RuntimeError(...) from e"): an excerpt cut before that message still shows Python's chain.
TEST(Diagnose, TgiWarmupChainedError) {
  const std::string oom =
      "torch.cuda.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of "
      "memory)\nCurrently allocated : 20.61 GiB\nRequested : 172.00 MiB\n";
  const std::string tgi =
      "image_uri=get_huggingface_llm_image_uri(\"huggingface\",version=\"0.9.3\"),\n";
  const Diagnosis d = DiagnoseText(
      oom + "The above exception was the direct cause of the following exception:\n" + tgi);
  EXPECT_EQ(d.stage, "profile") << d.stage_evidence;
  EXPECT_EQ(d.cause, "activation_peak");
  // A paste that lost its line ends holds the chain on the failure's own line, after it.
  std::string flat = oom + "The above exception was the direct cause of the following exception:";
  std::replace(flat.begin(), flat.end(), '\n', ' ');
  EXPECT_EQ(DiagnoseText(flat + "\n" + tgi).stage, "profile");
  // The chain before the failure, or in another engine's log, says nothing of TGI's warm-up.
  const Diagnosis before = DiagnoseText(
      "The above exception was the direct cause of the following exception:\n" + oom + tgi);
  EXPECT_NE(before.stage, "profile");
  const Diagnosis plain =
      DiagnoseText(oom + "The above exception was the direct cause of the following exception:\n");
  EXPECT_NE(plain.stage, "profile");
}

// SGLang sizes its request-to-token pool and KV pool from the context length before serving:
// one allocation larger than the card, in a log that never reached its graphs or serving, is
// one of them at a context of millions of tokens; once serving, it is not.
TEST(Diagnose, SglangAllocationLargerThanTheCardIsAPool) {
  const std::string launch =
      "python3 -m sglang.launch_server --model meta-llama/Llama-4-Scout-17B-16E-Instruct --tp 8\n";
  const std::string oom =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 80.04 GiB. GPU 3 has a "
      "total capacity of 79.10 GiB of which 20.08 GiB is free.\n";
  const Diagnosis d = DiagnoseText(oom + launch);
  EXPECT_EQ(d.engine, "sglang");
  EXPECT_EQ(d.stage, "kv_cache") << d.stage_evidence;
  EXPECT_EQ(d.cause, "kv_too_long_context");
  ASSERT_FALSE(d.fixes.empty());
  EXPECT_EQ(d.fixes[0].change, "--context-length lower");
  const Diagnosis small = DiagnoseText(
      launch + "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.04 GiB. GPU 3 "
               "has a total capacity of 79.10 GiB of which 1.08 GiB is free.\n");
  EXPECT_NE(small.stage, "kv_cache");
}

// vLLM's CUDA-graph memory estimate (profile_cudagraph_memory, 0.21+) captures trial graphs in
// the profile, before the KV cache: its frame outranks the capture frames under it, and so do a
// report's words for it; the engine's own notice about the estimate is not them.
TEST(Diagnose, VllmGraphEstimateIsTheProfile) {
  const std::string oom =
      "(EngineCore pid=81) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 16.84 "
      "GiB. GPU 0 has a total capacity of 31.36 GiB of which 15.02 GiB is free.\n";
  const Diagnosis d = DiagnoseText(
      "(EngineCore pid=81)   File \"/usr/local/lib/python3.12/site-packages/vllm/v1/worker/"
      "gpu_worker.py\", line 352, in determine_available_memory\n"
      "(EngineCore pid=81)   File \"/usr/local/lib/python3.12/site-packages/vllm/v1/worker/"
      "gpu_model_runner.py\", line 5901, in profile_cudagraph_memory\n"
      "(EngineCore pid=81)   File \"/usr/local/lib/python3.12/site-packages/vllm/v1/worker/"
      "gpu_model_runner.py\", line 5702, in _capture_cudagraphs\n" + oom);
  EXPECT_EQ(d.stage, "profile") << d.stage_evidence;
  EXPECT_EQ(d.cause, "cudagraph_capture");
  ASSERT_FALSE(d.fixes.empty());
  EXPECT_EQ(d.fixes[0].change, "--enforce-eager");
  const Diagnosis words = DiagnoseText(
      "At start-up, vLLM's CUDA-graph\nmemory-profiling step tries to allocate a large buffer:\n" +
      oom);
  EXPECT_EQ(words.stage, "profile") << words.stage_evidence;
  EXPECT_EQ(words.cause, "cudagraph_capture");
  const Diagnosis notice = DiagnoseText(
      "(EngineCore pid=81) INFO 05-02 13:35:05 [gpu_worker.py:470] In v0.19, CUDA graph memory "
      "profiling will be enabled by default (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1)\n" + oom);
  EXPECT_NE(notice.cause, "cudagraph_capture");
}

// SGLang's and TGI's memory messages read from their sources (managers/tp_worker.py,
// schedule_batch.py retract_decode, managers/utils.py validate_input_length, disaggregation/,
// memory_pool.py, memory_pool_host.py, entrypoints/engine.py; TGI's router/src/main.rs before
// 2.1), each as the engine prints it, with the stage and cause its code implies.
TEST(Diagnose, SglangAndTgiPoolMessages) {
  const std::string exc = "[2025-10-14 09:12:27 TP0] Scheduler hit an exception: Traceback (most "
                          "recent call last):\n";
  const std::vector<Expected> cases = {
      {exc + "AssertionError: Memory pool size is too small\n", "kv_cache", "kv_no_memory"},
      {exc + "AssertionError: max_running_request is zero\n", "kv_cache", "kv_no_memory"},
      {exc + "ValueError: SWA pool (512 tokens) cannot hold even one request: the prefill "
             "admission floor is sliding_window_size (4096) + page_size (1).\n",
       "kv_cache", "kv_no_memory"},
      {"[2025-12-09 10:30:10 TP0] retract_decode: aborted last request 3c1f due to OOM\n",
       "runtime", "kv_too_long_context"},
      {exc + "ValueError: Failed to retract any request. No space left for only one request.\n",
       "runtime", "kv_too_long_context"},
      {"{\"object\":\"error\",\"message\":\"Input length (98304 tokens) exceeds the maximum "
       "allowed length (77690 tokens). Use a shorter input or enable --allow-auto-truncate.\"}\n",
       "runtime", "kv_too_long_context"},
      {"[2025-12-09 10:40:17 TP0] Request 7f2a exceeds the maximum number of tokens: 131000 > "
       "77696\n",
       "runtime", "kv_too_long_context"},
      {exc + "AssertionError: Not enough space for mamba cache, try to increase "
             "--max-mamba-cache-size.\n",
       "runtime", "kv_too_many_sequences"},
      {"[2025-11-02 08:01:12 TP0] decode out of memory happened, #retracted_reqs: 3, "
       "#new_token_ratio: 0.4000 -> 0.6000\n",
       "runtime", "kv_too_many_sequences"},
      {exc + "AssertionError: KV cache is full! There is a bug in memory estimation.\n", "runtime",
       "kv_too_many_sequences"},
      {exc + "AssertionError: The host memory should be larger than the device memory with the "
             "current protocol\n",
       "kv_cache", "host_memory"},
      {"[2026-04-09 11:03:08 TP0] Load weight begin. avail mem=78.06 GB\n"
       "RuntimeError: Rank 2 scheduler died during initialization (exit code: -9). If exit code "
       "is -9 (SIGKILL), a common cause is the OS OOM killer.\n",
       "load", "host_memory"},
      {"2024-05-14T09:12:20.014403Z  INFO text_generation_router: router/src/main.rs:317: "
       "Warming up model\n"
       "Error: ArgumentValidation(\"`max_total_tokens` must be <= `max_batch_total_tokens`. "
       "Given: 32000 and 24336\")\n",
       "kv_cache", "kv_too_long_context"},
      {exc + "RuntimeError: Not enough GPU memory for hybrid (mamba/linear-attention) state "
             "cache. Computed max_mamba_cache_size=0 (total_rest_memory=1.20 GB).\n",
       "kv_cache", "kv_no_memory"},
      {exc + "RuntimeError: SWA pool cap (524288 tokens, 61.50 GiB) leaves no room for the full "
             "KV pool within the available 58.20 GiB. Reduce --max-running-requests.\n",
       "kv_cache", "kv_no_memory"},
      {exc + "RuntimeError: int8 mamba checkpoint pool needs ~6.40GB but only 2.10GB HBM is "
             "free. Lower --int8-mamba-ckpt-size (currently 4096) or --mem-fraction-static.\n",
       "kv_cache", "kv_no_memory"},
      {exc + "ValueError: Not enough host memory for DSA indexer hierarchical cache. Requesting "
             "48.00 GB but only have 20.50 GB free.\n",
       "kv_cache", "host_memory"},
      {exc + "RuntimeError: Capture prefill CUDA graph failed: CUDA out of memory. Tried to "
             "allocate 4.00 GiB.\n",
       "cudagraph", "cudagraph_capture"},
  };
  ExpectEach(cases);
  // The input check's limit is the smaller of the context and the pool: the pool is the fix.
  const Diagnosis input = DiagnoseText(
      "[2025-12-09 10:21:50] server_args=ServerArgs(model_path='m', mem_fraction_static=0.8, "
      "tp_size=1)\n" +
      cases[5].log);
  ASSERT_FALSE(input.fixes.empty());
  EXPECT_EQ(input.fixes[0].change, "--mem-fraction-static 0.85 (from 0.8)");
  // SGLang's FlashInfer autotuning (model_runner.py kernel_warmup, 0.5), in its own flags.
  const Diagnosis tune = DiagnoseText(
      "[2026-01-15 07:44:02] server_args=ServerArgs(model_path='m', mem_fraction_static=0.9)\n"
      "  File \"/sgl-workspace/sglang/python/sglang/srt/model_executor/model_runner.py\", line "
      "1968, in kernel_warmup\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.41 GiB.\n");
  EXPECT_EQ(tune.stage, "warmup");
  EXPECT_EQ(tune.cause, "kernel_warmup");
  ASSERT_FALSE(tune.fixes.empty());
  EXPECT_EQ(tune.fixes[0].change, "--disable-flashinfer-autotune");
  // The weights over the GPUs at tensor parallel 4: twice as many.
  const Diagnosis tp4 = DiagnoseText(
      "[2025-10-14 09:12:03] server_args=ServerArgs(model_path='m', tp_size=4, "
      "mem_fraction_static=0.88)\n"
      "[2025-10-14 09:12:12 TP0] Load weight begin. avail mem=78.27 GB\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB.\n");
  EXPECT_EQ(tp4.cause, "weights_too_large");
  ASSERT_FALSE(tp4.fixes.empty());
  EXPECT_EQ(tp4.fixes[0].change, "--tp 8 (or more GPUs)");
  // TGI's router refusing its arguments before any warm-up is no memory failure.
  const Diagnosis arguments = DiagnoseText(
      "Error: ArgumentValidation(\"`max_total_tokens` must be <= `max_batch_total_tokens`. "
      "Given: 32000 and 16000\")\n");
  EXPECT_NE(arguments.cause, "kv_too_long_context");
  EXPECT_NE(arguments.cause, "activation_peak");
}

// vLLM's refusals and pool messages read from its sources (v1/engine/processor.py,
// renderers/params.py, entrypoints/utils.py, core/scheduler.py, core/block_manager_v1.py,
// core/evictor.py, v1/core/block_pool.py, v1/engine/utils.py, layers/linear.py), as it prints
// them, with the stage and cause its code implies.
TEST(Diagnose, VllmRefusalAndPoolMessages) {
  const std::vector<Expected> cases = {
      {"ValueError: Prompt length of 9000 is longer than the maximum model length of 8192.\n",
       "runtime", "kv_too_long_context"},
      {"ValueError: The prompt (total length 9000) is too long to fit into the model (context "
       "length 8192). Make sure that `max_model_len` is no smaller than the number of text "
       "tokens plus multimodal tokens.\n",
       "runtime", "kv_too_long_context"},
      {"vllm.exceptions.VLLMValidationError: You passed 17000 input tokens and requested 1000 "
       "output tokens. However, the model's context length is only 16384, resulting in a maximum "
       "input length of 15384. Please reduce the length of the input messages.\n",
       "runtime", "kv_too_long_context"},
      {"ERROR 03-12 10:00:01 [serving.py:211] The engine prompt length 40000 exceeds the "
       "max_model_len 32768. Please reduce prompt.\n",
       "runtime", "kv_too_long_context"},
      {"ValueError: Input length (50000) exceeds model's maximum context length (40960).\n",
       "runtime", "kv_too_long_context"},
      {"WARNING 09-10 12:00:00 scheduler.py:1089] Input prompt (12000 tokens) is too long and "
       "exceeds limit of 8192\n",
       "runtime", "kv_too_long_context"},
      {"WARNING 09-10 12:00:00 scheduler.py:1089] Input prompt (40000 tokens) + lookahead slots "
       "(0) is too long and exceeds the capacity of block_manager\n",
       "runtime", "kv_too_long_context"},
      {"ValueError: Out of memory! No free blocks are available.\n", "runtime",
       "kv_too_many_sequences"},
      {"ERROR 06-12 10:15:11 [core.py:517] ValueError: Cannot get 26 free blocks from the pool\n",
       "runtime", "kv_too_many_sequences"},
      {"RuntimeError: Engine core initialization failed. See root cause above. Failed core "
       "proc(s): {'EngineCore_DP0': -9}\n",
       "load", "host_memory"},
      {"RuntimeError: Failed to create unquantized linear weights. This may be caused by "
       "insufficient memory to allocate the weight.\n",
       "load", "weights_too_large"},
  };
  ExpectEach(cases);
  // A prompt larger than the whole KV cache: the cache, not max_model_len, is the fix.
  const Diagnosis capacity = DiagnoseText(cases[6].log);
  ASSERT_FALSE(capacity.fixes.empty());
  EXPECT_EQ(capacity.fixes.back().change,
            "a shorter prompt (or --max-model-len no longer than the KV cache's tokens)");
  // An item over the encoder cache; the swap space's pinned allocation; a prefetch over RAM.
  const Diagnosis encoder = DiagnoseText(
      "{\"error\":{\"message\":\"The decoder prompt contains a(n) image item with 18225 "
      "embedding tokens, which exceeds the pre-allocated encoder cache size 16384. Please reduce "
      "the input size\"}}\n");
  EXPECT_EQ(encoder.stage, "runtime");
  EXPECT_EQ(encoder.cause, "multimodal_encoder");
  const Diagnosis swap = DiagnoseText(
      "WARNING 12-18 14:00:01 config.py:1260] Possibly too large swap space. 64.00 GiB out of "
      "the 125.71 GiB total CPU memory is allocated for the swap space.\n"
      "ERROR 12-18 14:01:25 engine.py:366]   File \"/usr/vllm/worker/cache_engine.py\", line "
      "68, in __init__\n"
      "ERROR 12-18 14:01:25 engine.py:366]     self.cpu_cache = self._allocate_kv_cache("
      "self.num_cpu_blocks, \"cpu\")\n"
      "ERROR 12-18 14:01:25 engine.py:366] RuntimeError: CUDA error: out of memory\n");
  EXPECT_EQ(swap.stage, "kv_cache");
  EXPECT_EQ(swap.cause, "host_memory");
  ASSERT_FALSE(swap.fixes.empty());
  EXPECT_EQ(swap.fixes[0].change, "--swap-space 50");
  const Diagnosis prefetch = DiagnoseText(
      "(Worker_TP0 pid=402) INFO 05-14 08:41:10 [gpu_model_runner.py:4890] Starting to load "
      "model /mnt/models/DeepSeek-V3.1...\n"
      "(Worker_TP0 pid=402) WARNING 05-14 08:41:12 [weight_utils.py:962] "
      "safetensors_load_strategy='prefetch' was explicitly specified, but checkpoint total size "
      "(641.58 GiB) exceeds 90% of available RAM (503.20 GiB). This may cause out-of-memory "
      "errors.\n"
      "(EngineCore pid=240) ERROR 05-14 08:47:30 [multiproc_executor.py:273] Worker proc "
      "VllmWorker-0 died unexpectedly, shutting down executor.\n");
  EXPECT_EQ(prefetch.stage, "load");
  EXPECT_EQ(prefetch.cause, "host_memory");
  // The CPU backend's checks of host memory, in its own settings.
  const Diagnosis cpu = DiagnoseText(
      "(EngineCore pid=88) ERROR 05-02 10:12:21 [core.py:1121] ValueError: Available memory on "
      "node 0 (21.37/62.71 GiB) on startup is less than desired CPU memory utilization (0.92, "
      "57.69 GiB).\n");
  EXPECT_EQ(cpu.stage, "startup");
  EXPECT_EQ(cpu.cause, "host_memory");
  const Diagnosis cpu_kv = DiagnoseText(
      "(EngineCore pid=91) ERROR 05-02 10:31:40 [core.py:1121] ValueError: Available memory on "
      "node 0 (9.80/62.71 GiB) on kv cache allocation is less than requested memory for kv "
      "(38.52/57.69 GiB). Reduce CPU memory used by other processes.\n");
  EXPECT_EQ(cpu_kv.stage, "kv_cache");
  ASSERT_FALSE(cpu_kv.fixes.empty());
  EXPECT_EQ(cpu_kv.fixes[0].change,
            "VLLM_CPU_KVCACHE_SPACE lower (GiB; or --kv-cache-memory-bytes)");
  // A core process that exited with another status is no OOM kill.
  EXPECT_NE(DiagnoseText("RuntimeError: Engine core initialization failed. See root cause above. "
                         "Failed core proc(s): {'EngineCore_DP0': 1}\n")
                .cause,
            "host_memory");
}

// llama.cpp's and Ollama's memory messages read from their sources (ggml-cuda.cu and
// common.cuh, tools/server, llama-mmap.cpp, ggml-cpu's buffer types, Ollama's runner), as they
// print them, with the stage and cause their code implies.
TEST(Diagnose, GgmlMessagesFromTheSource) {
  const std::vector<Expected> cases = {
      {"common_init_from_params: warming up the model with an empty run - please wait ...\n"
       "CUDA error: the resource allocation failed\n"
       "  current device: 0, in function cublas_handle at /llama.cpp/ggml/src/ggml-cuda/"
       "common.cuh:1215\n",
       "warmup", "compute_buffer"},
      {"srv  update_slots: Compute error. i = 0, n_batch = 2048, ret = -2\n", "runtime",
       "compute_buffer"},
      {"srv  update_slots: failed to decode the batch: KV cache is full - try increasing it via "
       "the context size, i = 0, n_batch = 1, ret = 1\n",
       "runtime", "kv_too_long_context"},
      {"CUDA error: out of memory\n"
       "  current device: 0, in function ggml_cuda_graph_update_executable at /llama.cpp/ggml/"
       "src/ggml-cuda/ggml-cuda.cu:2790\n",
       "runtime", "cudagraph_capture"},
      {"llama_model_load: error loading model: mmap failed: Cannot allocate memory\n", "load",
       "host_memory"},
      {"llama_model_load: error loading model: unable to allocate CPU_REPACK buffer\n", "load",
       "host_memory"},
      {"ggml_cuda_init: failed to initialize CUDA: out of memory\n", "startup", "other_process"},
      {"time=2025-10-01T08:00:04.802Z level=ERROR source=runner.go:455 msg=\"failed to decode "
       "batch\" error=\"llama_decode failed with code -2\"\n",
       "runtime", "compute_buffer"},
      {"/llama.cpp/ggml/src/ggml-vulkan/ggml-vulkan.cpp:6034: Requested preallocation size is "
       "too large\n",
       "runtime", "compute_buffer"},
      {"llama_adapter_lora_init: failed to apply lora adapter: failed to allocate buffer for "
       "lora adapter\n",
       "load", "weights_too_large"},
      {"CUDA error: out of memory\n"
       "  current device: 1, in function ggml_backend_cuda_split_buffer_init_tensor at "
       "/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu:1041\n",
       "load", "weights_too_large"},
      {"time=2026-07-20T08:01:12.337-07:00 level=INFO source=client.go:212 msg=\"starting mlx "
       "runner subprocess\" model=qwen3.6:35b-a3b-mlx\n"
       "Error: 500 Internal Server Error: mlx runner failed: [metal::malloc] Attempting to "
       "allocate 25769803776 bytes which is greater than the maximum allowed buffer size of "
       "22906503168 bytes. (exit: exit status 1)\n",
       "load", "weights_too_large"},
  };
  ExpectEach(cases);
  // ggml-cuda's graphs are turned off by its environment variable.
  const Diagnosis graph = DiagnoseText(cases[3].log);
  ASSERT_FALSE(graph.fixes.empty());
  EXPECT_EQ(graph.fixes[0].change, "GGML_CUDA_DISABLE_GRAPHS=1");
  // Another CUDA error under the same function is no allocation failure.
  EXPECT_NE(DiagnoseText("CUDA error: an illegal memory access was encountered\n"
                         "  current device: 0, in function cublas_handle at common.cuh:1215\n")
                .cause,
            "compute_buffer");
}

// The reporter's words that the first question ran and the second failed, in English or
// Chinese, place a full card's failure while running, not while the weights were placed.
TEST(Diagnose, SecondQuestionWordsPlaceRuntime) {
  const std::string oom =
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 126.00 MiB (GPU 0; "
      "14.76 GiB total capacity; 13.93 GiB already allocated; 113.75 MiB free; 13.96 GiB "
      "reserved in total by PyTorch)\n";
  EXPECT_EQ(DiagnoseText(oom).stage, "load");
  EXPECT_EQ(DiagnoseText("The first answer is fine, the second question fails:\n" + oom).stage,
            "runtime");
  // "Only one question can be asked; asking the second one gives:"
  EXPECT_EQ(DiagnoseText("\xe5\x8f\xaa\xe8\x83\xbd\xe9\x97\xae\xe4\xb8\x80\xe4\xb8\xaa"
                         "\xe9\x97\xae\xe9\xa2\x98\xef\xbc\x8c\xe9\x97\xae\xe7\xac\xac"
                         "\xe4\xba\x8c\xe4\xb8\xaa\xe5\xb0\xb1\xe5\x87\xba\xe7\x8e\xb0"
                         "\xef\xbc\x9a\n" + oom)
                .stage,
            "runtime");
  EXPECT_EQ(DiagnoseText("It worked fine for an hour, then:\n" + oom).stage, "runtime");
}

}  // namespace
// V0's model runner re-raises an execute_model failure with the input it dumped
// (model_runner_base.py dump_input_when_exception): vLLM's, its execute_model on the stack. In a
// program that builds the offline engine and runs nothing, that forward is the start-up's
// profile run; with a generate call after it, serving's.
TEST(Diagnose, V0DumpedInputAndOfflineConstructor) {
  const std::string oom =
      "[rank0]: torch.OutOfMemoryError: Error in model execution (input dumped to "
      "/tmp/err_execute_model_input_20241010-154829.pkl): CUDA out of memory. Tried to allocate "
      "2.00 GiB. GPU 0 has a total capacity of 23.69 GiB of which 979.69 MiB is free.\n";
  const Diagnosis bare = DiagnoseText(oom);
  EXPECT_EQ(bare.engine, "vllm");
  EXPECT_EQ(bare.stage, "runtime") << bare.stage_evidence;
  const std::string built = "llm = LLM(\n    model=model_path,\n    max_model_len=2048\n)\n\n";
  const Diagnosis start = DiagnoseText(built + oom);
  EXPECT_EQ(start.stage, "profile") << start.stage_evidence;
  EXPECT_NE(start.stage_evidence.find("offline engine (line 1"), std::string::npos)
      << start.stage_evidence;
  const Diagnosis served =
      DiagnoseText(built + "outputs = llm.generate(prompts, sampling_params)\n" + oom);
  EXPECT_EQ(served.stage, "runtime") << served.stage_evidence;
  // Another library's class whose name ends in LLM is not vLLM's constructor.
  const Diagnosis other = DiagnoseText("llm = ChatLLM(\n    model=model_path\n)\n" + oom);
  EXPECT_EQ(other.stage, "runtime") << other.stage_evidence;
}

// ggml-vulkan makes its descriptor pools while a graph is computed: vk::OutOfDeviceMemoryError
// from createDescriptorPool after the warm-up's line is the warm-up's compute, not a buffer.
TEST(Diagnose, VulkanDescriptorPoolIsAGraphsCompute) {
  const std::string context =
      "llama_kv_cache_init:    Vulkan0 KV buffer size =   640.00 MiB\n"
      "llama_new_context_with_model:    Vulkan0 compute buffer size =   152.00 MiB\n"
      "common_init_from_params: warming up the model with an empty run - please wait ... "
      "(--no-warmup to disable)\n"
      "terminate called after throwing an instance of 'vk::OutOfDeviceMemoryError'\n";
  const Diagnosis d = DiagnoseText(
      context + "  what():  vk::Device::createDescriptorPool: ErrorOutOfDeviceMemory\n");
  EXPECT_EQ(d.stage, "warmup") << d.stage_evidence;
  const Diagnosis buffer =
      DiagnoseText(context + "  what():  vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n");
  EXPECT_NE(buffer.stage, "warmup") << buffer.stage_evidence;
}

// Shapes a paste gives a notebook or a shell session: bash's job report inside a line whose
// line ends were lost, IPython 8's frame header reflowed after its path, and a coloured
// traceback laid on one line.
TEST(Diagnose, NotebookAndShellShapes) {
  const Diagnosis killed = DiagnoseText(
      "python3 Python 3.8.5 (default, Jan 27 2021, 15:41:15) >>> from transformers import "
      "pipeline >>> generator = pipeline('text-generation', model='EleutherAI/gpt-neo-2.7B', "
      "device=0) [2]+  Killed                  python3 Killed\n");
  EXPECT_EQ(killed.cause, "host_memory") << killed.stage_evidence;
  EXPECT_FALSE(DiagnoseText("The job was [2]+ killed by me on purpose.\n").found);
  const std::string oom =
      "OutOfMemoryError: CUDA out of memory. Tried to allocate 960.00 MiB. GPU 0 has a total "
      "capacity of 14.58 GiB of which 289.75 MiB is free.\n";
  const Diagnosis reflowed = DiagnoseText(
      "File\n"
      "~/envs/llm/lib/python3.10/site-packages/awq/models/base.py:93,\n"
      "in BaseAWQForCausalLM.quantize(self, tokenizer,\n"
      "quant_config)\n" + oom);
  EXPECT_EQ(reflowed.stage, "load") << reflowed.stage_evidence;
  EXPECT_NE(reflowed.stage_evidence.find("quantize"), std::string::npos)
      << reflowed.stage_evidence;
  const Diagnosis coloured = DiagnoseText(
      "\x1b[0;31mOutOfMemoryError\x1b[0m Traceback (most recent call last) Cell "
      "\x1b[0;32mIn[2], line 2\x1b[0m File \x1b[0;32m~/envs/llm/lib/python3.10/site-packages/"
      "awq/models/base.py:93\x1b[0m, in \x1b[0;36mBaseAWQForCausalLM.quantize\x1b[0;34m(self)"
      "\x1b[0m \x1b[0;31mOutOfMemoryError\x1b[0m: CUDA out of memory. Tried to allocate 960.00 "
      "MiB. GPU 0 has a total capacity of 14.58 GiB of which 289.75 MiB is free.\n");
  EXPECT_EQ(coloured.stage, "load") << coloured.stage_evidence;
  // Each frame of the coloured line is parted into a record of its own.
  std::istringstream two(
      "\x1b[0;31mOutOfMemoryError\x1b[0m Traceback (most recent call last) File "
      "\x1b[0;32m~/envs/llm/lib/python3.10/site-packages/transformers/modeling_utils.py:3780"
      "\x1b[0m, in \x1b[0;36mPreTrainedModel.from_pretrained\x1b[0;34m(cls)\x1b[0m File "
      "\x1b[0;32m~/envs/llm/lib/python3.10/site-packages/optimum/gptq/quantizer.py:500\x1b[0m, "
      "in \x1b[0;36mGPTQQuantizer.quantize_model\x1b[0;34m(self)\x1b[0m "
      "\x1b[0;31mOutOfMemoryError\x1b[0m: CUDA out of memory. Tried to allocate 1024.00 MiB.\n");
  const auto scan = ScanLog(two);
  ASSERT_TRUE(scan.ok());
  std::vector<std::string> frames;
  for (const LogEvent& e : scan->events) {
    if (e.kind == EventKind::kFrame) frames.push_back(e.text);
  }
  EXPECT_EQ(frames, (std::vector<std::string>{"from_pretrained (modeling_utils.py)",
                                              "quantize_model (quantizer.py)"}));
}

// A layer-by-layer quantizer past its first layer whose traceback a cut excerpt stops before
// its error: the layers' weights fitted one at a time, so the calibration work is what failed;
// the same run killed by the host is the host's memory.
TEST(Diagnose, QuantizerPastFirstLayerWithACutTraceback) {
  const std::string layers =
      "model.layers.78, samples: 128, max gpu memory: 18.10 GB\n"
      "model.layers.79, samples: 128, max gpu memory: 18.10 GB\n";
  const Diagnosis cut = DiagnoseText(layers +
                                     "Traceback (most recent call last):\n"
                                     "  File \"/opt/py38/bin/lmdeploy\", line 11, in <module>\n");
  EXPECT_EQ(cut.stage, "load") << cut.stage_evidence;
  EXPECT_EQ(cut.cause, "activation_peak");
  const Diagnosis killed = DiagnoseText(layers + "Killed\n");
  EXPECT_EQ(killed.cause, "host_memory");
}

// ExLlama's own CUDA check: exllamav3's "GPU assert" in its graph.cu is a decode batch's CUDA
// graph capture.
TEST(Diagnose, ExllamaGpuAssert) {
  const Diagnosis d =
      DiagnoseText("GPU assert: out of memory exllamav3_ext/graph.cu 51\n");
  EXPECT_EQ(d.stage, "cudagraph") << d.stage_evidence;
  EXPECT_EQ(d.cause, "cudagraph_capture");
  EXPECT_TRUE(DiagnoseText("GPU assert: out of memory exllamav3_ext/gemm.cu 120\n").found);
}

// Ollama's scheduler line for a runner the kernel killed, reflowed by a paste between the
// message and the signal: still the host's memory, at the load.
TEST(Diagnose, OllamaRunnerKilledAcrossAReflow) {
  const std::string whole =
      "time=2025-03-12T12:14:22.015Z level=ERROR source=sched.go:456 msg=\"error loading llama "
      "server\" error=\"llama runner process has terminated: signal: killed\"\n";
  const std::string reflowed =
      "time=2025-03-12T12:14:22.015Z level=ERROR source=sched.go:456 msg=\"error\n"
      "loading llama server\" error=\"llama runner process has terminated:\n"
      "signal: killed\"\n";
  for (const std::string& log : {whole, reflowed}) {
    const Diagnosis d = DiagnoseText(log);
    EXPECT_EQ(d.stage, "load") << log;
    EXPECT_EQ(d.cause, "host_memory") << log;
  }
  // The signal alone, with no runner's message before it, is no runner's death.
  EXPECT_NE(DiagnoseText("loading the model\nsignal: killed\"\n").cause, "host_memory");
}

// LMCache's host buffer of KV chunks full, in a vLLM run: host memory while serving, with
// LMCache's own setting as the fix; also with the message reflowed after the tensor it names.
TEST(Diagnose, LmcacheHostBufferFull) {
  const std::string one =
      "[2025-05-19 18:08:26,176] LMCache WARNING: Failed to allocate memory for "
      "tensor(torch.Size([256, 2, 1024]), torch.bfloat16) because no memory is available "
      "(memory_management.py:576:lmcache.experimental.memory_management)\n"
      "ERROR 05-19 18:08:26 [dump_input.py:68] Dumping input data\n";
  const std::string reflowed =
      "[2025-05-19 18:08:26,176] LMCache WARNING: Failed to allocate memory for\n"
      "tensor(torch.Size([256, 2, 1024]), torch.bfloat16) because no memory is\n"
      "available\n"
      "(memory_management.py:576:lmcache.experimental.memory_management)\n";
  for (const std::string& log : {one, reflowed}) {
    const Diagnosis d = DiagnoseText(log);
    EXPECT_EQ(d.stage, "runtime") << log;
    EXPECT_EQ(d.cause, "host_memory") << log;
    ASSERT_FALSE(d.fixes.empty()) << log;
    EXPECT_NE(d.fixes.front().change.find("LMCACHE_MAX_LOCAL_CPU_SIZE"), std::string::npos);
  }
  // The same words from another program are not LMCache's buffer.
  EXPECT_NE(DiagnoseText("WARNING: queue full because no memory is available\n").cause,
            "host_memory");
}

// CUDA's unnamed check in a llama.cpp log: before anything of the model was read it is the
// card already held (startup); after the context's compute buffers and before anything was
// served it is the warm-up decode.
TEST(Diagnose, GgmlUnnamedCudaCheckBeforeLoadAndAfterContext) {
  const std::string devices =
      "ggml_init_cublas: found 2 CUDA devices:\n"
      "  Device 0: GeForce RTX 2070, compute capability 7.5, VMM: yes\n"
      "  Device 1: GeForce RTX 2070, compute capability 7.5, VMM: yes\n"
      "CUDA error: out of memory\n"
      "  current device: 0, in fu\n";
  const std::string ollama =
      "time=2024-03-07T10:19:15.234+03:00 level=INFO source=dyn_ext_server.go:150 "
      "msg=\"Initializing llama server\"\n" + devices;
  const std::string banner =
      "main: build = 1233 (98311c4)\nmain: seed  = 1694804999\n\n"
      "CUDA error 2 at /data/llama.cpp/ggml-cuda.cu:5509: out of memory\ncurrent device: 0\n";
  for (const std::string& log : {ollama, banner}) {
    const Diagnosis d = DiagnoseText(log);
    EXPECT_EQ(d.stage, "startup") << log;
    EXPECT_EQ(d.cause, "other_process") << log;
  }
  // A program that embeds llama.cpp may silence the loader's lines and keep the device list: no
  // sign the load had not begun.
  EXPECT_NE(DiagnoseText("tabby_1  | ggml_init_cublas: found 1 CUDA devices:\n" + devices).stage,
            "startup");
  // The loader's lines before it: the load had begun.
  EXPECT_NE(DiagnoseText("main: build = 1233 (98311c4)\n"
                         "llama_model_loader: loaded meta data with 24 key-value pairs and 291 "
                         "tensors from /m/x.gguf (version GGUF V3 (latest))\n"
                         "CUDA error 2 at /data/llama.cpp/ggml-cuda.cu:5509: out of memory\n")
                .stage,
            "startup");
  const std::string context =
      "llama_new_context_with_model: n_ctx      = 4096\n"
      "llama_kv_cache_init:      CUDA0 KV buffer size =  2048.00 MiB\n"
      "llama_new_context_with_model:      CUDA0 compute buffer size =   296.02 MiB\n"
      "llama_new_context_with_model: graph splits (measure): 3\n";
  const Diagnosis warm = DiagnoseText(context + "CUDA error: out of memory\n  cu\n");
  EXPECT_EQ(warm.stage, "warmup") << warm.stage_evidence;
  EXPECT_EQ(warm.cause, "compute_buffer");
  EXPECT_NE(DiagnoseText(context + "slot launch_slot_: id  0 | task 0 | processing task\n"
                                   "CUDA error: out of memory\n  cu\n")
                .stage,
            "warmup");
}

}  // namespace vramfit

namespace vramfit {
namespace {

// llama.cpp's library lines with no llama.cpp tool's own (no build banner, no llama-server or
// llama-cli line) are what Ollama's runner prints too: the fixes add Ollama's names for the
// same settings; with a tool's line they do not. A context fix never raises the log's n_ctx.
TEST(Diagnose, BareGgmlLinesAlsoSpeakOllama) {
  const std::string context =
      "llama_new_context_with_model: n_ctx      = 2048\n"
      "llama_kv_cache_init:      CUDA0 KV buffer size =  2048.00 MiB\n"
      "llama_new_context_with_model:      CUDA0 compute buffer size =   296.02 MiB\n"
      "llama_new_context_with_model: graph splits (measure): 3\n"
      "CUDA error: out of memory\n  cu\n";
  auto fixes = [](const Diagnosis& d) {
    std::string all;
    for (const Fix& f : d.fixes) all += f.change + "\n";
    return all;
  };
  const std::string bare = fixes(DiagnoseText(context));
  EXPECT_NE(bare.find("num_ctx"), std::string::npos) << bare;
  EXPECT_EQ(bare.find("-c 4096"), std::string::npos) << bare;
  EXPECT_NE(bare.find("-c 1024 (from n_ctx 2048)"), std::string::npos) << bare;
  for (const std::string tool : {"main: build = 1233 (98311c4)\n",
                                 "$ ./llama-server -m model.gguf -ngl 99 -c 2048\n",
                                 "system_info: n_threads = 8 / 16 | AVX = 1 | AVX2 = 1 |\n"}) {
    const std::string with_tool = fixes(DiagnoseText(tool + context));
    EXPECT_EQ(with_tool.find("num_ctx"), std::string::npos) << tool << with_tool;
  }
}

}  // namespace
}  // namespace vramfit

namespace vramfit {
namespace {

// ggml's and Ollama's memory messages read from a catalog of their sources across builds and
// releases, each alone as the program prints it, with the stage and cause its code implies.
TEST(Diagnose, GgmlMessagesAcrossBuilds) {
  const std::vector<Expected> cases = {
      {"ggml_calloc: failed to allocate 1024.00 MB\n", "load", "host_memory"},
      {"/llama.cpp/ggml/src/ggml-alloc.c:257: graph allocation: failed to reserve memory\n",
       "profile", "compute_buffer"},
      {"ggml_backend_sched_alloc_splits: failed to allocate graph\n", "runtime",
       "compute_buffer"},
      {"process_ubatch: failed to allocate graph\n", "runtime", "compute_buffer"},
      {"llama_decode: failed to decode, ret = -2\n", "runtime", "compute_buffer"},
      {"ggml_vulkan: Memory allocation of size 2147483648 failed.\n", "runtime",
       "compute_buffer"},
      {"ggml_metal_add_buffer: error: failed to allocate 'data            ' buffer, size = "
       "36864.00 MB\n",
       "load", "weights_too_large"},
      {"ggml_backend_sycl_buffer_type_alloc_buffer: can't malloc 8589934592 Bytes memory on "
       "device\n",
       "load", "weights_too_large"},
      {"llama_model_load: error loading model: failed to allocate buffer\n", "load",
       "weights_too_large"},
      {"llama_kv_cache_init: failed to allocate memory for kv cache\n", "kv_cache",
       "kv_too_long_context"},
      {"llama_init_from_model: failed to initialize the context: failed to initialize "
       "self-attention cache\n",
       "kv_cache", "kv_too_long_context"},
      {"time=2026-07-01T10:15:02.113Z level=ERROR source=llama_server.go:1023 "
       "msg=\"llama-server terminated\" error=\"signal: killed\" exit=\"signal: killed\"\n",
       "load", "host_memory"},
  };
  ExpectEach(cases);
  // The scheduler's note that it retries with a new reservation is no failure.
  EXPECT_FALSE(
      DiagnoseText("ggml_backend_sched_alloc_splits: failed to allocate graph, reserving\n").found);
}

}  // namespace
}  // namespace vramfit

namespace vramfit {
namespace {

// Messages and frames read from the engines' sources (each the phase its code runs in), in the
// shapes a paste keeps them: a traceback's last frames, or a few milestones before the error.
TEST(Diagnose, SourceMessagesAcrossEngines) {
  const std::string torch_oom =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 112.00 MiB. GPU 0 has a "
      "total capacity of 39.38 GiB of which 71.50 MiB is free. Including non-PyTorch memory, "
      "this process has 39.30 GiB memory in use. Of the allocated memory 38.10 GiB is allocated "
      "by PyTorch, and 0.70 GiB is reserved by PyTorch but unallocated.\n";
  const std::vector<Expected> cases = {
      // AutoGPTQ 0.7 repacking every layer for Marlin at load; GPTQModel's Marlin post_init.
      {"  File \"/env/lib/python3.11/site-packages/auto_gptq/modeling/_base.py\", line 1196, "
       "in from_quantized\n"
       "    model = convert_to_marlin(model, quant_linear_class, quantize_config, repack=True)\n"
       "  File \"/env/lib/python3.11/site-packages/auto_gptq/utils/marlin_utils.py\", line 166, "
       "in convert_to_marlin\n"
       "    marlin_repacked_weight = autogptq_marlin_cuda.gptq_repack(module.qweight)\n" +
           torch_oom,
       "load", "dequantized_copy"},
      {"  File \"/usr/lib/python3/dist-packages/gptqmodel/utils/model.py\", line 835, in "
       "gptqmodel_post_init\n    submodule.post_init()\n"
       "  File \"/usr/lib/python3/dist-packages/gptqmodel/nn_modules/qlinear/marlin.py\", line "
       "385, in post_init\n"
       "    marlin_qweight = gptqmodel_marlin_kernels.gptq_marlin_repack(\n" +
           torch_oom,
       "load", "dequantized_copy"},
      // AutoAWQ's fused cache reallocated for a larger batch while generating.
      {"  File \"/usr/lib/python3/dist-packages/awq/modules/fused/attn.py\", line 211, in "
       "forward\n    self.cache.increase_batch_size(bsz)\n"
       "  File \"/usr/lib/python3/dist-packages/awq/modules/fused/cache.py\", line 69, in "
       "increase_batch_size\n    self.v = torch.zeros(\n" +
           torch_oom,
       "runtime", "static_cache"},
      // SGLang's image processor on the GPU in the tokenizer manager, beside the scheduler.
      {"  File \"/sgl-workspace/sglang/python/sglang/srt/managers/tokenizer_manager.py\", line "
       "712, in _tokenize_one_request\n"
       "  File \"/sgl-workspace/sglang/python/sglang/srt/multimodal/processors/base_processor.py"
       "\", line 269, in process_mm_data\n    result = processor.__call__(\n"
       "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 5.62 GiB. GPU 0 has a "
       "total capacity of 79.19 GiB of which 3.25 GiB is free. Process 1201 has 69.02 GiB "
       "memory in use. Process 1290 has 6.92 GiB memory in use. Of the allocated memory 5.70 "
       "GiB is allocated by PyTorch, and 12.00 MiB is reserved by PyTorch but unallocated.\n",
       "runtime", "multimodal_encoder"},
      // The Qwen2-VL family's vision SDPA (transformers' VisionSdpaAttention) while training.
      {"   attn_output = F.scaled_dot_product_attention(q, k, v, attention_mask, dropout_p=0.0)\n"
       "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.11 GiB. GPU 0 has a "
       "total capacity of 31.36 GiB of which 5.76 GiB is free. Including non-PyTorch memory, "
       "this process has 25.58 GiB memory in use. Of the allocated memory 24.90 GiB is "
       "allocated by PyTorch, and 260.00 MiB is reserved by PyTorch but unallocated.\n",
       "runtime", "multimodal_encoder"},
      // SGLang's FlashInfer autotune after the pool, before the graphs.
      {"[2025-12-21 09:12:05 TP2] Memory pool end. avail mem=6.37 GB\n"
       "[2025-12-21 09:12:05 TP2] Running FlashInfer autotune...\n" +
           torch_oom,
       "warmup", "kernel_warmup"},
      // SGLang's DeepGEMM JIT warm-up buffers, on a GEMM shape's first use.
      {"  File \"/sgl-workspace/sglang/python/sglang/srt/layers/deep_gemm_wrapper/"
       "compile_utils.py\", line 134, in _compile_deep_gemm_one_type_all\n"
       "    executor = _BaseWarmupExecutor.create(\n" +
           torch_oom,
       "warmup", "kernel_warmup"},
      // SGLang's LoRA buffers: LoRA's own init_memory_pool, after the weights, before the pool.
      {"  File \"/usr/lib/python3/dist-packages/sglang/srt/model_executor/model_runner.py\", "
       "line 485, in initialize\n    self.init_lora_manager()\n"
       "  File \"/usr/lib/python3/dist-packages/sglang/srt/lora/lora_manager.py\", line 120, in "
       "init_memory_pool\n    self.memory_pool.init_buffers(base_model)\n" +
           torch_oom,
       "load", "weights_too_large"},
      // vLLM 0.4's executor runs the profile under _init_cache, which also allocates the cache.
      {"INFO 04-03 08:12:45 model_runner.py:104] Loading model weights took 14.9595 GB\n"
       "  File \"/usr/lib/python3/dist-packages/vllm/executor/gpu_executor.py\", line 80, in "
       "_init_cache\n"
       "  File \"/usr/lib/python3/dist-packages/vllm/worker/worker.py\", line 131, in "
       "profile_num_available_blocks\n"
       "  File \"/usr/lib/python3/dist-packages/vllm/worker/model_runner.py\", line 742, in "
       "profile_run\n" +
           torch_oom,
       "profile", "activation_peak"},
      // vLLM 0.1-0.3: the profile named on the code line under _init_cache.
      {"  File \"/opt/vllm/vllm/engine/llm_engine.py\", line 114, in _init_cache\n"
       "    num_blocks = self._run_workers(\n" +
           torch_oom,
       "profile", "activation_peak"},
      // vLLM's single DeepGEMM bar (tqdm desc "DeepGEMM warmup") after the KV cache.
      {"(Worker_TP3 pid=908) INFO 04-12 07:55:03 [gpu_worker.py:436] Available KV cache memory: "
       "9.87 GiB\n"
       "DeepGEMM warmup:  37%|###7      | 2110/5702 [00:41<01:10, 51.02it/s]\n"
       "(Worker_TP3 pid=908) ERROR 04-12 07:55:47 [multiproc_executor.py:949] " +
           torch_oom,
       "warmup", "kernel_warmup"},
      // A capture's reserved-but-unallocated memory is the graphs' pool, not fragmentation.
      {"Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):  45%|####4     | 30/67 "
       "[00:07<00:08,  4.21it/s]\n"
       "(EngineCore_0 pid=3390) ERROR 08-22 07:51:22 [core.py:708] torch.OutOfMemoryError: CUDA "
       "out of memory. Tried to allocate 130.00 MiB. GPU 0 has a total capacity of 23.55 GiB of "
       "which 69.31 MiB is free. Including non-PyTorch memory, this process has 23.47 GiB memory "
       "in use. Of the allocated memory 21.98 GiB is allocated by PyTorch, and 1.04 GiB is "
       "reserved by PyTorch but unallocated.\n",
       "cudagraph", "cudagraph_capture"},
      // The GGML-era loader printed n_ctx among the hyperparameters, before any tensor.
      {"llama_model_load_internal: n_ctx      = 4096\n"
       "llama_model_load_internal: offloading k cache to GPU\n"
       "llama_model_load_internal: offloaded 83/83 layers to GPU\n"
       "llama_model_load_internal: total VRAM used: 41779 MB\n"
       "..................................\n"
       "CUDA error 2 at ggml-cuda.cu:6142: out of memory\n",
       "load", "weights_too_large"},
      // 2023's lower-case KV total: what fails after it is the context's scratch/compute.
      {"llama_new_context_with_model: kv self size  = 1600.00 MB\n"
       "llama_new_context_with_model: compute buffer total size = 1113.88 MB\n"
       "llama_new_context_with_model: VRAM scratch buffer: 1107.50 MB\n"
       "CUDA error 2 at ggml-cuda.cu:7778: out of memory\n",
       "profile", "compute_buffer"},
      // The KV cache's shift of its keys when the context is full: only while decoding.
      {"update: failed to allocate compute graph for K-shift\n", "runtime", "compute_buffer"},
      // 2023's Metal buffers named by what they hold: the KV cache's, the weights'.
      {"llama_new_context_with_model: kv self size  = 25600.00 MB\n"
       "ggml_metal_add_buffer: allocated 'data            ' buffer, size =  7501.98 MB, ( "
       "7502.48 / 21845.34)\n"
       "ggml_metal_add_buffer: error: failed to allocate 'kv              ' buffer, size = "
       "25602.00 MB\nllama_new_context_with_model: failed to add buffer\n",
       "kv_cache", "kv_too_long_context"},
      {"llama_new_context_with_model: kv self size  =  640.00 MB\n"
       "ggml_metal_add_buffer: error: failed to allocate 'data            ' buffer, size = "
       "17845.53 MB\nllama_new_context_with_model: failed to add buffer\n",
       "load", "weights_too_large"},
      // A slot serving a prompt, then a backend's pool or preallocated buffers fail.
      {"slot update_slots: id  0 | task 3 | kv cache rm [0, end)\n"
       "alloc: can't allocate 1130364928 Bytes of memory on device/GPU\n",
       "runtime", "compute_buffer"},
      {"slot update_slots: id  0 | task 0 | kv cache rm [0, end)\n"
       "ggml_vulkan: Device memory allocation of size 1207959552 failed.\n"
       "ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n",
       "runtime", "compute_buffer"},
      // KoboldCpp processing a request's prompt: the pool grows with the batch.
      {"Processing Prompt [BLAS] (1536 / 13804 tokens)\n"
       "CUDA error 2 at D:\\a\\koboldcpp\\koboldcpp\\ggml-cuda.cu:6344: out of memory\n"
       "current device: 0\n",
       "runtime", "compute_buffer"},
      // Ollama's runner up and serving: a later device allocation is a batch's, whatever size.
      {"llama_kv_cache_init:      CUDA0 KV buffer size =  1024.00 MiB\n"
       "time=2024-08-27T12:00:12.338Z level=INFO source=server.go:632 msg=\"llama runner "
       "started in 3.27 seconds\"\n"
       "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 1024.00 MiB on device 0: "
       "cudaMalloc failed: out of memory\n",
       "runtime", "compute_buffer"},
      // Ollama's new engine allocating a layer's cache as it first stores into it.
      {"ggml_backend_cuda_buffer_type_alloc_buffer: allocating 256.00 MiB on device 0: "
       "cudaMalloc failed: out of memory\n"
       "panic: unable to allocate 256.0 MiB from device CUDA0 for new tensor\n\n"
       "goroutine 13 [running]:\n"
       "github.com/ollama/ollama/ml/backend/ggml.(*Context).Zeros(0xc0005a2000, 0x1)\n"
       "github.com/ollama/ollama/kvcache.(*Causal).Put(0xc0001d6000, {0x562b8ad7d3a8, "
       "0xc0005a2000})\n"
       "github.com/ollama/ollama/runner/ollamarunner.(*Server).reserveWorstCaseGraph("
       "0xc0004c6000)\n",
       "kv_cache", "kv_too_long_context"},
      // AUTOMATIC1111's split attention refusing an image too large for the free memory.
      {"RuntimeError: Not enough memory, use lower resolution (max approx. 1152x1152). Need: "
       "1.9GB free, Have:1.2GB free\n",
       "runtime", "activation_peak"},
      // PyTorch's listing message from a program whose allocator holds nothing yet, others
      // holding the card, with no traceback: its first request.
      {"Loading pipeline components...: 100%|##########| 7/7 [00:05<00:00,  1.36it/s]\n"
       "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a "
       "total capacity of 23.55 GiB of which 17.06 MiB is free. Process 48213 has 23.25 GiB "
       "memory in use. Including non-PyTorch memory, this process has 268.00 MiB memory in use. "
       "Of the allocated memory 0 bytes is allocated by PyTorch, and 0 bytes is reserved by "
       "PyTorch but unallocated.\n",
       "startup", "other_process"},
      // DeepSpeed building its ZeRO optimizer, before any step.
      {"[2025-02-27 05:31:12,660] [INFO] [logging.py:128:log_dist] [Rank 0] Creating "
       "torch.bfloat16 ZeRO stage 1 optimizer\n"
       "[2025-02-27 05:31:12,660] [INFO] [stage_1_and_2.py:151:__init__] CPU Offload: False\n" +
           torch_oom,
       "load", "weights_too_large"},
      // accelerate's FSDP2 preparation materialising every full parameter inside train().
      {"[rank3]:   File \"/env/lib/python3.12/site-packages/transformers/trainer.py\", line "
       "2240, in train\n"
       "[rank3]:   File \"/env/lib/python3.12/site-packages/accelerate/utils/fsdp_utils.py\", "
       "line 560, in fsdp2_prepare_model\n"
       "[rank3]:   File \"/env/lib/python3.12/site-packages/accelerate/utils/fsdp_utils.py\", "
       "line 453, in fsdp2_load_full_state_dict\n"
       "[rank3]:     full_tensor = torch.empty(sharded_param.size(), device=\"cuda\", "
       "dtype=sharded_param.dtype)\n[rank3]: " +
           torch_oom,
       "load", "unsharded_slice"},
      // CUDA's context could not be created at the process's first CUDA call.
      {"  File \"/env/lib/python3.10/site-packages/torch/cuda/__init__.py\", line 229, in "
       "_lazy_init\n    torch._C._cuda_init()\nRuntimeError: CUDA error: out of memory\n",
       "startup", "other_process"},
      // NCCL's communicator made eagerly by init_process_group, before anything was loaded.
      {"[rank1]:   File \"/env/lib/python3.11/site-packages/torch/distributed/"
       "distributed_c10d.py\", line 1520, in init_process_group\n"
       "[rank1]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/"
       "c10d/NCCLUtils.hpp:317, unhandled cuda error (run with NCCL_DEBUG=INFO for details)\n"
       "[rank1]: Last error:\n[rank1]: Cuda failure 'out of memory'\n",
       "startup", "other_process"},
  };
  ExpectEach(cases);
  // The SGLang processor's fix turns it off.
  std::string fixes;
  for (const Fix& f : DiagnoseText(cases[3].log).fixes) fixes += f.change + "\n";
  EXPECT_NE(fixes.find("--disable-fast-image-processor"), std::string::npos) << fixes;
}

}  // namespace
}  // namespace vramfit
