// The rollout report as a PNG through gnuplot (Debian gnuplot-nox): time per frame and memory
// against frames, one line per policy, log scales (dense-unbounded and the bounded policies
// differ by orders of magnitude). A run stopped early ends where it stopped.
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "bench/rollout_bench.h"
#include "engine/core/gnuplot.h"
#include "engine/core/timing.h"

namespace wc::attention {
namespace {

std::string line_title(const RolloutPolicyResult& r, int frames_per_block) {
  if (!r.stopped_early) return r.label;
  return r.label + " (stopped at frame " +
         std::to_string(r.block_ms.size() * static_cast<size_t>(frames_per_block)) + ")";
}

}  // namespace

std::string RolloutBenchReport::plot(const std::string& png) const {
  // Device memory when the run measured it (CUDA), else the policy's K/V cache.
  bool device_memory = false;
  for (const RolloutPolicyResult& r : results) {
    for (const RolloutSample& s : r.samples) device_memory = device_memory || s.device_bytes > 0;
  }
  std::ostringstream data;
  for (const RolloutPolicyResult& r : results) {
    data << "# " << r.label << "\n";
    // One point per sample: the median frame time of the blocks since the previous sample.
    int64_t begin = 0;
    for (const RolloutSample& s : r.samples) {
      const int64_t end = std::min<int64_t>(s.block + 1, static_cast<int64_t>(r.block_ms.size()));
      if (end <= begin) continue;
      const double ms =
          median(std::vector<double>(r.block_ms.begin() + begin, r.block_ms.begin() + end)) /
          options.frames_per_block;
      const int64_t bytes = device_memory ? s.device_bytes : s.cache_bytes;
      data << s.frames << " " << ms << " " << static_cast<double>(bytes) / (1 << 20) << "\n";
      begin = end;
    }
    data << "\n\n";
  }
  const auto script = [&](const std::string& data_file) {
    std::ostringstream out;
    const std::string title =
        "worldcast bench rollout " + options.resolution + ", " + std::to_string(options.num_heads) +
        " heads x " + std::to_string(options.head_dim) + ", " + std::to_string(options.num_layers) +
        " layer(s) (" + device_name + ")";
    out << "set terminal pngcairo size 1200,900 noenhanced\n"
        << "set output " << gnuplot_quoted(png) << "\n"
        << "set multiplot layout 2,1 title " << gnuplot_quoted(title) << "\n"
        << "set key outside right top\nset grid\nset logscale y\nset autoscale xfix\n"
        << "set xlabel 'frames'\n"
        << "set ylabel 'ms per frame (median per sample)'\nplot ";
    for (size_t i = 0; i < results.size(); ++i) {
      out << (i ? ", " : "") << gnuplot_quoted(data_file) << " index " << i
          << " using 1:2 with lines lw 2 title "
          << gnuplot_quoted(line_title(results[i], options.frames_per_block));
    }
    out << "\nset ylabel "
        << gnuplot_quoted(device_memory ? "device memory allocated, MiB" : "K/V cache held, MiB")
        << "\nplot ";
    for (size_t i = 0; i < results.size(); ++i) {
      out << (i ? ", " : "") << gnuplot_quoted(data_file) << " index " << i
          << " using 1:3 with lines lw 2 title "
          << gnuplot_quoted(line_title(results[i], options.frames_per_block));
    }
    out << "\nunset multiplot\n";
    return out.str();
  };
  if (auto failed = run_gnuplot(data.str(), script)) return *failed;
  return "wrote " + png;
}

}  // namespace wc::attention
