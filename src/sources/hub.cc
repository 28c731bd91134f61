// The Hugging Face Hub as a ByteSource (vramfit/source.h): a repo at a revision is resolved to
// its commit and file list by the API, then config.json, the index and each safetensors
// header are fetched with HTTP range requests (http.h), never the weights. What was fetched is
// kept in a cache keyed by commit, so a later run (or an offline one) asks nothing again.
//
// URL forms, as huggingface_hub (constants.py, hf_api.py model_info, v0.30) writes them:
//   {endpoint}/api/models/{org}/{name}/revision/{revision}  -> {"sha": ..., "siblings":
//                                                              [{"rfilename": ...}, ...]}
//   {endpoint}/{org}/{name}/resolve/{commit}/{file}          -> the file (a redirect to a CDN
//                                                              for large ones)
// Errors carry the Hub's X-Error-Code (RepoNotFound, RevisionNotFound, EntryNotFound,
// GatedRepo), read as huggingface_hub's hf_raise_for_status (utils/_http.py) reads it.
//
// Cache layout under HubOptions::cache_dir (configs and headers only, a few MB a model):
//   models--{org}--{name}/refs/{revision, percent-encoded}   the commit it resolved to
//   models--{org}--{name}/{commit}/listing                   the repo's files, one a line
//   models--{org}--{name}/{commit}/f-{file, percent-encoded} 8-byte LE file size, then the
//                                                            file's first bytes (a whole
//                                                            config, or 8 + N header bytes)
#include <fmt/format.h>
#include <simdjson.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

#include "core/text.h"
#include "sources/checkpoint.h"
#include "sources/gguf_read.h"
#include "sources/http.h"
#include "vramfit/catalog.h"
#include "vramfit/formats.h"
#include "vramfit/source.h"

