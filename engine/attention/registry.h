// Policies are created by name from JSON settings, so the CLI, the panel, the plugin and the
// benchmarks all reach them the same way (DESIGN.md §5).
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/attention/attention_policy.h"

namespace wc::attention {

using PolicyFactory = std::function<std::unique_ptr<AttentionPolicy>(
    const ModelShape& shape, const nlohmann::json& settings)>;

// Registers a factory under `name` (done once per policy, in registry.cpp).
void register_policy(const std::string& name, PolicyFactory factory);

// Creates the policy `name` configured with `settings` (a JSON object; may be empty). Throws
// wc::Error for an unknown name (listing the known ones) or bad settings (naming the key).
std::unique_ptr<AttentionPolicy> create_policy(
    const std::string& name, const ModelShape& shape,
    const nlohmann::json& settings = nlohmann::json::object());

std::vector<std::string> policy_names();

}  // namespace wc::attention
