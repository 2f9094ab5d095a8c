// The plugin's handle table with real threads (label threads, built by the tsan preset): every
// wc_* call looks its handle up here while other threads create and destroy sessions, so the
// lookups, inserts and removals must be race-free, a removed handle must never be found again,
// and a call in flight must keep its object alive while another thread destroys the handle.
#include "plugin/src/handle_table.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace wc::plugin {
namespace {

struct Counted {
  explicit Counted(std::atomic<int>* destroyed) : destroyed(destroyed) {}
  ~Counted() { destroyed->fetch_add(1); }
  std::atomic<int>* destroyed;
  // Several threads may hold the same object at once (each found it by its handle), so the
  // count they bump is atomic; the table itself does not serialise calls on an object.
  std::atomic<int64_t> uses{0};
};

TEST(HandleTableThreads, InsertsLookupsAndRemovesFromManyThreads) {
  HandleTable<Counted> table(HandleTag::kSession);
  std::atomic<int> destroyed{0};
  constexpr int kThreads = 4, kRounds = 400;
  std::vector<std::vector<uint64_t>> removed(kThreads);
  std::atomic<uint64_t> latest{0};  // some live (or just removed) handle, for the others to find
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRounds; ++i) {
        const uint64_t handle = table.insert(std::make_shared<Counted>(&destroyed));
        latest.store(handle);
        // Another thread's handle: found or already gone, never someone else's object.
        if (std::shared_ptr<Counted> other = table.find(latest.load())) other->uses.fetch_add(1);
        ASSERT_NE(table.find(handle), nullptr);
        if (i % 7 == 0) (void)table.all();
        ASSERT_NE(table.remove(handle), nullptr);
        removed[static_cast<size_t>(t)].push_back(handle);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(destroyed.load(), kThreads * kRounds);
  EXPECT_TRUE(table.all().empty());
  for (const std::vector<uint64_t>& handles : removed) {
    for (uint64_t handle : handles) {
      EXPECT_EQ(table.find(handle), nullptr);
      EXPECT_EQ(table.remove(handle), nullptr);
    }
  }
}

TEST(HandleTableThreads, ACallInFlightKeepsItsObjectWhileAnotherThreadDestroysIt) {
  HandleTable<Counted> table(HandleTag::kRuntime);
  std::atomic<int> destroyed{0};
  const uint64_t handle = table.insert(std::make_shared<Counted>(&destroyed));
  std::mutex mutex;
  std::condition_variable changed;
  bool found = false, removed = false;
  std::thread call([&] {
    std::shared_ptr<Counted> object = table.find(handle);
    ASSERT_NE(object, nullptr);
    {
      std::unique_lock<std::mutex> lock(mutex);
      found = true;
      changed.notify_all();
      changed.wait(lock, [&] { return removed; });
    }
    // The handle is gone, the object is not: the call finishes its work on it.
    EXPECT_EQ(table.find(handle), nullptr);
    EXPECT_EQ(destroyed.load(), 0);
    for (int i = 0; i < 1000; ++i) object->uses.fetch_add(1);
    EXPECT_EQ(object->uses.load(), 1000);
  });
  {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return found; });
  }
  EXPECT_NE(table.remove(handle), nullptr);  // the destroying thread drops its reference here
  {
    std::lock_guard<std::mutex> lock(mutex);
    removed = true;
    changed.notify_all();
  }
  call.join();
  EXPECT_EQ(destroyed.load(), 1);
}

}  // namespace
}  // namespace wc::plugin
