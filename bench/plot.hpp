// bench/plot.hpp: `ferrite bench --plot DIR`: CSV plus PNG plots drawn by bench/plot.py.
//
// write_plots() writes DIR/bench.csv (records_csv) and runs `python3 plot.py DIR/bench.csv
// DIR`, which draws DIR/<workload>.png: ops/s against threads (log2 axis), one line per
// structure with its min-max band, and the oversubscription limit marked. plot.py is found
// at $FERRITE_BENCH_PLOT_SCRIPT, else in the source tree this binary was built from, else
// in <prefix>/share/ferrite/ next to an installed binary. It needs python3-matplotlib; the
// interpreter is $FERRITE_BENCH_PYTHON, else python3, else /usr/bin/python3.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace ferrite::bench {

// Where plot.py is, or an empty path if it is nowhere to be found.
std::filesystem::path plot_script();

// Writes the CSV and runs the plot script; returns the PNG files written. Throws
// ferrite::error (saying what to install or where the CSV is) if plotting fails.
std::vector<std::filesystem::path> write_plots(const std::filesystem::path& dir, const std::string& csv);

}  // namespace ferrite::bench
