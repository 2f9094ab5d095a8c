// The colours of the training data, for the token model's codebook (`worldcast codebook`): the
// pixels of the clips a training config makes, counted exactly, and clustered when too many.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "engine/train/training_clip.h"

namespace wc::train {

using Rgb = std::array<uint8_t, 3>;

struct PaletteSurvey {
  std::vector<Rgb> colours;    // the palette, the most common first
  std::vector<double> shares;  // each colour's share of the surveyed pixels (its cluster's)
  int64_t pixels = 0;          // pixels surveyed
  int64_t distinct = 0;        // distinct colours among them
  // Root-mean-square distance (bytes, over R, G, B) of a surveyed pixel to its nearest palette
  // colour: 0 when every colour seen is in the palette.
  double rms_error = 0.0;
};

// Surveys the frames of training batches 0 .. batches − 1 of (`spec`, `batch_size`, `seed`), the
// very clips a training run with those settings starts on. When more than `max_colours` distinct
// colours appear, the palette is the centres of a k-means clustering (weighted by pixel counts,
// seeded with the most common colours). Throws wc::Error for a batches or max_colours below 1.
PaletteSurvey survey_palette(const ClipSpec& spec, int batch_size, uint64_t seed, int batches,
                             int max_colours);

// The survey of `pixels` (RGB bytes, 3 per pixel) alone; survey_palette's counting and clustering.
PaletteSurvey survey_pixels(const std::vector<uint8_t>& pixels, int max_colours);

}  // namespace wc::train
