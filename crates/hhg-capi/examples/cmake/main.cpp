// main.cpp: the program of the CMake example, a CompactNSearch-style use of hhg on a cubic
// lattice whose neighbour counts are known (6 face neighbours inside radius 1.2 spacings, 18
// inside 1.5), checked for every interior point; exits non-zero on a wrong count.

#include <cstddef>
#include <cstdio>
#include <utility>
#include <vector>

#include <hhg/compactnsearch.hpp>

int main() {
    using hhg::compactnsearch::NeighborhoodSearch;
    using hhg::compactnsearch::Real;
    const int side = 12;
    std::vector<Real> positions;
    for (int i = 0; i < side; ++i)
        for (int j = 0; j < side; ++j)
            for (int k = 0; k < side; ++k) {
                positions.push_back(Real(i));
                positions.push_back(Real(j));
                positions.push_back(Real(k));
            }
    const std::size_t n = positions.size() / 3;
    int wrong = 0;
    for (const auto &expected : {std::pair<Real, std::size_t>{Real(1.2), 6}, {Real(1.5), 18}}) {
        NeighborhoodSearch search(expected.first);
        const unsigned int lattice = search.add_point_set(positions.data(), n);
        search.find_neighbors();
        const auto &set = search.point_set(lattice);
        for (unsigned int p = 0; p < n; ++p) {
            const int i = int(p) / (side * side), j = int(p) / side % side, k = int(p) % side;
            const bool interior = i > 0 && j > 0 && k > 0 && i < side - 1 && j < side - 1 && k < side - 1;
            if (interior && set.n_neighbors(lattice, p) != expected.second) {
                ++wrong;
            }
        }
        std::printf("hhg %s, radius %.1f: every interior point has %zu neighbours: %s\n",
                    hhg_version(), double(expected.first), expected.second, wrong == 0 ? "yes" : "NO");
    }
    return wrong == 0 ? 0 : 1;
}
