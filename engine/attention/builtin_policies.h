// The list of policies that ship with worldcast (called once by the registry).
#pragma once

namespace wc::attention {

void register_builtin_policy_list();

}  // namespace wc::attention
