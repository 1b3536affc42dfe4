#include "src/synth/synth.hpp"
// PLACEHOLDER: being implemented.
namespace hb::synth {
Result<SynthOutputs> write_synthetic_scene(const std::string& out, const SynthOptions&, const Progress&) {
  return Error{ErrorKind::internal, out, {}, "not implemented"};
}
}  // namespace hb::synth
