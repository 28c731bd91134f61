// Deploy programs in Python (script/python.cc): vLLM's LLM(...), a model class's
// from_pretrained/from_quantized and subprocess command lines read as engine commands, with
// names resolved through assignments, call sites and --env; hostile text refused with
// file:line.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "vramfit/script.h"

namespace vramfit {
namespace {

using Argv = std::vector<std::string>;

ScriptRead Read(std::string_view text, ScriptOptions options = {}) {
  auto r = ReadDeployScript(text, "deploy.py", options);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : ScriptRead{};
}

std::string Error(std::string_view text) {
  auto r = ReadDeployScript(text, "deploy.py", {});
  return r.ok() ? std::string() : r.status().message();
}

// The program starts exactly one engine command: where, which engine, and its argv.
void ExpectOne(const ScriptRead& r, std::string_view where, std::string_view engine,
               const Argv& argv) {
  ASSERT_EQ(r.invocations.size(), 1u);
  EXPECT_EQ(r.invocations[0].where, where);
  EXPECT_EQ(r.invocations[0].engine->name, engine);
  EXPECT_EQ(r.invocations[0].argv, argv);
}

// transformers' pipeline() of a generating task loads its model as from_pretrained does, with
// device_map, the dtype and model_kwargs (the gpt-oss and Llama 3.1 model cards' snippets);
// device=N puts the whole model on that GPU; other tasks and the CPU are not planned.
TEST(PythonScript, TextGenerationPipelineIsATransformersLoad) {
  ExpectOne(Read("import torch\nfrom transformers import pipeline\n"
                 "pipe = pipeline('text-generation', model='openai/gpt-oss-20b',\n"
                 "                torch_dtype='auto', device_map='auto')\n"),
            "deploy.py:3", "transformers",
            Argv{"transformers", "openai/gpt-oss-20b", "--torch-dtype", "auto", "--device-map",
                 "auto"});
  ExpectOne(Read("import torch, transformers\n"
                 "p = transformers.pipeline('text-generation', model='m',\n"
                 "    model_kwargs={'torch_dtype': torch.bfloat16, 'load_in_4bit': True},\n"
                 "    device=1, trust_remote_code=True)\n"),
            "deploy.py:2", "transformers",
            Argv{"transformers", "m", "--torch-dtype", "bfloat16", "--load-in-4bit",
                 "--device-map", "cuda:1"});
  EXPECT_TRUE(Read("from transformers import pipeline\n"
                   "pipeline('feature-extraction', model='m', device=0)\n").invocations.empty());
  const ScriptRead cpu = Read("from transformers import pipeline\n"
                              "pipeline(task='text-generation', model='m', device='cpu')\n");
  EXPECT_TRUE(cpu.invocations.empty());
  ASSERT_EQ(cpu.notes.size(), 1u);
  EXPECT_EQ(cpu.notes[0], "deploy.py:2: pipeline(device=cpu) runs on the CPU: not planned");
  EXPECT_NE(Error("from transformers import pipeline\npipeline('text-generation', model=m)\n"),
            "");
}

// A dict keyword is the flag's JSON; **kwargs of a dict the reader sees are keywords; a
// **kwargs it cannot see is named, never passed over.
TEST(PythonScript, VllmLlmDictsAndKwargs) {
  ExpectOne(Read("from vllm import LLM\n"
                 "opts = dict(max_model_len=8192, enforce_eager=True)\n"
                 "mm = {'image': 2, \"video\": 0}\n"
                 "llm = LLM('m', limit_mm_per_prompt=mm, **opts,\n"
                 "          speculative_config={'method': 'ngram', 'x': [1, None, False]})\n"),
            "deploy.py:4", "vllm",
            Argv{"vllm", "serve", "m", "--limit-mm-per-prompt", R"({"image":2,"video":0})",
                 "--max-model-len", "8192", "--enforce-eager", "--speculative-config",
                 R"({"method":"ngram","x":[1,null,false]})"});
  ExpectOne(Read("from transformers import AutoModelForCausalLM\n"
                 "kw = {'device_map': 'auto', 'load_in_4bit': True}\n"
                 "AutoModelForCausalLM.from_pretrained('m', **kw)\n"),
            "deploy.py:3", "transformers",
            Argv{"transformers", "m", "--device-map", "auto", "--load-in-4bit"});
  EXPECT_NE(Error("from transformers import AutoModel\nAutoModel.from_pretrained('m', **f())\n")
                .find("deploy.py:2: `f()`"),
            std::string::npos);
  EXPECT_EQ(Error("from vllm import LLM\nllm = LLM('m', **load())\n"),
            "deploy.py:2: `load()`, in the vLLM LLM(...) call of line 2 (set it in the script, "
            "or give its value with --env FILE)");
  EXPECT_NE(Error("import sys\nfrom vllm import LLM\nLLM('m', hf_overrides={'a': sys.argv[1]})\n")
                .find("deploy.py:3: `sys.argv[1]`"),
            std::string::npos);
}

// quantization_config=BitsAndBytesConfig(...) (inline or through a name) is the load it
// names, as load_in_4bit=True is; AwqConfig's fusing and FbgemmFp8Config have their flags;
// max_memory's dict is --max-memory's JSON; keys that change bytes and have no flag are named.
TEST(PythonScript, QuantizationConfigAndMaxMemoryAreFlags) {
  const ScriptRead r = Read(
      "import torch\n"
      "from transformers import AutoModelForCausalLM, BitsAndBytesConfig\n"
      "bnb = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16,\n"
      "                         bnb_4bit_quant_type='nf4', bnb_4bit_use_double_quant=True)\n"
      "m = AutoModelForCausalLM.from_pretrained('m', device_map='auto', quantization_config=bnb,\n"
      "                                         max_memory={0: '20GiB', 'cpu': '64GiB'})\n");
  ExpectOne(r, "deploy.py:5", "transformers",
            Argv{"transformers", "m", "--device-map", "auto", "--load-in-4bit", "--max-memory",
                 R"({"0":"20GiB","cpu":"64GiB"})"});
  ASSERT_EQ(r.notes.size(), 2u);  // and no generate() call read (python_generate_test.cc)
  EXPECT_EQ(r.notes[0], "deploy.py:5: AutoModelForCausalLM.from_pretrained: not modelled "
                        "(ignored): quantization_config.bnb_4bit_use_double_quant=");
  ExpectOne(Read("import transformers\n"
                 "transformers.AutoModelForCausalLM.from_pretrained('m', quantization_config="
                 "transformers.BitsAndBytesConfig(load_in_8bit=True))\n"),
            "deploy.py:2", "transformers", Argv{"transformers", "m", "--load-in-8bit"});
  ExpectOne(Read("from transformers import AutoModelForCausalLM, AwqConfig\n"
                 "q = AwqConfig(bits=4, do_fuse=True, fuse_max_seq_len=2048)\n"
                 "AutoModelForCausalLM.from_pretrained('m', quantization_config=q)\n"),
            "deploy.py:3", "transformers",
            Argv{"transformers", "m", "--do-fuse", "--fuse-max-seq-len", "2048"});
  ExpectOne(Read("from transformers import AutoModelForCausalLM, FbgemmFp8Config\n"
                 "AutoModelForCausalLM.from_pretrained('m', quantization_config=FbgemmFp8Config())"
                 "\n"),
            "deploy.py:2", "transformers",
            Argv{"transformers", "m", "--quantization", "fbgemm_fp8"});
}

TEST(PythonScript, VllmLlmKeywordsAreServeFlags) {
  const ScriptRead r = Read(
      "from vllm import LLM, SamplingParams\n"
      "MODEL = 'Qwen/Qwen3-8B'  # the Hub id\n"
      "llm = LLM(model=MODEL,\n"
      "          tensor_parallel_size=2, max_model_len=8192,\n"
      "          gpu_memory_utilization=0.85, enforce_eager=True, trust_remote_code=False,\n"
      "          quantization=None)\n"
      "out = llm.generate(['hi'], SamplingParams(max_tokens=16))\n");
  ExpectOne(r, "deploy.py:3", "vllm",
            {"vllm", "serve", "Qwen/Qwen3-8B", "--tensor-parallel-size", "2", "--max-model-len",
             "8192", "--gpu-memory-utilization", "0.85", "--enforce-eager"});
}

TEST(PythonScript, FromPretrainedThroughAFunctionsCallSite) {
  const ScriptRead r = Read(
      "import torch\n"
      "from transformers import AutoModelForCausalLM, AutoTokenizer\n"
      "def load(path, kind=\"auto\"):\n"
      "    tok = AutoTokenizer.from_pretrained(path)\n"
      "    model = AutoModelForCausalLM.from_pretrained(\n"
      "        path, device_map=\"auto\", torch_dtype=torch.float16,\n"
      "        low_cpu_mem_usage=True)\n"
      "    return model, tok\n"
      "\n"
      "if __name__ == \"__main__\":\n"
      "    PATH = \"/srv/qwen\"\n"
      "    load(PATH)\n");
  ExpectOne(r, "deploy.py:5", "transformers",
            {"transformers", "/srv/qwen", "--device-map", "auto", "--torch-dtype", "float16"});
  ASSERT_EQ(r.notes.size(), 2u);  // and no generate() call read (python_generate_test.cc)
  // low_cpu_mem_usage changes the CPU-side loading path only: read, no GPU memory effect.
  EXPECT_EQ(r.notes[0], "deploy.py:5: AutoModelForCausalLM.from_pretrained: read, no memory "
                        "effect: low_cpu_mem_usage=");
}

TEST(PythonScript, QuantizerLoadersInTwoBranchesAreOneLoad) {
  const ScriptRead r = Read(
      "def run(p, t):\n"
      "    if t == 'gptq':\n"
      "        m = AutoGPTQForCausalLM.from_quantized(p, device_map='cuda:0',\n"
      "                                               use_safetensors=True)\n"
      "    elif t == 'awq':\n"
      "        m = AutoAWQForCausalLM.from_quantized(quant_path=p, device_map='cuda:0')\n"
      "run('./awq-7b', 'awq')\n");
  ASSERT_EQ(r.invocations.size(), 1u);
  EXPECT_EQ(r.invocations[0].argv, (Argv{"transformers", "./awq-7b", "--device-map", "cuda:0"}));
  EXPECT_EQ(r.notes.back(),
            "deploy.py:6: the same transformers as deploy.py:3 (another branch); checked once");
}

TEST(PythonScript, SubprocessAndOsSystemCommandLines) {
  const ScriptRead r = Read(
      "import os, subprocess\n"
      "port = os.environ.get('PORT', '8000')\n"
      "subprocess.Popen(['python', '-m', 'vllm.entrypoints.openai.api_server',\n"
      "                  '--model', os.getenv('MODEL', 'Qwen/Qwen3-8B'), '--port', port])\n"
      "os.system(\"CUDA_VISIBLE_DEVICES=0 vllm serve Qwen/Qwen3-8B --max-model-len 4096\")\n"
      "subprocess.run(['nvidia-smi'])\n",
      ScriptOptions{{{"MODEL", "/srv/m"}}});
  ASSERT_EQ(r.invocations.size(), 2u);
  EXPECT_EQ(r.invocations[0].where, "deploy.py:3");
  // The program's environment (--env) is the command's: its variables come first.
  EXPECT_EQ(r.invocations[0].argv,
            (Argv{"MODEL=/srv/m", "python", "-m", "vllm.entrypoints.openai.api_server",
                  "--model", "/srv/m", "--port", "8000"}));
  EXPECT_EQ(r.invocations[1].where, "deploy.py:5");
  EXPECT_EQ(r.invocations[1].gpus_visible, 1);
}

TEST(PythonScript, UnknownValuesAndHostileText) {
  EXPECT_EQ(Error("def f(p):\n    LLM(model=p)\n"),
            "deploy.py:2: `p` is an argument of f(), and no call of f() passes it, in the vLLM "
            "LLM(...) call of line 2 (set it in the script, or give its value with --env FILE)");
  EXPECT_EQ(Error("m = input()\nAutoModelForCausalLM.from_pretrained(m)\n"),
            "deploy.py:2: `input()`, in the AutoModelForCausalLM.from_pretrained(...) call of "
            "line 2 (set it in the script, or give its value with --env FILE)");
  EXPECT_NE(Error("n = 3\nLLM(model=f\"org/m-{n}\")\n").find("deploy.py:2: the f-string"),
            std::string::npos);
  EXPECT_EQ(Error("x = 1\ns = '''never\nclosed\n"),
            "deploy.py:2: unterminated string ''' (opened here)");
  EXPECT_EQ(Error("LLM(model='a'\n"), "deploy.py:1: a bracket opened here is never closed");
  EXPECT_EQ(Error("x = 1)\n"), "deploy.py:1: unmatched ')'");
  EXPECT_EQ(Error(std::string("x = 1\ny = \0\n", 11)), "deploy.py:2: a NUL byte (not a text file)");
  EXPECT_EQ(Error(std::string(300, '(')), "deploy.py:1: brackets nested more than 200 deep");
  std::string many;
  for (int i = 1; i <= 1001; ++i) many += "LLM('m/x', max_model_len=" + std::to_string(i) + ")\n";
  EXPECT_EQ(Error(many), "deploy.py:1001: more than 1000 engine launches");
  // A name assigned to itself, through a parameter: bounded, not a hang.
  EXPECT_EQ(Error("def f(a):\n    f(a)\n    LLM(model=a)\nf(f)\n").empty(), false);
}

TEST(PythonScript, ShebangOrSuffixSelectsThePythonReader) {
  EXPECT_TRUE(IsPythonScript("#!/usr/bin/env python3\nprint(1)\n", "deploy"));
  EXPECT_TRUE(IsPythonScript("", "serve.py"));
  EXPECT_FALSE(IsPythonScript("#!/bin/bash\npython serve.py\n", "deploy.sh"));
  auto r = ReadDeployScript("#!/usr/bin/env python3\nfrom vllm import LLM\nLLM('m/x')\n",
                            "deploy", {});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->invocations.size(), 1u);
  EXPECT_EQ(r->invocations[0].argv, (Argv{"vllm", "serve", "m/x"}));
}

}  // namespace
}  // namespace vramfit
