#pragma once

#include <memory>

#include "src/backend/backend.hpp"

namespace hb {
std::unique_ptr<Backend> make_cpu_backend();
}
