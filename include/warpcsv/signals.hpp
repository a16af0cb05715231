// SIGINT handling shared by the command line and the executors.
#pragma once

namespace warpcsv {

// True once SIGINT arrived; long loops poll it and stop (main then exits 130).
bool interrupted();

// Installs the process signal handling: SIGPIPE ignored (writes then fail with
// EPIPE, which writers turn into OutputClosed); the first SIGINT sets
// interrupted(), a second one exits at once with 130.
void install_signal_handlers();

}  // namespace warpcsv
