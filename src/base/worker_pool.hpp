// Threads that live as long as the process and run the pieces of parallel host work
// (reads split over threads, data-parallel loops), so that a tile's work starts no
// thread. The statistics pass reads a 38 MB tile in up to 16 pieces every 2-3 ms: with
// 8 readers started for each tile, a 5 GB flightline's pass took 0.36-0.42 s, with them
// kept here 0.28-0.32 s (docs/PERFORMANCE.md, "Scene bytes to the GPU").
#pragma once

#include <functional>

namespace hb {

// Runs piece(0 .. pieces - 1) and returns when every one has run: piece 0, and any piece
// still queued while the caller waits, on the caller's thread; the others on the pool's
// threads, started as calls first need them (up to the most pieces one call asked for,
// less one). Calls may overlap and nest.
void run_pieces(unsigned pieces, const std::function<void(unsigned)>& piece);

}  // namespace hb
