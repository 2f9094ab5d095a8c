// Registers every built-in policy with the registry. Add a line here when adding a policy.
#include "engine/attention/builtin_policies.h"

#include "engine/attention/dense_policy.h"
#include "engine/attention/dummy_policy.h"
#include "engine/attention/headcast_policy.h"
#include "engine/attention/registry.h"

namespace wc::attention {

void register_builtin_policy_list() {
  register_policy("dummy", make_dummy_policy);
  register_policy("dense", make_dense_policy);
  register_policy("headcast", make_headcast_policy);
}

}  // namespace wc::attention
