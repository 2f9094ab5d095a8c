// See tile_tokenizer.h.
#include "engine/model/tile_tokenizer.h"

#include <c10/core/GradMode.h>

#include <algorithm>
#include <string>

#include "engine/model/ops.h"

namespace wc::model {
namespace {

// Distance matrices stay under this many float64 values ([chunk, G]), 256 MB.
constexpr int64_t kDistanceValues = int64_t{1} << 25;
constexpr int kQuarters = 4;

at::TensorOptions longs(at::Device device) {
  return at::TensorOptions().dtype(at::kLong).device(device);
}

// An image of the book (colour indices, kTransparentColour where transparent) as float64 byte
// values [3, n] channel-major and its opaque pixels [n].
void image_tensors(const TileBook& book, const std::vector<uint8_t>& image, double* colours,
                   bool* opaque) {
  const size_t n = image.size();
  for (size_t i = 0; i < n; ++i) {
    const bool shown = image[i] != kTransparentColour;
    opaque[i] = shown;
    for (size_t c = 0; c < 3; ++c) colours[c * n + i] = shown ? book.colours[image[i]][c] : 0.0;
  }
}

}  // namespace

TileTokenizer::TileTokenizer(const TileBook& book, at::Device device) : book_(book) {
  const int64_t t = book.tile, g = book.ground_size(), texels = t * t;
  at::Tensor ground = at::empty({g, 3 * texels}, at::kDouble);
  at::Tensor unused = at::empty({g, texels}, at::kBool);
  for (int64_t e = 0; e < g; ++e) {
    image_tensors(book, book.ground[static_cast<size_t>(e)], ground[e].data_ptr<double>(),
                  unused[e].data_ptr<bool>());
  }
  ground_ = ground.to(device);
  ground_sq_ = ground_ * ground_;
  ground_unit_ = (ground_ / 127.5 - 1.0).to(at::kFloat).view({g, 3, t, t});
  for (const TileLayer& layer : book.layers) {
    const int64_t n = static_cast<int64_t>(layer.images.size());
    const int64_t pixels = int64_t{layer.width} * layer.height;
    at::Tensor colours = at::empty({n, 3, pixels}, at::kDouble);
    at::Tensor opaque = at::empty({n, pixels}, at::kBool);
    for (int64_t i = 0; i < n; ++i) {
      image_tensors(book, layer.images[static_cast<size_t>(i)], colours[i].data_ptr<double>(),
                    opaque[i].data_ptr<bool>());
    }
    Layer out;
    out.colours = colours.to(device);
    out.opaque = opaque.to(device);
    out.unit = (out.colours / 127.5 - 1.0).to(at::kFloat);
    layers_.push_back(std::move(out));
  }
  // Frame pixel (y, x) at phase (qy, qx) is window pixel (y + qy·T/2, x + qx·T/2).
  const int64_t h = book.frame_height, w = book.frame_width, window_w = book.ground_cols() * t;
  at::Tensor crop = at::empty({kQuarters, h * w}, at::kLong);
  for (int q = 0; q < kQuarters; ++q) {
    const int64_t oy = (q / 2) * t / 2, ox = (q % 2) * t / 2;
    int64_t* out = crop[q].data_ptr<int64_t>();
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x) out[y * w + x] = (y + oy) * window_w + x + ox;
    }
  }
  crop_index_ = crop.to(device);

  const int64_t rows = book.ground_rows(), cols = book.ground_cols(), v = book.vocab();
  at::Tensor allowed = at::zeros({book.grid_h() * cols, v}, at::kBool);
  allowed.slice(0, 0, rows * cols).slice(1, 0, g).fill_(true);
  allowed.slice(0, rows * cols, rows * cols + cols).select(1, book.pad_id()).fill_(true);
  allowed[rows * cols].select(0, book.pad_id()).fill_(false);
  allowed[rows * cols].slice(0, book.phase_id(0), book.phase_id(kQuarters)).fill_(true);
  for (size_t l = 0; l < book.layers.size(); ++l) {
    const int64_t place = rows * cols + 1 + static_cast<int64_t>(l);
    const int64_t first = book.layer_first_id(static_cast<int>(l));
    allowed[place].select(0, book.pad_id()).fill_(false);
    allowed[place]
        .slice(0, first, first + static_cast<int64_t>(book.layers[l].images.size()))
        .fill_(true);
  }
  allowed_ = allowed.to(device);
  overlay_ = at::zeros({book.grid_h(), cols}, at::kBool);
  overlay_[rows].slice(0, 0, 1 + static_cast<int64_t>(book.layers.size())).fill_(true);
  scored_ = overlay_.clone();
  scored_.slice(0, 0, rows).fill_(true);
  overlay_ = overlay_.to(device);
  scored_ = scored_.to(device);
}

