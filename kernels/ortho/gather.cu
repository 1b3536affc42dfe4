#include "kernels/ortho/gather.cuh"

namespace hb::kernels::ortho {
namespace {

// One thread per (pixel, word); Word is 4 bytes when pixel_bytes allows, else 1.
template <class Word>
__global__ void gather_words(GatherArgs a) {
  const std::int64_t words = a.pixel_bytes / static_cast<std::int64_t>(sizeof(Word));
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= a.pixels * words) return;
  const std::int64_t pixel = i / words;
  const std::int64_t word = i - pixel * words;
  const std::int32_t s = a.sample[pixel];
  const std::int32_t l = a.line[pixel];
  const Word* from = reinterpret_cast<const Word*>(a.fill);
  if (s >= 0 && l >= 0)
    from = reinterpret_cast<const Word*>(a.source) + ((l - a.source_first_line) * a.source_samples + s) * words;
  reinterpret_cast<Word*>(a.out)[i] = from[word];
}

}  // namespace

cudaError_t launch_gather(const GatherArgs& args, cudaStream_t stream) {
  constexpr int kThreads = 256;
  const bool wide = args.pixel_bytes % 4 == 0;
  const std::int64_t items = args.pixels * (wide ? args.pixel_bytes / 4 : args.pixel_bytes);
  if (items == 0) return cudaSuccess;
  const auto blocks = static_cast<unsigned>((items + kThreads - 1) / kThreads);
  if (wide) gather_words<std::uint32_t><<<blocks, kThreads, 0, stream>>>(args);
  else gather_words<std::uint8_t><<<blocks, kThreads, 0, stream>>>(args);
  return cudaGetLastError();
}

}  // namespace hb::kernels::ortho
