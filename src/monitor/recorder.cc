// The Recorder (vramfit/monitor.h): samples and stage marks joined into per-stage peaks, exact
// for every sample, and a timeline of at most max_points points. When the timeline is full,
// neighbouring points merge two by two (each keeps the larger reading and the earlier time) and
// a point covers twice the samples from then on: an hour at 100 ms (36,000 samples) and a week
// hold the same memory.
#include <algorithm>

#include "vramfit/monitor.h"

namespace vramfit {

Recorder::Recorder(std::vector<GpuInfo> gpus, const RecorderOptions& options)
    : options_(options), n_(gpus.size()) {
  // Even, so that a full timeline merges into whole pairs.
  options_.max_points = std::max<size_t>(2, options_.max_points + options_.max_points % 2);
  report_.gpus = std::move(gpus);
  report_.stages.resize(kStageCount);
  for (int s = 0; s < kStageCount; ++s) {
    StageMeasure& m = report_.stages[static_cast<size_t>(s)];
    m.stage = static_cast<Stage>(s);
    m.used_peak_bytes.assign(n_, 0);
    m.process_peak_bytes.assign(n_, 0);
  }
  report_.stages[0].reached = true;
  point_seconds_.reserve(options_.max_points);
  point_used_.reserve(options_.max_points * n_);
  scratch_.assign(n_, 0);
}

void Recorder::AddSample(const Reading& reading, const std::vector<uint32_t>& engine_pids) {
  if (report_.samples == 0) {
    report_.baseline_used_bytes.assign(n_, 0);
    for (size_t i = 0; i < n_ && i < reading.gpus.size(); ++i) {
      report_.baseline_used_bytes[i] = reading.gpus[i].used_bytes;
    }
  }
  ++report_.samples;
  StageMeasure& m = report_.stages[static_cast<size_t>(current_)];
  if (m.samples == 0 && current_ == Stage::kStartup) m.start_seconds = reading.seconds;
  ++m.samples;
  m.end_seconds = reading.seconds;
  for (size_t i = 0; i < n_; ++i) {
    const GpuReading* g = i < reading.gpus.size() ? &reading.gpus[i] : nullptr;
    const uint64_t used = g ? g->used_bytes : 0;
    scratch_[i] = used;
    m.used_peak_bytes[i] = std::max(m.used_peak_bytes[i], used);
    if (!g || engine_pids.empty()) continue;
    uint64_t mine = 0;
    for (const ProcessMemory& p : g->processes) {
      if (std::find(engine_pids.begin(), engine_pids.end(), p.pid) != engine_pids.end()) {
        mine += p.used_bytes;
        report_.processes_seen = true;
      }
    }
    m.process_peak_bytes[i] = std::max(m.process_peak_bytes[i], mine);
  }
  Push(reading.seconds, scratch_);
}

void Recorder::Push(double seconds, const std::vector<uint64_t>& used) {
  if (pending_ > 0) {  // the open point takes this sample too
    uint64_t* p = point_used_.data() + (point_seconds_.size() - 1) * n_;
    for (size_t i = 0; i < n_; ++i) p[i] = std::max(p[i], used[i]);
  } else {
    if (point_seconds_.size() == options_.max_points) {
      // Full: merge neighbours, halving the points; the step doubles.
      const size_t half = point_seconds_.size() / 2;
      for (size_t k = 0; k < half; ++k) {
        point_seconds_[k] = point_seconds_[2 * k];
        for (size_t i = 0; i < n_; ++i) {
          point_used_[k * n_ + i] =
              std::max(point_used_[2 * k * n_ + i], point_used_[(2 * k + 1) * n_ + i]);
        }
      }
      point_seconds_.resize(half);
      point_used_.resize(half * n_);
      step_ *= 2;
    }
    point_seconds_.push_back(seconds);
    point_used_.insert(point_used_.end(), used.begin(), used.end());
  }
  if (++pending_ >= step_) pending_ = 0;
}

void Recorder::Mark(StageMark mark) {
  const Stage stage = mark.stage;
  const double seconds = mark.seconds;
  report_.marks.push_back(std::move(mark));
  if (stage <= current_) return;
  report_.stages[static_cast<size_t>(current_)].end_seconds = seconds;
  current_ = stage;
  StageMeasure& m = report_.stages[static_cast<size_t>(stage)];
  m.reached = true;
  m.start_seconds = seconds;
  m.end_seconds = seconds;
}

void Recorder::Error(StageMark mark) {
  if (report_.errors.size() < options_.max_errors) report_.errors.push_back(std::move(mark));
}

size_t Recorder::MemoryBytes() const {
  size_t bytes = point_seconds_.capacity() * sizeof(double) +
                 point_used_.capacity() * sizeof(uint64_t) + scratch_.capacity() * 8;
  for (const StageMeasure& m : report_.stages) {
    bytes += (m.used_peak_bytes.capacity() + m.process_peak_bytes.capacity()) * 8;
  }
  bytes += report_.stages.capacity() * sizeof(StageMeasure);
  for (const auto* v : {&report_.marks, &report_.errors}) {
    bytes += v->capacity() * sizeof(StageMark);
    for (const StageMark& m : *v) {
      bytes += m.text.capacity() + m.engine.capacity() + m.event.capacity();
    }
  }
  bytes += report_.gpus.capacity() * sizeof(GpuInfo) + report_.baseline_used_bytes.capacity() * 8;
  return bytes;
}

MonitorReport Recorder::Finish(double seconds) {
  MonitorReport r = std::move(report_);
  r.duration_seconds = seconds;
  if (r.stages[static_cast<size_t>(current_)].end_seconds < seconds) {
    r.stages[static_cast<size_t>(current_)].end_seconds = seconds;
  }
  r.timeline_step_samples = static_cast<double>(step_);
  r.timeline.reserve(point_seconds_.size());
  for (size_t k = 0; k < point_seconds_.size(); ++k) {
    TimelinePoint p;
    p.seconds = point_seconds_[k];
    p.used_bytes.assign(point_used_.begin() + static_cast<ptrdiff_t>(k * n_),
                        point_used_.begin() + static_cast<ptrdiff_t>((k + 1) * n_));
    r.timeline.push_back(std::move(p));
  }
  return r;
}

uint64_t MonitorReport::MeasuredBytes(Stage stage) const {
  const StageMeasure& m = stages[static_cast<size_t>(stage)];
  uint64_t best = 0;
  for (size_t i = 0; i < m.used_peak_bytes.size(); ++i) {
    uint64_t v = 0;
    if (processes_seen) {
      v = i < m.process_peak_bytes.size() ? m.process_peak_bytes[i] : 0;
    } else {
      const uint64_t base = i < baseline_used_bytes.size() ? baseline_used_bytes[i] : 0;
      v = m.used_peak_bytes[i] > base ? m.used_peak_bytes[i] - base : 0;
    }
    best = std::max(best, v);
  }
  return best;
}

}  // namespace vramfit
