// Registers every built-in policy with the registry. Add a line here when adding a policy.
#include "engine/attention/builtin_policies.h"

#include "engine/attention/registry.h"

namespace wc::attention {

void register_builtin_policy_list() {
  // e.g. register_policy("dense", make_dense_policy);
}

}  // namespace wc::attention
