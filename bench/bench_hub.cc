// Reading a 160-shard repo from a mock Hub on loopback: vramfit's Hub source (in-process
// InspectModel, and the whole `vramfit inspect` process when its path is given) against a peer
// command run on the same mock (bench/hub-peer.sh runs @huggingface/hub's
// parseSafetensorsMetadata). Prints time, requests and bytes fetched / checkpoint size.
//
// Usage: vramfit_hub_bench [--vramfit PATH] [--peer "COMMAND"] [--runs N]
//   The peer command gets HF_ENDPOINT and HUB_REPO in its environment and prints one line,
//   "<milliseconds> <parameters>", measured inside itself.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "testutil/hollow.h"
#include "testutil/mock_hub.h"
#include "vramfit/inspect.h"
#include "vramfit/model.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kShards = 160;
// The Qwen3-MoE-shaped AWQ model of bench/bench_inspect.cc (256 experts, 48 layers).
constexpr const char* kConfig =
    R"({"architectures":["Qwen3MoeForCausalLM"],"model_type":"qwen3_moe",
      "hidden_size":2048,"intermediate_size":6144,"num_hidden_layers":48,"num_attention_heads":32,
      "num_key_value_heads":4,"head_dim":128,"vocab_size":151936,"tie_word_embeddings":false,
      "num_experts":256,"num_experts_per_tok":8,"moe_intermediate_size":768,"torch_dtype":"float16",
      "quantization_config":{"quant_method":"awq","bits":4,"group_size":128,"version":"gemm",
      "zero_point":true}})";

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Runs `cmd`, returns its first line of output and its wall time in ms.
std::string RunCommand(const std::string& cmd, double* ms) {
  const auto t0 = Clock::now();
  FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  if (p != nullptr) {
    char buf[4096];
    while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
    ::pclose(p);
  }
  *ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  return out.substr(0, out.find('\n'));
}

}  // namespace

int main(int argc, char** argv) {
  std::string vramfit_bin, peer;
  int runs = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--vramfit") vramfit_bin = argv[i + 1];
    if (a == "--peer") peer = argv[i + 1];
    if (a == "--runs") runs = std::max(1, std::atoi(argv[i + 1]));
  }
  // The fixture: config.json, the index and 160 hollow shards.
  auto spec = vramfit::ModelSpecFromConfigJson(kConfig, "bench config");
  auto synth = vramfit::SynthesizeTensors(*spec);
  std::vector<vramfit::testing::HollowTensor> tensors;
  for (const auto& t : synth->tensors) tensors.push_back({t.name, t.dtype, t.shape.ToVector()});
  const std::string root = vramfit::testing::MakeTempDir("hub-bench");
  const std::string dir = root + "/repo";
  fs::create_directories(dir);
  vramfit::testing::WriteHollowCheckpoint(dir, tensors, kShards);
  vramfit::testing::WriteText(dir + "/config.json", kConfig);
  uint64_t checkpoint = 0;
  for (const auto& e : fs::directory_iterator(dir)) checkpoint += e.file_size();

  vramfit::testing::MockHub hub;
  hub.AddRepo("bench/qwen3-moe-awq", dir);
  fmt::print("fixture: {} tensors in {} shards, {:.1f} GB checkpoint; mock Hub at {}\n",
             tensors.size(), kShards, checkpoint / 1e9, hub.endpoint());

  // The same files read locally, for reference.
  std::vector<double> local;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = Clock::now();
    auto inv = vramfit::InspectModel(dir, {});
    local.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (!inv.ok()) return 1;
  }
  fmt::print("local InspectModel of the same files: median {:.1f} ms of {} runs\n",
             Median(local), runs);

  // vramfit in-process: a fresh cache each run (and none at all), so every run fetches
  // everything.
  for (const bool cache : {false, true}) {
  std::vector<double> times;
  uint64_t bytes = 0, requests = 0, params = 0;
  for (int r = 0; r < runs; ++r) {
    vramfit::HubOptions o;
    o.endpoint = hub.endpoint();
    if (cache) o.cache_dir = fmt::format("{}/cache{}", root, r);
    vramfit::InspectOptions io;
    io.hub = o;
    const uint64_t b0 = hub.bytes_sent, q0 = hub.hub_requests;
    const auto t0 = Clock::now();
    auto inv = vramfit::InspectModel(*vramfit::ParseHubId("bench/qwen3-moe-awq"), io);
    times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (!inv.ok()) {
      fmt::print(stderr, "vramfit: {}\n", inv.status().message());
      return 1;
    }
    params = inv->parameters;
    bytes = hub.bytes_sent - b0;
    requests = hub.hub_requests - q0;
  }
  fmt::print("vramfit (in-process InspectModel, {}): median {:.1f} ms of {} runs; {} requests, "
             "{} bytes fetched = {:.6f}% of the checkpoint; {} parameters\n",
             cache ? "filling a fresh cache" : "no cache", Median(times), runs, requests, bytes,
             100.0 * bytes / checkpoint, params);
  }

  // The fetch alone: the commit and file list, config and index, and the 160 headers, with no
  // parsing beyond the 8-byte lengths (what the peer's network part does).
  {
    std::vector<std::string> shards;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() == ".safetensors") shards.push_back(e.path().filename());
    }
    std::vector<double> times;
    for (int r = 0; r < runs; ++r) {
      vramfit::HubOptions o;
      o.endpoint = hub.endpoint();
      const auto t0 = Clock::now();
      auto src = vramfit::OpenHubRepo(*vramfit::ParseHubId("bench/qwen3-moe-awq"), o);
      if (!src.ok() || !(*src)->PrefetchHeaders(shards).ok()) return 1;
      times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    fmt::print("vramfit fetch only (OpenHubRepo + PrefetchHeaders): median {:.1f} ms of {} runs\n",
               Median(times), runs);
  }

  if (!vramfit_bin.empty()) {
    std::vector<double> ptimes;
    for (int r = 0; r < runs; ++r) {
      double ms = 0;
      RunCommand(fmt::format("HF_ENDPOINT={} HF_HOME={}/proc{} {} inspect "
                             "bench/qwen3-moe-awq@main --json > /dev/null",
                             hub.endpoint(), root, r, vramfit_bin),
                 &ms);
      ptimes.push_back(ms);
    }
    fmt::print("vramfit (whole `vramfit inspect` process): median {:.1f} ms of {} runs\n",
               Median(ptimes), runs);
  }
  if (!peer.empty()) {
    std::vector<double> inner, outer;
    std::string line;
    uint64_t bytes = 0, requests = 0;
    for (int r = 0; r < runs; ++r) {
      const uint64_t b0 = hub.bytes_sent, q0 = hub.hub_requests;
      double ms = 0;
      line = RunCommand(fmt::format("HF_ENDPOINT={} HUB_REPO=bench/qwen3-moe-awq {}",
                                    hub.endpoint(), peer), &ms);
      outer.push_back(ms);
      inner.push_back(std::atof(line.c_str()));
      bytes = hub.bytes_sent - b0;
      requests = hub.hub_requests - q0;
    }
    fmt::print("peer: median {:.1f} ms inside the peer, {:.1f} ms as a process, of {} runs; "
               "{} requests, {} bytes fetched = {:.6f}% of the checkpoint; its output: {}\n",
               Median(inner), Median(outer), runs, requests, bytes, 100.0 * bytes / checkpoint,
               line);
  }
  std::error_code ec;
  fs::remove_all(root, ec);
  return 0;
}
