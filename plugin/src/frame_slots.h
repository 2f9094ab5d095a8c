// Which slots of a frame ring the host holds, and the release tokens naming them: a token is
// (serial << 16) | (kind << 8) | slot with a per-ring serial, so a token released twice or a
// token from another kind or an older write is recognised and rejected.
#pragma once

#include <cstdint>
#include <vector>

namespace wc::plugin {

class FrameSlots {
 public:
  FrameSlots(int count, uint8_t kind) : kind_(kind), slots_(static_cast<size_t>(count)) {}

  // Marks a free slot held and returns it, or -1 when the host holds them all. Slots are
  // handed out round-robin so the most recently released slot is reused last.
  int acquire() {
    const int count = static_cast<int>(slots_.size());
    for (int i = 1; i <= count; ++i) {
      const int slot = (last_ + i) % count;
      Slot& s = slots_[static_cast<size_t>(slot)];
      if (!s.held) {
        s.held = true;
        s.serial = ++serial_;
        last_ = slot;
        return slot;
      }
    }
    return -1;
  }

  // Undoes acquire() when writing into the slot failed.
  void cancel(int slot) { slots_[static_cast<size_t>(slot)].held = false; }

  uint64_t token(int slot) const {
    return (slots_[static_cast<size_t>(slot)].serial << 16) | (static_cast<uint64_t>(kind_) << 8) |
           static_cast<uint64_t>(slot);
  }

  // Whether `token` names a slot of this ring (any serial).
  bool owns(uint64_t token) const {
    return ((token >> 8) & 0xff) == kind_ && (token & 0xff) < slots_.size() && (token >> 16) != 0;
  }

  // Frees the slot named by `token`; false when it is not currently held under that token.
  bool release(uint64_t token) {
    if (!owns(token)) return false;
    Slot& s = slots_[static_cast<size_t>(token & 0xff)];
    if (!s.held || s.serial != (token >> 16)) return false;
    s.held = false;
    return true;
  }

  int held() const {
    int n = 0;
    for (const Slot& s : slots_) n += s.held ? 1 : 0;
    return n;
  }

 private:
  struct Slot {
    bool held = false;
    uint64_t serial = 0;
  };
  uint8_t kind_;
  std::vector<Slot> slots_;
  uint64_t serial_ = 0;
  int last_ = -1;
};

}  // namespace wc::plugin
