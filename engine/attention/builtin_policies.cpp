// Registers every built-in policy with the registry. Add a line here when adding a policy.
#include "engine/attention/builtin_policies.h"

#include "engine/attention/ann/annsa_policy.h"
#include "engine/attention/dense_policy.h"
#include "engine/attention/dummy/dummy_policy.h"
#include "engine/attention/headcast/headcast_policy.h"
#include "engine/attention/registry.h"
#include "engine/attention/tempcache/combined_policy.h"
#include "engine/attention/tempcache/tempcache_policy.h"

namespace wc::attention {

void register_builtin_policy_list() {
  register_policy("dummy", make_dummy_policy);
  register_policy("dense", make_dense_policy);
  register_policy("headcast", make_headcast_policy);
  register_policy("tempcache", make_tempcache_policy);
  register_policy("headcast+tempcache", make_combined_policy);
  register_policy("combined", make_combined_policy);
  register_policy("annsa", make_annsa_policy);
  register_policy("fast-ar", make_fast_ar_policy);
}

}  // namespace wc::attention