at::Tensor TileTokenizer::nearest(const at::Tensor& tiles, const at::Tensor& weight,
                                  at::Tensor& best) const {
  const int64_t g = ground_.size(0);
  const int64_t chunk = std::max<int64_t>(1, kDistanceValues / g);
  std::vector<at::Tensor> index, distance;
  for (int64_t start = 0; start < tiles.size(0); start += chunk) {
    const at::Tensor x = tiles.slice(0, start, start + chunk);
    at::Tensor d;
    if (weight.defined()) {
      // Σ w·(x − e)² = Σ w·x² − 2·(w·x)·e + w·e², w repeated over the three channels.
      const at::Tensor w = weight.slice(0, start, start + chunk).to(at::kDouble).repeat({1, 3});
      const at::Tensor wx = w * x;
      d = (wx * x).sum(1, true) - 2.0 * at::matmul(wx, ground_.t()) + at::matmul(w, ground_sq_.t());
    } else {
      d = (x * x).sum(1, true) - 2.0 * at::matmul(x, ground_.t()) + ground_sq_.sum(1).unsqueeze(0);
    }
    const auto [b, i] = d.min(1);
    index.push_back(i);
    distance.push_back(b);
  }
  best = at::cat(distance);
  return at::cat(index);
}

at::Tensor TileTokenizer::encode_ground(const at::Tensor& bytes, const at::Tensor& shown,
                                        int quarter, at::Tensor& distance,
                                        at::Tensor& misses) const {
  const int64_t m = bytes.size(0), t = book_.tile, rows = book_.ground_rows(),
                cols = book_.ground_cols();
  const int64_t h = bytes.size(2), w = bytes.size(3);
  const int64_t oy = (quarter / 2) * t / 2, ox = (quarter % 2) * t / 2;
  at::Tensor canvas = at::zeros({m, 3, rows * t, cols * t}, bytes.options());
  at::Tensor weight = at::zeros({m, rows * t, cols * t}, bytes.options());
  canvas.slice(2, oy, oy + h).slice(3, ox, ox + w).copy_(bytes);
  weight.slice(1, oy, oy + h).slice(2, ox, ox + w).copy_(shown);
  const at::Tensor tiles =
      patchify(canvas.unsqueeze(1), t, t).reshape({m * rows * cols, 3 * t * t});
  const at::Tensor cell_weight =
      patchify(weight.view({m, 1, 1, rows * t, cols * t}), t, t).reshape({m * rows * cols, t * t});
  at::Tensor best;
  at::Tensor index = nearest(tiles, cell_weight, best);
  const at::Tensor seen = cell_weight.sum(1) > 0;
  index = at::where(seen, index, at::full({}, mask_id(), index.options()));
  best = at::where(seen, best, at::zeros({}, best.options()));
  misses = (best > 0.5).view({m, rows * cols}).sum(1);
  distance = best.view({m, rows * cols}).sum(1);
  return index.view({m, rows, cols});
}

