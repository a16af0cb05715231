// SIGINT handling shared by the command line and the executors.
#pragma once

namespace warpcsv {

// True once SIGINT arrived; long loops poll it and stop (main then exits 130).
bool interrupted();

// Installs the process signal handling: SIGPIPE ignored (writes then fail with
// EPIPE, which writers turn into OutputClosed); the first SIGINT sets
// interrupted(), a second one exits at once with 130.
void install_signal_handlers();

// A file this run made that nothing was written to yet (-o): a signal that
// ends the run at once (an input truncated under it) removes it, as a failed
// run does. Empty: none.
void set_made_file(const char* path);

}  // namespace warpcsv
