// Stateless integer hashing: every random-looking choice in the game (terrain, textures, the
// benchmark's action pattern) is a pure function of the seed and coordinates, never a global RNG.
#pragma once

#include <cstddef>
#include <cstdint>

namespace wc::game {

// SplitMix64's finaliser: a bijective mix with good avalanche, cheap enough to call per tile.
inline constexpr uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The hash of tile (x, y) in world `seed`; `salt` separates independent uses (terrain, texture).
inline constexpr uint64_t tile_hash(uint64_t seed, int32_t x, int32_t y, uint32_t salt) {
  const uint64_t xy = (static_cast<uint64_t>(static_cast<uint32_t>(x)) << 32) |
                      static_cast<uint64_t>(static_cast<uint32_t>(y));
  return mix64(mix64(seed ^ (static_cast<uint64_t>(salt) * 0xD6E8FEB86659FD93ull)) ^ xy);
}

// FNV-1a over bytes: a frame fingerprint for determinism checks and benchmark reports.
inline uint64_t hash_bytes(const uint8_t* data, size_t size) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 0x100000001B3ull;
  return h;
}

// Division and remainder rounding towards minus infinity, so negative world coordinates map to
// tiles the same way positive ones do.
inline constexpr int floor_div(int a, int b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}
inline constexpr int floor_mod(int a, int b) {
  return a - floor_div(a, b) * b;
}

}  // namespace wc::game
