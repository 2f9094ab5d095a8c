// The policy registry. Built-in policies are registered here explicitly (not through static
// initialisers, which a static library may drop at link time).
#include "engine/attention/registry.h"

#include <map>
#include <mutex>
#include <sstream>

#include "engine/attention/builtin_policies.h"
#include "engine/core/error.h"

namespace wc::attention {
namespace {

std::map<std::string, PolicyFactory>& factories() {
  static std::map<std::string, PolicyFactory> map;
  return map;
}

std::mutex& registry_mutex() {
  static std::mutex mutex;
  return mutex;
}

void register_builtin_policies() {
  static std::once_flag once;
  std::call_once(once, [] { register_builtin_policy_list(); });
}

}  // namespace

void register_policy(const std::string& name, PolicyFactory factory) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  factories()[name] = std::move(factory);
}

std::unique_ptr<AttentionPolicy> create_policy(const std::string& name, const ModelShape& shape,
                                               const nlohmann::json& settings) {
  register_builtin_policies();
  PolicyFactory factory;
  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    const auto it = factories().find(name);
    if (it == factories().end()) {
      std::ostringstream known;
      for (const auto& [known_name, unused] : factories()) known << " " << known_name;
      throw Error("policy", "unknown policy '" + name + "' (known:" + known.str() + ")");
    }
    factory = it->second;
  }
  if (!settings.is_object()) throw Error("policy " + name, "settings must be a JSON object");
  return factory(shape, settings);
}

std::vector<std::string> policy_names() {
  register_builtin_policies();
  std::lock_guard<std::mutex> lock(registry_mutex());
  std::vector<std::string> names;
  for (const auto& [name, unused] : factories()) names.push_back(name);
  return names;
}

}  // namespace wc::attention