at::Tensor TileTokenizer::encode_layers(const at::Tensor& bytes, const at::Tensor& quarters,
                                        at::Tensor& covered, at::Tensor& misses) const {
  const int64_t m = bytes.size(0), cols = book_.ground_cols();
  at::Tensor row = at::full({m, cols}, book_.pad_id(), longs(bytes.device()));
  covered = at::zeros({m, bytes.size(2), bytes.size(3)}, bytes.options().dtype(at::kBool));
  if (quarters.defined()) row.select(1, 0).copy_(quarters + book_.phase_id(0));
  // From the top layer down: a pixel a layer above covers says nothing of the layers below it.
  for (int64_t l = static_cast<int64_t>(layers_.size()) - 1; l >= 0; --l) {
    const TileLayer& layer = book_.layers[static_cast<size_t>(l)];
    const Layer& table = layers_[static_cast<size_t>(l)];
    const int64_t pixels = int64_t{layer.width} * layer.height;
    const auto region = [&](const at::Tensor& x) {
      return x.narrow(-2, layer.y, layer.height).narrow(-1, layer.x, layer.width);
    };
    const at::Tensor crop = region(bytes).reshape({m, 1, 3, pixels});
    const at::Tensor open = region(covered).reshape({m, 1, pixels}).logical_not();
    const at::Tensor same = (crop == table.colours.unsqueeze(0)).all(2);  // [M, n, pixels]
    const at::Tensor judged = table.opaque.unsqueeze(0) & open;
    const at::Tensor fit = (same & judged).sum(-1);
    const at::Tensor unfit = (same.logical_not() & judged).sum(-1);
    const at::Tensor best = (fit - (pixels + 1) * unfit).argmax(1);  // [M]
    misses = misses + (unfit.gather(1, best.unsqueeze(1)) > 0).sum();
    row.select(1, 1 + l).copy_(best + book_.layer_first_id(static_cast<int>(l)));
    const at::Tensor drawn =
        table.opaque.index_select(0, best).view({m, layer.height, layer.width});
    region(covered).logical_or_(drawn);
  }
  return row;
}

at::Tensor TileTokenizer::encode(const at::Tensor& frames, const at::Tensor& quarters,
                                 at::Tensor* misses) const {
  return encode_with_ground(frames, quarters, at::Tensor(), misses);
}

at::Tensor TileTokenizer::encode_with_ground(const at::Tensor& frames, const at::Tensor& quarters,
                                             const at::Tensor& ground, at::Tensor* misses) const {
  const at::NoGradGuard no_grad;
  TORCH_CHECK(frames.dim() == 5 && frames.size(2) == 3 && frames.size(3) == book_.frame_height &&
                  frames.size(4) == book_.frame_width,
              "TileTokenizer: frames must be [B, F, 3, ", book_.frame_height, ", ",
              book_.frame_width, "], got ", frames.sizes());
  const int64_t b = frames.size(0), f = frames.size(1), m = b * f;
  const at::Device device = ground_.device();
  const at::Tensor bytes = ((frames.to(device, at::kDouble) + 1.0) * 127.5)
                               .round()
                               .clamp(0.0, 255.0)
                               .reshape({m, 3, book_.frame_height, book_.frame_width});
  at::Tensor phase;
  if (quarters.defined()) {
    TORCH_CHECK(quarters.sizes() == at::IntArrayRef({b, f}),
                "TileTokenizer: quarters must be [B, F]");
    phase = quarters.to(device, at::kLong).reshape({m}).clamp(0, kQuarters - 1);
  }
  at::Tensor missed = at::zeros({}, longs(device));
  at::Tensor covered;
  at::Tensor row = encode_layers(bytes, phase, covered, missed);
  const int64_t rows = book_.ground_rows(), cols = book_.ground_cols(), t = book_.tile;
  at::Tensor cells;
  if (ground.defined()) {
    TORCH_CHECK(ground.dim() == 5 && ground.size(0) == b && ground.size(1) == f &&
                    ground.size(2) == 3 && ground.size(3) == rows * t && ground.size(4) == cols * t,
                "TileTokenizer: the ground must be [B, F, 3, ", rows * t, ", ", cols * t, "]");
    const at::Tensor tiles =
        patchify(ground.to(device, at::kDouble), t, t).reshape({m * rows * cols, 3 * t * t});
    at::Tensor best;
    cells = nearest(tiles, at::Tensor(), best).view({m, rows, cols});
    missed = missed + (best > 0.5).sum();
  } else {
    const at::Tensor shown = covered.logical_not().to(at::kDouble);
    at::Tensor distance, frame_misses;
    if (phase.defined()) {
      cells = at::empty({m, rows, cols}, longs(device));
      for (int q = 0; q < kQuarters; ++q) {
        const at::Tensor pick = (phase == q).nonzero().view({-1});
        if (pick.numel() == 0) continue;
        cells.index_copy_(0, pick,
                          encode_ground(bytes.index_select(0, pick), shown.index_select(0, pick), q,
                                        distance, frame_misses));
        missed = missed + frame_misses.sum();
      }
    } else {
      std::vector<at::Tensor> options, distances, option_misses;
      for (int q = 0; q < kQuarters; ++q) {
        options.push_back(encode_ground(bytes, shown, q, distance, frame_misses));
        distances.push_back(distance);
        option_misses.push_back(frame_misses);
      }
      phase = at::stack(distances, 1).argmin(1);
      row.select(1, 0).copy_(phase + book_.phase_id(0));
      cells = at::stack(options, 1)
                  .gather(1, phase.view({m, 1, 1, 1}).expand({m, 1, rows, cols}))
                  .squeeze(1);
      missed = missed + at::stack(option_misses, 1).gather(1, phase.view({m, 1})).sum();
    }
  }
  if (misses != nullptr) *misses = missed;
  return at::cat({cells, row.unsqueeze(1)}, 1).view({b, f, book_.grid_h(), cols});
}