namespace vramfit {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kMaxApiBytes = uint64_t{32} << 20;
// All headers of one repo held at once (a 160-shard MoE holds ~10 MB).
constexpr uint64_t kMaxHubHeaderBytes = uint64_t{1} << 30;
constexpr size_t kMaxRepoFiles = 100'000;
constexpr size_t kCommitLength = 40;

bool EndsWith(std::string_view s, std::string_view suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

bool IsCommit(std::string_view s) {
  return s.size() == kCommitLength && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

bool ValidNamePart(std::string_view s) {
  if (s.empty() || s.size() > 96) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return s.find("--") == std::string_view::npos && s.find("..") == std::string_view::npos &&
         s.front() != '.' && s.front() != '-' && s.back() != '.' && s.back() != '-';
}

// A repo file name we are willing to ask for and to cache: printable, no "..", no empty part.
bool ValidFileName(std::string_view s) {
  if (s.empty() || s.size() > 1024 || s.front() == '/' || s.back() == '/') return false;
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f || c == '\\') return false;
  }
  size_t start = 0;
  while (start <= s.size()) {
    const size_t slash = std::min(s.find('/', start), s.size());
    const std::string_view part = s.substr(start, slash - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = slash + 1;
  }
  return true;
}

bool Truthy(const char* v) {
  if (v == nullptr) return false;
  std::string s(v);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s == "1" || s == "on" || s == "yes" || s == "true";
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

std::string TrimSpace(std::string s) {
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

// ---- the cache ---------------------------------------------------------------------------

std::string ReadWholeFile(const fs::path& p, bool* ok) {
  std::ifstream in(p, std::ios::binary);
  *ok = static_cast<bool>(in);
  if (!*ok) return "";
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Written beside its place and renamed, so a reader never sees half a file. Best effort: a
// cache that cannot be written only costs the next run its requests.
void WriteFileAtomically(const fs::path& p, std::string_view bytes) {
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  if (ec) return;
  const fs::path tmp = p.string() + fmt::format(".tmp{}", static_cast<long>(::getpid()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) return;
  }
  fs::rename(tmp, p, ec);
  if (ec) fs::remove(tmp, ec);
}

class Cache {
 public:
  Cache(const std::string& dir, std::string_view repo) {
    if (dir.empty()) return;
    const size_t slash = repo.find('/');
    root_ = fs::path(dir) / fmt::format("models--{}--{}", repo.substr(0, slash),
                                        repo.substr(slash + 1));
  }
  bool enabled() const { return !root_.empty(); }
  std::string where() const { return root_.string(); }

  std::string Commit(std::string_view revision) const {
    if (!enabled()) return "";
    bool ok = false;
    std::string sha = TrimSpace(ReadWholeFile(root_ / "refs" / http::UrlEncode(revision, false),
                                              &ok));
    return ok && IsCommit(sha) ? sha : "";
  }
  void SetCommit(std::string_view revision, std::string_view sha) const {
    if (enabled()) WriteFileAtomically(root_ / "refs" / http::UrlEncode(revision, false), sha);
  }

  bool Listing(std::string_view sha, std::vector<std::string>* out) const {
    if (!enabled()) return false;
    bool ok = false;
    const std::string text = ReadWholeFile(root_ / std::string(sha) / "listing", &ok);
    if (!ok) return false;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      if (!ValidFileName(line)) return false;
      out->push_back(line);
    }
    return true;
  }
  void SetListing(std::string_view sha, const std::vector<std::string>& files) const {
    if (!enabled()) return;
    std::string text;
    for (const auto& f : files) text += f + "\n";
    WriteFileAtomically(root_ / std::string(sha) / "listing", text);
  }

  // A file's size and first bytes, when cached.
  bool File(std::string_view sha, std::string_view name, uint64_t* size,
            std::string* prefix) const {
    if (!enabled()) return false;
    bool ok = false;
    std::string bytes = ReadWholeFile(FilePath(sha, name), &ok);
    if (!ok || bytes.size() < 8) return false;
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
    if (bytes.size() - 8 > n) return false;
    *size = n;
    *prefix = bytes.substr(8);
    return true;
  }
  void SetFile(std::string_view sha, std::string_view name, uint64_t size,
               std::string_view prefix) const {
    if (!enabled() || http::UrlEncode(name, false).size() > 200) return;
    std::string bytes(8, '\0');
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((size >> (8 * i)) & 0xff);
    bytes.append(prefix);
    WriteFileAtomically(FilePath(sha, name), bytes);
  }

 private:
  fs::path FilePath(std::string_view sha, std::string_view name) const {
    return root_ / std::string(sha) / ("f-" + http::UrlEncode(name, false));
  }
  fs::path root_;
};

// ---- the source ---------------------------------------------------------------------------

class HubSource : public ByteSource {
 public:
  HubSource(ModelRef ref, HubOptions options)
      : ref_(std::move(ref)), o_(std::move(options)), cache_(o_.cache_dir, ref_.id) {
    http::Options h;
    h.token = o_.token;
    h.auth_origin = http::OriginOf(o_.endpoint);
    h.max_connections = o_.max_connections;
    h.request_timeout_ms = o_.request_timeout_ms;
    h.total_timeout_ms = o_.total_timeout_ms;
    h.max_retries = o_.max_retries;
    h.backoff_ms = o_.backoff_ms;
    if (o_.progress) {
      h.progress = [p = o_.progress, repo = ref_.id](uint64_t done, uint64_t total,
                                                      uint64_t bytes, double secs, bool fin) {
        p(HubProgress{repo, done, total, bytes, secs, fin});
      };
    }
    client_ = std::make_unique<http::Client>(std::move(h));
  }
  ~HubSource() override { client_->Finish(); }

  std::string Label() const override { return fmt::format("{}@{}", ref_.id, ref_.revision); }
  std::string Where(std::string_view file) const override {
    return fmt::format("{}/{}/resolve/{}/{}", o_.endpoint, ref_.id,
                       sha_.empty() ? http::UrlEncode(ref_.revision, false) : sha_,
                       http::UrlEncode(file, true));
  }

  Result<std::vector<std::string>> List() const override {
    std::set<std::string> top;
    for (const auto& f : files_) {
      const size_t slash = f.find('/');
      top.insert(slash == std::string::npos ? f : f.substr(0, slash + 1));
    }
    return std::vector<std::string>(top.begin(), top.end());
  }

  Result<uint64_t> Size(std::string_view file) const override {
    std::lock_guard<std::mutex> lock(mu_);
    VRAMFIT_RETURN_IF_ERROR(EnsureLocked(file));
    return fetched_.at(std::string(file)).size;
  }

  Status ReadAt(std::string_view file, uint64_t offset, size_t n, char* out) const override {
    std::lock_guard<std::mutex> lock(mu_);
    VRAMFIT_RETURN_IF_ERROR(EnsureLocked(file));
    Entry& e = fetched_.at(std::string(file));
    if (offset <= e.prefix.size() && n <= e.prefix.size() - offset) {
      std::copy_n(e.prefix.data() + offset, n, out);
      return Status::Ok();
    }
    if (offset > e.size || n > e.size - offset) {
      return Status::Corrupt(fmt::format("{}: file ended at byte {} while reading {} bytes at {}",
                                         Where(file), e.size, n, offset));
    }
    // A read that continues the prefix (a GGUF header larger than the first fetch): the prefix
    // grows and is cached, so an offline run answers the same reads.
    const uint64_t end = offset + n;
    if (offset <= e.prefix.size() && end <= kMaxHubHeaderBytes) {
      VRAMFIT_RETURN_IF_ERROR(Online(file));
      const uint64_t from = e.prefix.size();
      std::vector<http::Response> res;
      VRAMFIT_RETURN_IF_ERROR(client_->Fetch({RangeRequest(file, from, end - from)}, &res));
      VRAMFIT_RETURN_IF_ERROR(Check(res[0], file));
      if (res[0].body.size() != end - from || res[0].total_size != e.size) {
        return Status::Corrupt(fmt::format(
            "{}: asked for bytes {}-{} of a {}-byte file, the server sent {} bytes of a "
            "{}-byte file", Where(file), from, end - 1, e.size, res[0].body.size(),
            res[0].total_size));
      }
      e.prefix += res[0].body;
      cache_.SetFile(sha_, std::string(file), e.size, e.prefix);
      std::copy_n(e.prefix.data() + offset, n, out);
      return Status::Ok();
    }
    // Past what was fetched (a reader that wants more than the header): one range request.
    VRAMFIT_RETURN_IF_ERROR(Online(file));
    std::vector<http::Response> res;
    VRAMFIT_RETURN_IF_ERROR(client_->Fetch({RangeRequest(file, offset, n)}, &res));
    VRAMFIT_RETURN_IF_ERROR(Check(res[0], file));
    if (res[0].body.size() != n) {
      return Status::Corrupt(fmt::format("{}: file ended at byte {} while reading {} bytes at {}",
                                         Where(file), res[0].total_size, n, offset));
    }
    std::copy_n(res[0].body.data(), n, out);
    return Status::Ok();
  }

  Status PrefetchHeaders(const std::vector<std::string>& files) const override {
    std::lock_guard<std::mutex> lock(mu_);
    return FetchHeadersLocked(files);
  }

  // Resolves the revision and lists the repo (from the cache when it can), then fetches the
  // small files every read needs.
  Status Open() {
    const size_t slash = ref_.id.find('/');
    if (slash == std::string::npos || !ValidNamePart(ref_.id.substr(0, slash)) ||
        !ValidNamePart(ref_.id.substr(slash + 1))) {
      return Status::InvalidArgument(fmt::format("\"{}\": not a Hub repo id (org/name)", ref_.id));
    }
    if (IsCommit(ref_.revision)) sha_ = ref_.revision;
    if (sha_.empty()) sha_ = o_.offline ? cache_.Commit(ref_.revision) : "";
    bool listed = !sha_.empty() && cache_.Listing(sha_, &files_);
    if (!listed) {
      if (o_.offline) return OfflineError("the file list");
      VRAMFIT_RETURN_IF_ERROR(ResolveRevision());
      cache_.SetCommit(ref_.revision, sha_);
      cache_.SetListing(sha_, files_);
    }
    std::sort(files_.begin(), files_.end());
    files_.erase(std::unique(files_.begin(), files_.end()), files_.end());
    std::vector<std::string> small;
    for (const char* name :
         {"config.json", "model.safetensors.index.json", "preprocessor_config.json"}) {
      if (std::binary_search(files_.begin(), files_.end(), name)) small.emplace_back(name);
    }
    std::lock_guard<std::mutex> lock(mu_);
    return FetchWholeLocked(small);
  }

 private:
  struct Entry {
    uint64_t size = 0;
    std::string prefix;  // the file's bytes [0, prefix.size())
  };

  std::string ApiUrl() const {
    return fmt::format("{}/api/models/{}/revision/{}", o_.endpoint, ref_.id,
                       http::UrlEncode(ref_.revision, false));
  }
  std::string Page() const { return fmt::format("{}/{}", o_.endpoint, ref_.id); }

  http::Request RangeRequest(std::string_view file, uint64_t offset, uint64_t n) const {
    http::Request r;
    r.url = Where(file);
    r.range = true;
    r.offset = offset;
    r.length = n;
    return r;
  }

  Status OfflineError(std::string_view what) const {
    return Status::Unsupported(fmt::format(
        "{}: offline (HF_HUB_OFFLINE is set), and {} is not in the Hugging Face Hub cache{}; "
        "run once online to fill it",
        Label(), what, cache_.enabled() ? " " + cache_.where() : std::string(" (no cache)")));
  }
  Status Online(std::string_view file) const {
    return o_.offline ? OfflineError(fmt::format("\"{}\"", file)) : Status::Ok();
  }

  std::string NearestCatalog() const {
    auto m = FindCatalogModel(ref_.id.substr(ref_.id.find('/') + 1));
    if (m.ok()) return fmt::format("; the catalog has {} (pass that id)", m->id);
    return "; " + m.status().message();
  }

  // A non-2xx answer, in words a user can act on. `file` is empty for the API.
  Status Check(const http::Response& r, std::string_view file) const {
    if (r.status >= 200 && r.status < 300) return Status::Ok();
    const std::string& code = r.error_code;
    const std::string server =
        r.error_message.empty() ? "" : fmt::format(" (the Hub says: {})", r.error_message);
    const std::string where = fmt::format("HTTP {} from {}", r.status, r.url);
    if (code == "GatedRepo" || ((r.status == 401 || r.status == 403) && !file.empty())) {
      return Status::NotFound(fmt::format(
          "{} is gated or private: {}accept the license at {} while logged in, then set HF_TOKEN "
          "(or run `huggingface-cli login`) ({}){}",
          ref_.id, o_.token.empty() ? "" : "the token given has no access to it; ", Page(),
          where, server));
    }
    if (code == "RevisionNotFound") {
      return Status::NotFound(fmt::format("{}: no revision \"{}\" ({}){}", ref_.id,
                                          ref_.revision, where, server));
    }
    if (code == "EntryNotFound" || (r.status == 404 && !file.empty())) {
      return Status::NotFound(fmt::format("{}: no file \"{}\" at revision {} ({}){}", ref_.id,
                                          file, ref_.revision, where, server));
    }
    if (code == "RepoNotFound" || r.status == 404 || r.status == 401 || r.status == 403) {
      return Status::NotFound(fmt::format(
          "{}: no such repo on {}{} ({}){}{}", ref_.id, o_.endpoint,
          o_.token.empty() ? " (or it is private or gated: set HF_TOKEN)" : "", where, server,
          NearestCatalog()));
    }
    if (r.status == 429) {
      return Status::Io(fmt::format(
          "{}: rate limited by the Hub ({}); retry after {}{}", ref_.id, where,
          r.retry_after.empty() ? "a while" : fmt::format("{} s", r.retry_after),
          o_.token.empty() ? "; a token (HF_TOKEN) raises the limit" : ""));
    }
    return Status::Io(fmt::format("{}: {}{}", ref_.id, where, server));
  }

  Status ResolveRevision() {
    http::Request r;
    r.url = ApiUrl();
    r.max_body = kMaxApiBytes;
    std::vector<http::Response> res;
    Status fetched = client_->Fetch({r}, &res);
    if (fetched.code() == Code::kIo) {
      // No answer at all (no network, no DNS, a proxy): say what the read needs and what
      // works without it.
      return Status::Io(fmt::format(
          "{} ({} is a Hugging Face Hub id, read over the network from {}; without a network, "
          "give a local directory holding config.json and the safetensors files (or a .gguf file), "
          "or a catalog id (`vramfit models`){}; HF_HUB_OFFLINE=1 reads what an earlier run "
          "cached)",
          fetched.message(), ref_.id, o_.endpoint, NearestCatalog()));
    }
    VRAMFIT_RETURN_IF_ERROR(fetched);
    VRAMFIT_RETURN_IF_ERROR(Check(res[0], ""));
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    if (parser.parse(res[0].body).get(doc) != simdjson::SUCCESS || !doc.is_object()) {
      return Status::Corrupt(fmt::format("{}: the answer is not a JSON object", r.url));
    }
    std::string_view sha;
    if (doc["sha"].get_string().get(sha) != simdjson::SUCCESS || !IsCommit(sha)) {
      return Status::Corrupt(
          fmt::format("{}: \"sha\" is not a 40-digit commit hash", r.url));
    }
    sha_ = std::string(sha);
    simdjson::dom::array siblings;
    if (doc["siblings"].get_array().get(siblings) != simdjson::SUCCESS) {
      return Status::Corrupt(fmt::format("{}: no \"siblings\" list of files", r.url));
    }
    for (simdjson::dom::element s : siblings) {
      std::string_view name;
      if (s["rfilename"].get_string().get(name) != simdjson::SUCCESS) {
        return Status::Corrupt(fmt::format("{}: a sibling without \"rfilename\"", r.url));
      }
      if (!ValidFileName(name)) continue;  // never asked for, never cached
      if (files_.size() >= kMaxRepoFiles) {
        return Status::Corrupt(fmt::format("{}: more than {} files", r.url, kMaxRepoFiles));
      }
      files_.emplace_back(name);
    }
    return Status::Ok();
  }

  Status Known(std::string_view file) const {
    if (std::binary_search(files_.begin(), files_.end(), file)) return Status::Ok();
    return Status::NotFound(
        fmt::format("{}: no such file in {} (commit {})", Where(file), Label(), sha_));
  }

  // The file's entry, fetching it when needed: a safetensors file's header, or a whole file.
  Status EnsureLocked(std::string_view file) const {
    if (fetched_.count(std::string(file)) != 0) return Status::Ok();
    VRAMFIT_RETURN_IF_ERROR(Known(file));
    if (EndsWith(file, ".safetensors")) return FetchHeadersLocked({std::string(file)});
    if (EndsWith(file, ".gguf")) return FetchPrefixLocked(std::string(file), kGgufFirstRead);
    return FetchWholeLocked({std::string(file)});
  }

  // A GGUF file's first `n` bytes (its header reader asks for more as it needs them: ReadAt).
  Status FetchPrefixLocked(const std::string& file, uint64_t n) const {
    if (fetched_.count(file) != 0 || FromCache(file)) return Status::Ok();
    VRAMFIT_RETURN_IF_ERROR(Online(file));
    std::vector<http::Response> res;
    VRAMFIT_RETURN_IF_ERROR(client_->Fetch({RangeRequest(file, 0, n)}, &res));
    VRAMFIT_RETURN_IF_ERROR(Check(res[0], file));
    Entry e;
    e.size = res[0].total_size;
    e.prefix = std::move(res[0].body);
    cache_.SetFile(sha_, file, e.size, e.prefix);
    fetched_[file] = std::move(e);
    return Status::Ok();
  }

  bool FromCache(const std::string& file) const {
    Entry e;
    if (!cache_.File(sha_, file, &e.size, &e.prefix)) return false;
    fetched_[file] = std::move(e);
    return true;
  }

  Status FetchWholeLocked(const std::vector<std::string>& files) const {
    std::vector<std::string> names;
    std::vector<http::Request> reqs;
    for (const auto& f : files) {
      if (fetched_.count(f) != 0 || FromCache(f)) continue;
      VRAMFIT_RETURN_IF_ERROR(Known(f));
      VRAMFIT_RETURN_IF_ERROR(Online(f));
      http::Request r;
      r.url = Where(f);
      r.max_body = EndsWith(f, ".index.json") ? kMaxIndexBytes : kMaxConfigBytes;
      names.push_back(f);
      reqs.push_back(std::move(r));
    }
    std::vector<http::Response> res;
    VRAMFIT_RETURN_IF_ERROR(client_->Fetch(reqs, &res));
    for (size_t i = 0; i < names.size(); ++i) {
      VRAMFIT_RETURN_IF_ERROR(Check(res[i], names[i]));
      Entry e;
      e.size = res[i].body.size();
      e.prefix = std::move(res[i].body);
      cache_.SetFile(sha_, names[i], e.size, e.prefix);
      fetched_[names[i]] = std::move(e);
    }
    return Status::Ok();
  }

  // Every file's first 8 bytes (in parallel), then the headers they announce (in parallel).
  // A length the local reader would refuse is not fetched: the read gives the same error.
  Status FetchHeadersLocked(const std::vector<std::string>& files) const {
    std::vector<std::string> names;
    std::vector<http::Request> reqs;
    for (const auto& f : files) {
      if (fetched_.count(f) != 0 || FromCache(f)) continue;
      if (!Known(f).ok()) continue;  // the reader reports a missing shard in its own words
      VRAMFIT_RETURN_IF_ERROR(Online(f));
      names.push_back(f);
      reqs.push_back(RangeRequest(f, 0, kSafetensorsPrefix));
    }
    std::vector<http::Response> res;
    VRAMFIT_RETURN_IF_ERROR(client_->Fetch(reqs, &res));
    std::vector<Entry> entries(names.size());
    std::vector<std::string> second_names;
    std::vector<size_t> second_of;
    std::vector<http::Request> second;
    uint64_t budget = 0;
    for (size_t i = 0; i < names.size(); ++i) {
      VRAMFIT_RETURN_IF_ERROR(Check(res[i], names[i]));
      entries[i].size = res[i].total_size;
      entries[i].prefix = std::move(res[i].body);
      auto n = ParseSafetensorsHeaderLength(entries[i].prefix, entries[i].size, names[i]);
      if (!n.ok() || *n == 0) continue;
      budget += *n;
      if (budget > kMaxHubHeaderBytes) {
        return Status::Corrupt(fmt::format(
            "{}: the headers of {} add up to more than {} bytes; no real checkpoint has that "
            "much", Where(names[i]), Label(), kMaxHubHeaderBytes));
      }
      second_of.push_back(i);
      second.push_back(RangeRequest(names[i], kSafetensorsPrefix, *n));
    }
    std::vector<http::Response> res2;
    VRAMFIT_RETURN_IF_ERROR(client_->Fetch(second, &res2));
    for (size_t j = 0; j < second.size(); ++j) {
      const size_t i = second_of[j];
      VRAMFIT_RETURN_IF_ERROR(Check(res2[j], names[i]));
      if (res2[j].total_size != entries[i].size) {
        return Status::Corrupt(fmt::format(
            "{}: the server gave the file's length as {} bytes, then as {}", res2[j].url,
            entries[i].size, res2[j].total_size));
      }
      entries[i].prefix += res2[j].body;
    }
    for (size_t i = 0; i < names.size(); ++i) {
      cache_.SetFile(sha_, names[i], entries[i].size, entries[i].prefix);
      fetched_[names[i]] = std::move(entries[i]);
    }
    return Status::Ok();
  }

  ModelRef ref_;
  HubOptions o_;
  Cache cache_;
  std::string sha_;
  std::vector<std::string> files_;  // every file of the repo, sorted
  std::unique_ptr<http::Client> client_;
  mutable std::mutex mu_;
  mutable std::map<std::string, Entry> fetched_;
};

}  // namespace

Result<ModelRef> ParseHubId(std::string_view whole) {
  ModelRef ref;
  ref.kind = ModelKind::kHub;
  // "org/name[@revision][:file]": git refs never hold ':', so the first one starts the file.
  std::string_view text = whole;
  const size_t colon = whole.find(':');
  if (colon != std::string_view::npos) {
    const std::string_view file = whole.substr(colon + 1);
    const bool file_ok =
        !file.empty() && file.size() <= 1024 && file.front() != '/' && file.back() != '/' &&
        file.find("..") == std::string_view::npos && file.find("//") == std::string_view::npos &&
        std::all_of(file.begin(), file.end(), [](unsigned char c) {
          return c > 0x20 && c != 0x7f && c != '\\';
        });
    if (!file_ok) {
      return Status::InvalidArgument(fmt::format(
          "\"{}\": the file after ':' must be a path inside the repo (org/name:FILE.gguf)",
          core::Printable(whole)));
    }
    ref.file = std::string(file);
    text = whole.substr(0, colon);
  }
  const size_t at = text.find('@');
  std::string_view id = text.substr(0, at);
  ref.revision = at == std::string_view::npos ? "main" : std::string(text.substr(at + 1));
  const size_t slash = id.find('/');
  if (slash == std::string_view::npos || !ValidNamePart(id.substr(0, slash)) ||
      !ValidNamePart(id.substr(slash + 1))) {
    return Status::InvalidArgument(fmt::format(
        "\"{}\" is not a Hub repo id: expected org/name[@revision][:FILE.gguf] (letters, digits, "
        "'-', '_', '.'; at most 96 characters each)", core::Printable(text)));
  }
  const bool revision_ok =
      !ref.revision.empty() && ref.revision.size() <= 256 &&
      std::all_of(ref.revision.begin(), ref.revision.end(),
                  [](unsigned char c) { return c > 0x20 && c != 0x7f; });
  if (!revision_ok) {
    return Status::InvalidArgument(fmt::format(
        "\"{}\": the revision after '@' must be a branch, tag or commit", text));
  }
  ref.id = std::string(id);
  return ref;
}

HubOptions HubOptionsFromEnvironment() {
  HubOptions o;
  std::string endpoint = Env("HF_ENDPOINT");
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  if (!endpoint.empty()) o.endpoint = endpoint;
  std::string home = Env("HF_HOME");
  if (home.empty()) {
    const std::string xdg = Env("XDG_CACHE_HOME");
    const std::string user = Env("HOME");
    if (!xdg.empty()) {
      home = xdg + "/huggingface";
    } else if (!user.empty()) {
      home = user + "/.cache/huggingface";
    }
  }
  o.token = TrimSpace(Env("HF_TOKEN"));
  if (o.token.empty()) o.token = TrimSpace(Env("HUGGING_FACE_HUB_TOKEN"));
  if (o.token.empty() && !home.empty()) {
    bool ok = false;
    o.token = TrimSpace(ReadWholeFile(fs::path(home) / "token", &ok));
  }
  // A token with a line break or a control character would end the header it is sent in.
  if (std::any_of(o.token.begin(), o.token.end(),
                  [](unsigned char c) { return c < 0x21 || c == 0x7f; })) {
    o.token.clear();
  }
  if (!home.empty()) o.cache_dir = home + "/vramfit";
  o.offline = Truthy(std::getenv("HF_HUB_OFFLINE"));
  return o;
}

Result<std::unique_ptr<ByteSource>> OpenHubRepo(const ModelRef& ref, const HubOptions& options) {
  if (ref.kind != ModelKind::kHub) {
    return Status::InvalidArgument(fmt::format("{}: not a Hub repo reference", ref.id));
  }
  ModelRef r = ref;
  if (r.revision.empty()) r.revision = "main";
  auto src = std::make_unique<HubSource>(std::move(r), options);
  VRAMFIT_RETURN_IF_ERROR(src->Open());
  return std::unique_ptr<ByteSource>(std::move(src));
}

}  // namespace vramfit
