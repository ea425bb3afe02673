// compactnsearch_timing.cpp: times the C++ layer hhg/compactnsearch.hpp against the C API it
// wraps on the same moving cloud (1M points by default, about 40 neighbours each): the search
// step (positions handed over, lists built) and a pass over every neighbour (through the view
// neighbor_list and through n_neighbors + neighbor(k)), with equal checksums.
//
// Build against an optimised library, e.g.
//   cargo xtask install --prefix /tmp/hhg --profile bench-fast
//   c++ -std=c++17 -O2 -I/tmp/hhg/include compactnsearch_timing.cpp /tmp/hhg/lib/libhhg.a
//       -lpthread -ldl -lm -o timing
//   ./timing [points] [steps]

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "hhg/compactnsearch.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using hhg::compactnsearch::Real;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

// A small deterministic generator (SplitMix64).
struct Random {
    std::uint64_t state;
    double next() {
        state += 0x9E3779B97F4A7C15ull;
        std::uint64_t z = state;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        return double(z >> 11) / double(1ull << 53);
    }
};

// Moves every coordinate by a small random step, as a time step of a simulation would.
void jitter(std::vector<Real> &positions, Random &random) {
    for (Real &c : positions) {
        c += Real(0.02 * (random.next() - 0.5));
    }
}

void check(HhgStatus status) {
    if (status != HHG_STATUS_OK) {
        std::fprintf(stderr, "hhg: %s\n", hhg_last_error_message());
        std::exit(EXIT_FAILURE);
    }
}

}  // namespace

int main(int argc, char **argv) {
    const std::size_t n = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1000000;
    const int steps = argc > 2 ? std::atoi(argv[2]) : 7;
    const double radius = 1.0;
    // About 40 neighbours per point: density 40 / (4/3 pi r^3).
    const double side = std::cbrt(double(n) * (4.0 / 3.0) * 3.14159265358979 / 40.0);
    Random random{1};
    std::vector<Real> positions(3 * n);
    for (Real &c : positions) {
        c = Real(side * random.next());
    }

    // The layer, as a CompactNSearch user writes it.
    hhg::compactnsearch::NeighborhoodSearch layer(Real(radius), true);
    const unsigned int set = layer.add_point_set(positions.data(), n);

    // The C API, as a C user writes it.
    HhgSearch *c_search = nullptr;
#ifdef HHG_CNS_USE_DOUBLE
    check(hhg_search_new_f64(radius, &c_search));
    std::size_t c_set = 0;
    check(hhg_search_add_set_f64(c_search, positions.data(), n, true, &c_set));
#else
    check(hhg_search_new_f32(float(radius), &c_search));
    std::size_t c_set = 0;
    check(hhg_search_add_set_f32(c_search, positions.data(), n, true, &c_set));
#endif
    check(hhg_search_set_active(c_search, c_set, c_set, true));

    std::vector<double> layer_search, layer_pass, layer_view_pass, c_search_s, c_pass;
    std::uint64_t layer_sum = 0, c_sum = 0, entries = 0;
    for (int step = 0; step < steps; ++step) {
        jitter(positions, random);
        // Alternate which one runs first, so that neither always finds the caches warm.
        for (int turn = 0; turn < 2; ++turn) {
            if ((turn == 0) == (step % 2 == 0)) {
                Clock::time_point start = Clock::now();
                layer.find_neighbors();
                layer_search.push_back(seconds_since(start));
                start = Clock::now();
                const auto &points = layer.point_set(set);
                std::uint64_t sum = 0;
                for (unsigned int i = 0; i < n; ++i) {
                    const std::size_t count = points.n_neighbors(set, i);
                    for (std::size_t k = 0; k < count; ++k) {
                        sum += points.neighbor(set, i, static_cast<unsigned int>(k)) ^ i;
                    }
                }
                layer_pass.push_back(seconds_since(start));
                layer_sum = sum;
                // The same pass through neighbor_list, the view of one point's neighbours.
                start = Clock::now();
                sum = 0;
                for (unsigned int i = 0; i < n; ++i) {
                    for (unsigned int q : points.neighbor_list(set, i)) {
                        sum += q ^ i;
                    }
                }
                layer_view_pass.push_back(seconds_since(start));
                if (sum != layer_sum) {
                    std::fprintf(stderr, "step %d: neighbor_list and neighbor disagree\n", step);
                    return EXIT_FAILURE;
                }
            } else {
                Clock::time_point start = Clock::now();
#ifdef HHG_CNS_USE_DOUBLE
                check(hhg_search_update_set_f64(c_search, c_set, positions.data(), n));
#else
                check(hhg_search_update_set_f32(c_search, c_set, positions.data(), n));
#endif
                check(hhg_search_find_neighbors(c_search));
                HhgNeighborLists lists;
                check(hhg_search_neighbors(c_search, c_set, c_set, &lists));
                c_search_s.push_back(seconds_since(start));
                start = Clock::now();
                std::uint64_t sum = 0;
                for (std::size_t i = 0; i < lists.count; ++i) {
                    for (std::size_t k = lists.offsets[i]; k < lists.offsets[i + 1]; ++k) {
                        sum += lists.indices[k] ^ std::uint32_t(i);
                    }
                }
                c_pass.push_back(seconds_since(start));
                c_sum = sum;
                entries = lists.total;
            }
        }
        if (layer_sum != c_sum) {
            std::fprintf(stderr, "step %d: the checksums differ (%llu, %llu)\n", step,
                         (unsigned long long)layer_sum, (unsigned long long)c_sum);
            return EXIT_FAILURE;
        }
    }
    check(hhg_search_free(c_search));

    std::printf("%zu points (%s), %.1f neighbours per point, %d steps, medians:\n", n,
                sizeof(Real) == 4 ? "float" : "double", double(entries) / double(n), steps);
    std::printf("  %-34s %10s %10s\n", "", "search ms", "pass ms");
    std::printf("  %-34s %10.2f %10.2f\n", "C API (CSR offsets and indices)", 1e3 * median(c_search_s),
                1e3 * median(c_pass));
    std::printf("  %-34s %10.2f %10.2f\n", "layer, neighbor_list(set, i)", 1e3 * median(layer_search),
                1e3 * median(layer_view_pass));
    std::printf("  %-34s %10s %10.2f\n", "layer, n_neighbors + neighbor(k)", "", 1e3 * median(layer_pass));
    std::printf("  layer / C API: search %.3f, pass with neighbor_list %.3f, with neighbor(k) %.3f\n",
                median(layer_search) / median(c_search_s), median(layer_view_pass) / median(c_pass),
                median(layer_pass) / median(c_pass));
    return EXIT_SUCCESS;
}