at::Tensor TileTokenizer::quarters(const at::Tensor& tokens) const {
  const at::Tensor place = tokens.select(2, book_.ground_rows()).select(2, 0) - book_.phase_id(0);
  return at::where((place >= 0) & (place < kQuarters), place, at::zeros({}, place.options()));
}

at::Tensor TileTokenizer::decode(const at::Tensor& tokens, at::ScalarType dtype) const {
  const at::NoGradGuard no_grad;
  TORCH_CHECK(
      tokens.dim() == 4 && tokens.size(2) == book_.grid_h() && tokens.size(3) == book_.grid_w(),
      "TileTokenizer: tokens must be [B, F, ", book_.grid_h(), ", ", book_.grid_w(), "], got ",
      tokens.sizes());
  const at::Device device = ground_.device();
  const int64_t b = tokens.size(0), f = tokens.size(1), m = b * f;
  const int64_t rows = book_.ground_rows(), cols = book_.ground_cols(), t = book_.tile;
  const int64_t h = book_.frame_height, w = book_.frame_width;
  const at::Tensor ids = tokens.to(device, at::kLong).reshape({m, book_.grid_h(), cols});
  const auto own_kind = [](const at::Tensor& id, int64_t first, int64_t count) {
    const at::Tensor local = id - first;
    return at::where((local >= 0) & (local < count), local, at::zeros({}, local.options()));
  };
  const at::Tensor ground = own_kind(ids.slice(1, 0, rows), 0, book_.ground_size());
  const at::Tensor window =
      unpatchify(ground_unit_.index_select(0, ground.reshape({-1})).view({m, rows * cols, -1}), 1,
                 static_cast<int>(rows), static_cast<int>(cols), 3, static_cast<int>(t),
                 static_cast<int>(t))
          .reshape({m, 3, rows * t * cols * t});
  const at::Tensor overlay = ids.select(1, rows);
  const at::Tensor phase = own_kind(overlay.select(1, 0), book_.phase_id(0), kQuarters);
  const at::Tensor index = crop_index_.index_select(0, phase).unsqueeze(1).expand({m, 3, h * w});
  at::Tensor out = window.gather(2, index).view({m, 3, h, w});
  for (size_t l = 0; l < layers_.size(); ++l) {
    const TileLayer& layer = book_.layers[l];
    const Layer& table = layers_[l];
    const at::Tensor image =
        own_kind(overlay.select(1, 1 + static_cast<int64_t>(l)),
                 book_.layer_first_id(static_cast<int>(l)), table.opaque.size(0));
    const at::Tensor colours =
        table.unit.index_select(0, image).view({m, 3, layer.height, layer.width});
    const at::Tensor opaque =
        table.opaque.index_select(0, image).view({m, 1, layer.height, layer.width});
    at::Tensor region = out.narrow(2, layer.y, layer.height).narrow(3, layer.x, layer.width);
    region.copy_(at::where(opaque, colours, region));
  }
  return out.to(dtype).view({b, f, 3, h, w});
}

}  // namespace wc::model
