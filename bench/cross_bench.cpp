// See cross_bench.h.
#include "bench/cross_bench.h"

#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/GradMode.h>
#include <c10/core/ScalarType.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "bench/bench_timer.h"
#include "engine/attention/ann/cross_attention_policy.h"
#include "engine/attention/sdpa.h"
#include "engine/attention/tempcache/temp_cache_match.h"
#include "engine/core/error.h"

namespace wc::attention {
namespace {

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// The median time of `iters` calls of `call` after `warmup` untimed ones.
template <typename Call>
double time_calls(const CrossBenchOptions& o, Call call) {
  const std::unique_ptr<BenchTimer> timer = make_bench_timer(o.device);
  std::vector<double> ms;
  for (int i = 0; i < o.warmup + o.iters; ++i) {
    timer->start_call();
    (void)call();
    timer->stop_call();
    const double elapsed = timer->finish_call().total_ms;
    if (i >= o.warmup) ms.push_back(elapsed);
  }
  return median(ms);
}

}  // namespace

CrossBenchResult run_cross_bench(const CrossBenchOptions& o) {
  if (o.grid_h < 1 || o.grid_w < 1 || o.frames < 1 || o.heads < 1 || o.head_dim < 8 ||
      o.prompt < 1 || o.groups < 1 || o.groups_per_frame < 1 || o.groups_per_frame > o.groups ||
      o.top < 1 || o.top > o.prompt || o.iters < 1 || o.warmup < 0) {
    throw Error("bench cross",
                "sizes must be positive, groups per frame at most the groups, top "
                "at most the prompt's tokens");
  }
  at::NoGradGuard no_grad;
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(o.seed);
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  const int64_t per_frame = int64_t{o.grid_h} * o.grid_w, tokens = per_frame * o.frames;
  const int64_t h = o.heads, d = o.head_dim;
  // Directions [H, groups, D]; token l of the prompt belongs to group l mod groups.
  const at::Tensor centres = at::randn({h, o.groups, d}, gen, f32);
  const at::Tensor token_group = at::arange(o.prompt, at::kLong).remainder(o.groups);
  const at::Tensor k =
      centres.index_select(1, token_group) + at::randn({h, o.prompt, d}, gen, f32) * o.noise;
  const at::Tensor v = at::randn({h, o.prompt, d}, gen, f32);
  std::vector<at::Tensor> frames;
  for (int f = 0; f < o.frames; ++f) {
    const at::Tensor chosen =
        at::randperm(o.groups, gen, at::kLong).narrow(0, 0, o.groups_per_frame);
    const at::Tensor which =
        chosen.index_select(0, at::randint(o.groups_per_frame, {per_frame}, gen, at::kLong));
    frames.push_back(centres.index_select(1, which) +
                     at::randn({h, per_frame, d}, gen, f32) * o.noise);
  }
  const auto on_device = [&](const at::Tensor& x) {
    return x.unsqueeze(0).to(o.device, o.dtype).contiguous();
  };
  const at::Tensor q = on_device(at::cat(frames, 1)), kd = on_device(k), vd = on_device(v);

  // The settings as AnnCA takes them (validated by the policy), and its rule's two steps timed
  // as the policy runs them: the keep rule, then the gathered attention.
  ModelShape shape;
  shape.num_layers = 1;
  shape.num_heads = o.heads;
  shape.head_dim = o.head_dim;
  shape.geometry = {o.frames, o.grid_h, o.grid_w};
  shape.device = o.device;
  shape.dtype = o.dtype;
  const nlohmann::json settings = create_cross_policy("annca", shape, o.annca)->settings();
  const int bits = settings.at("bits").get<int>();
  const int64_t min_kept = settings.at("min_kept").get<int64_t>();
  std::vector<at::Tensor> tables;
  for (int t = 0; t < settings.at("tables").get<int>(); ++t) {
    tables.push_back(
        lsh_projections(h, d, bits, settings.at("seed").get<uint64_t>() * 31 + t, o.device));
  }
  const at::Tensor qr = q[0], kr = kd[0], vr = vd[0];  // [H, T, D], [H, L, D]

  CrossBenchResult r;
  r.settings = settings;
  r.dense_ms = time_calls(o, [&] { return attention(q, kd, vd); });
  r.annca_ms = time_calls(o, [&] {
    return kept_cross_attention(qr, kr, vr, annca_keep(qr, kr, tables, o.frames, min_kept));
  });
  const at::Tensor keep = annca_keep(qr, kr, tables, o.frames, min_kept);  // [H, F, L]
  r.kept_share = keep.to(at::kFloat).mean().item<double>();
  // Recall: each query's true top tokens (float32 scores) kept for its frame.
  double found = 0.0;
  for (int f = 0; f < o.frames; ++f) {
    const at::Tensor scores = at::bmm(qr.narrow(1, f * per_frame, per_frame).to(at::kFloat),
                                      kr.to(at::kFloat).transpose(1, 2));
    const at::Tensor best = std::get<1>(scores.topk(o.top, -1));  // [H, N, top]
    const at::Tensor kept = keep.select(1, f).unsqueeze(1).expand({h, per_frame, o.prompt});
    found += kept.gather(2, best).to(at::kDouble).sum().item<double>();
  }
  r.recall = found / static_cast<double>(h * tokens * o.top);
  const at::Tensor out_dense = attention(q, kd, vd)[0].to(at::kFloat);
  const at::Tensor out_annca = kept_cross_attention(qr, kr, vr, keep).to(at::kFloat);
  r.relative_error = ((out_annca - out_dense).norm() / out_dense.norm()).item<double>();
  return r;
}

std::string CrossBenchResult::table(const CrossBenchOptions& o) const {
  char text[1024];
  std::snprintf(text, sizeof(text),
                "bench cross: %d frames of %dx%d queries, %d heads x %d, %lld prompt tokens in %d "
                "planted groups (%d per frame), %s %s\n"
                "| %-7s | %10s | %8s | %12s | %10s | %14s |\n"
                "| %-7s | %10.3f | %8s | %12s | %10s | %14s |\n"
                "| %-7s | %10.3f | %7.2fx | %11.1f%% | %9.1f%% | %14.4f |\n",
                o.frames, o.grid_h, o.grid_w, o.heads, o.head_dim, static_cast<long long>(o.prompt),
                o.groups, o.groups_per_frame, o.device.str().c_str(), c10::toString(o.dtype),
                "policy", "ms/call", "speedup", "prompt kept", "top recall", "relative error",
                "dense", dense_ms, "1.00x", "100.0%", "100.0%", "0", "annca", annca_ms, speedup(),
                100.0 * kept_share, 100.0 * recall, relative_error);
  return text;
}

nlohmann::json CrossBenchResult::to_json(const CrossBenchOptions& o) const {
  return {{"benchmark", "cross"},
          {"device", o.device.str()},
          {"dtype", std::string(c10::toString(o.dtype))},
          {"grid", {o.grid_h, o.grid_w}},
          {"frames", o.frames},
          {"heads", o.heads},
          {"head_dim", o.head_dim},
          {"prompt_tokens", o.prompt},
          {"groups", o.groups},
          {"groups_per_frame", o.groups_per_frame},
          {"noise", o.noise},
          {"top", o.top},
          {"annca_settings", settings},
          {"dense_ms", dense_ms},
          {"annca_ms", annca_ms},
          {"speedup", speedup()},
          {"prompt_kept", kept_share},
          {"top_recall", recall},
          {"relative_error", relative_error}};
}

}  // namespace wc::attention
