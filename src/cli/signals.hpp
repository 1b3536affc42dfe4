// SIGINT and SIGTERM stop the process within a second, wherever it is (a collective, a
// device wait, a write): their handler wakes a thread that removes this process's
// temporaries (io::remove_live_temporaries), logs one line (the first rank only, under
// a launcher that signals every rank) and exits with 128 + the signal's number.
#pragma once

namespace hb::cli {

// Installs the handlers and starts the thread they wake. Call once, early in main.
void stop_cleanly_on_signals();

// The process has printed its error and is ending with `exit_code`: a signal from now
// on (a launcher stopping every rank once one failed) removes the temporaries and ends
// it with that code, without a second line.
void exiting_with(int exit_code);

}  // namespace hb::cli
