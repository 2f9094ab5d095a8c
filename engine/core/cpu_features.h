// Which OpenBLAS kernels suit the host CPU, and which ones the process got.
#pragma once

#include <string>

namespace wc {

// Note [OpenBLAS kernels]
// LibTorch multiplies float32 matrices on the CPU through the system BLAS, Debian's OpenBLAS,
// which picks its kernels once, when it loads, from the CPU's family and model numbers. Under
// a hypervisor that hides the model (the CPU reads as a plain "Intel Xeon Processor"), it falls
// back to its Prescott kernels, SSE3 only, and a CPU with AVX-512 multiplies the world model's
// small products five to six times slower than it can. What the instructions allow is read from
// CPUID and XGETBV (the operating system's consent to the vector state), never from a timing,
// so one machine always makes the same choice. OpenBLAS takes a family named in
// OPENBLAS_CORETYPE before it loads, so `./wc` sets it and `worldcast` runs itself again with
// it; a host of the plugin is told in a log line. A family the user sets is never overridden.

// The OpenBLAS kernel family this CPU's instructions allow: "SkylakeX" with AVX-512 (F, CD, BW,
// DQ, VL) the OS saves, "Haswell" with AVX2 and FMA, "" for anything less.
std::string blas_kernels_for_cpu();

// The family OpenBLAS chose in this process (openblas_get_corename), "" when the BLAS loaded is
// not OpenBLAS.
std::string blas_kernels_in_use();

// The family to ask for: blas_kernels_for_cpu() when OpenBLAS chose one of its generic
// fallbacks below it and OPENBLAS_CORETYPE is unset; "" when nothing is to be gained.
std::string blas_kernels_to_ask_for();

}  // namespace wc
