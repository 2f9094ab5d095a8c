// Generation-checked handles: a 64-bit value = type tag | generation | slot index, looked up in
// a table of shared_ptrs, so a destroyed object's handle is detected instead of dereferenced
// and a call in flight keeps its object alive while another thread destroys the handle.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

namespace wc::plugin {

// Tags keep a session handle from passing as a runtime handle and vice versa.
enum class HandleTag : uint8_t { kRuntime = 0x52, kSession = 0x53 };

template <typename T>
class HandleTable {
 public:
  explicit HandleTable(HandleTag tag) : tag_(tag) {}

  uint64_t insert(std::shared_ptr<T> object) {
    std::lock_guard<std::mutex> lock(mutex_);
    uint32_t index;
    // Freed slots are reused oldest first, so a stale handle's slot is rarely reoccupied soon;
    // even then its generation differs.
    if (free_.size() > kMinFreeBeforeReuse) {
      index = free_.front();
      free_.pop_front();
    } else {
      index = static_cast<uint32_t>(slots_.size());
      slots_.emplace_back();
    }
    Slot& slot = slots_[index];
    slot.object = std::move(object);
    return make_handle(index, slot.generation);
  }

  // The object, or nullptr for 0, a wrong tag, an unknown slot or a stale generation.
  std::shared_ptr<T> find(uint64_t handle) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const Slot* slot = lookup(handle);
    return slot ? slot->object : nullptr;
  }

  // Invalidates the handle and returns its object (nullptr when the handle is not valid).
  std::shared_ptr<T> remove(uint64_t handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    Slot* slot = const_cast<Slot*>(lookup(handle));
    if (!slot) return nullptr;
    std::shared_ptr<T> object = std::move(slot->object);
    slot->object.reset();
    slot->generation = (slot->generation + 1) & kGenerationMask;
    if (slot->generation == 0) slot->generation = 1;
    free_.push_back(static_cast<uint32_t>(slot - slots_.data()));
    return object;
  }

  // Every live object (for a runtime destroying its sessions).
  std::vector<std::pair<uint64_t, std::shared_ptr<T>>> all() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::pair<uint64_t, std::shared_ptr<T>>> out;
    for (size_t i = 0; i < slots_.size(); ++i) {
      if (slots_[i].object) {
        out.emplace_back(make_handle(static_cast<uint32_t>(i), slots_[i].generation),
                         slots_[i].object);
      }
    }
    return out;
  }

 private:
  static constexpr uint32_t kGenerationMask = 0xffffff;
  static constexpr size_t kMinFreeBeforeReuse = 64;

  struct Slot {
    uint32_t generation = 1;
    std::shared_ptr<T> object;
  };

  uint64_t make_handle(uint32_t index, uint32_t generation) const {
    return (static_cast<uint64_t>(tag_) << 56) | (static_cast<uint64_t>(generation) << 32) | index;
  }

  const Slot* lookup(uint64_t handle) const {
    if ((handle >> 56) != static_cast<uint64_t>(tag_)) return nullptr;
    const uint32_t generation = static_cast<uint32_t>(handle >> 32) & kGenerationMask;
    const uint32_t index = static_cast<uint32_t>(handle);
    if (index >= slots_.size()) return nullptr;
    const Slot& slot = slots_[index];
    if (!slot.object || slot.generation != generation) return nullptr;
    return &slot;
  }

  HandleTag tag_;
  mutable std::mutex mutex_;
  std::vector<Slot> slots_;
  std::deque<uint32_t> free_;
};

}  // namespace wc::plugin
