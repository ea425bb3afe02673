// example.cpp: a small C++17 RAII wrapper around the hhg C API, used on lattices with known
// neighbour counts and on bad input, printing PASS or FAIL for each check.

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "hhg.h"

namespace hhg {

// A failed call: the status code and the library's message naming the offending value.
class Error : public std::runtime_error {
public:
    Error(HhgStatus status, const char *message) : std::runtime_error(message), status_(status) {}

    // The status code the call returned.
    HhgStatus status() const noexcept { return status_; }

private:
    HhgStatus status_;
};

// Throws the library's error unless `status` is HHG_STATUS_OK.
inline void check(HhgStatus status) {
    if (status != HHG_STATUS_OK) {
        throw Error(status, hhg_last_error_message());
    }
}

// A borrowed, read-only range of values inside the search's buffers.
template <typename T>
class View {
public:
    View(const T *begin, std::size_t size) : begin_(begin), size_(size) {}

    const T *begin() const noexcept { return begin_; }
    const T *end() const noexcept { return begin_ + size_; }
    std::size_t size() const noexcept { return size_; }
    const T &operator[](std::size_t k) const noexcept { return begin_[k]; }

private:
    const T *begin_;
    std::size_t size_;
};

// The per-precision entry points of the C API.
template <typename T>
struct Precision;

template <>
struct Precision<float> {
    static constexpr auto create = hhg_search_new_f32;
    static constexpr auto add = hhg_search_add_set_f32;
    static constexpr auto add_soa = hhg_search_add_set_soa_f32;
    static constexpr auto update = hhg_search_update_set_f32;
    static const float *distances(const float *f32, const double *) { return f32; }
};

template <>
struct Precision<double> {
    static constexpr auto create = hhg_search_new_f64;
    static constexpr auto add = hhg_search_add_set_f64;
    static constexpr auto add_soa = hhg_search_add_set_soa_f64;
    static constexpr auto update = hhg_search_update_set_f64;
    static const double *distances(const float *, const double *f64) { return f64; }
};

// Neighbour lists in CSR form, borrowed from the search until it next changes.
template <typename T>
class Lists {
public:
    explicit Lists(const HhgNeighborLists &raw) : raw_(raw) {}

    // Number of lists (points of the searching set).
    std::size_t size() const noexcept { return raw_.count; }
    // Number of entries of all lists.
    std::size_t total() const noexcept { return raw_.total; }
    // The neighbours of point i, ascending.
    View<std::uint32_t> operator[](std::size_t i) const noexcept {
        return {raw_.indices + raw_.offsets[i], raw_.offsets[i + 1] - raw_.offsets[i]};
    }
    // The squared distances to the neighbours of point i (requires distances enabled).
    View<T> distances(std::size_t i) const {
        const T *all = Precision<T>::distances(raw_.distances_f32, raw_.distances_f64);
        if (all == nullptr) {
            throw std::logic_error("distances were not enabled");
        }
        return {all + raw_.offsets[i], raw_.offsets[i + 1] - raw_.offsets[i]};
    }

private:
    HhgNeighborLists raw_;
};

// An owned search handle: freed by the destructor, movable, not copyable.
template <typename T>
class Search {
public:
    using Point = std::array<T, 3>;
    static_assert(sizeof(Point) == 3 * sizeof(T), "std::array<T, 3> must be three packed T");

    explicit Search(T radius) {
        HhgSearch *raw = nullptr;
        check(Precision<T>::create(radius, &raw));
        handle_.reset(raw);
    }

    std::size_t add_set(const std::vector<Point> &points, bool dynamic) {
        std::size_t set = 0;
        const T *xyz = reinterpret_cast<const T *>(points.data());
        check(Precision<T>::add(get(), xyz, points.size(), dynamic, &set));
        return set;
    }

    std::size_t add_set(const std::vector<T> &x, const std::vector<T> &y, const std::vector<T> &z,
                        bool dynamic) {
        if (y.size() != x.size() || z.size() != x.size()) {
            throw std::invalid_argument("coordinate arrays differ in length");
        }
        std::size_t set = 0;
        check(Precision<T>::add_soa(get(), x.data(), y.data(), z.data(), x.size(), dynamic, &set));
        return set;
    }

    void update_set(std::size_t set, const std::vector<Point> &points) {
        const T *xyz = reinterpret_cast<const T *>(points.data());
        check(Precision<T>::update(get(), set, xyz, points.size()));
    }

    void set_active(std::size_t searching, std::size_t searched, bool active = true) {
        check(hhg_search_set_active(get(), searching, searched, active));
    }

    void set_pairs(std::size_t set, bool enabled = true) {
        check(hhg_search_set_pairs(get(), set, enabled));
    }

    void set_with_distances(bool with_distances = true) {
        check(hhg_search_set_with_distances(get(), with_distances));
    }

    void find_neighbors() { check(hhg_search_find_neighbors(get())); }

    Lists<T> neighbors(std::size_t searching, std::size_t searched) const {
        HhgNeighborLists raw;
        check(hhg_search_neighbors(get(), searching, searched, &raw));
        return Lists<T>(raw);
    }

    // The unique pairs of a set as 2 * count indices.
    View<std::uint32_t> pairs(std::size_t set) const {
        HhgPairList raw;
        check(hhg_search_pairs(get(), set, &raw));
        return {raw.pairs, 2 * raw.count};
    }

    View<std::uint32_t> order(std::size_t set) const {
        const std::uint32_t *order = nullptr;
        std::size_t len = 0;
        check(hhg_search_order(get(), set, &order, &len));
        return {order, len};
    }

private:
    struct Free {
        void operator()(HhgSearch *search) const noexcept { hhg_search_free(search); }
    };

    HhgSearch *get() const noexcept { return handle_.get(); }

    std::unique_ptr<HhgSearch, Free> handle_;
};

}  // namespace hhg

namespace {

constexpr int N = 10;
constexpr std::size_t FLUID = N * N * N;
constexpr std::size_t PLATE = N * N;

int passed = 0;
int failed = 0;

// Records one check and prints it as PASS or FAIL.
void check(bool ok, const std::string &what) {
    std::printf("%s %s\n", ok ? "PASS" : "FAIL", what.c_str());
    (ok ? passed : failed) += 1;
}

std::size_t at(int x, int y, int z) { return static_cast<std::size_t>(x + N * y + N * N * z); }

// How many of the two neighbours along one axis exist at lattice coordinate c.
int sides(int c) { return (c > 0) + (c < N - 1); }

// The known neighbour count: axis neighbours, plus face diagonals when `diagonals` is set.
std::size_t lattice_count(int x, int y, int z, bool diagonals) {
    int count = sides(x) + sides(y) + sides(z);
    if (diagonals) {
        count += sides(x) * sides(y) + sides(x) * sides(z) + sides(y) * sides(z);
    }
    return static_cast<std::size_t>(count);
}

// Runs one lattice scene in precision T and checks it against the known counts.
template <typename T>
void lattice_scene(const char *name, T radius, bool diagonals) {
    std::printf("== %s, radius %.6f\n", name, static_cast<double>(radius));
    // The fluid as three coordinate arrays, the plate at z = -1 as points.
    std::vector<T> x, y, z;
    for (int k = 0; k < N; ++k) {
        for (int j = 0; j < N; ++j) {
            for (int i = 0; i < N; ++i) {
                x.push_back(static_cast<T>(i));
                y.push_back(static_cast<T>(j));
                z.push_back(static_cast<T>(k));
            }
        }
    }
    std::vector<typename hhg::Search<T>::Point> plate;
    for (int j = 0; j < N; ++j) {
        for (int i = 0; i < N; ++i) {
            plate.push_back({static_cast<T>(i), static_cast<T>(j), T(-1)});
        }
    }

    hhg::Search<T> search(radius);
    search.set_with_distances();
    const std::size_t fluid = search.add_set(x, y, z, true);
    const std::size_t boundary = search.add_set(plate, false);
    search.set_active(fluid, fluid);
    search.set_active(fluid, boundary);
    search.set_pairs(fluid);
    search.find_neighbors();

    const std::size_t axis_edges = 3 * N * N * (N - 1);
    const std::size_t diagonal_edges = diagonals ? 3 * N * 2 * (N - 1) * (N - 1) : 0;
    const auto lists = search.neighbors(fluid, fluid);
    check(lists.size() == FLUID, "fluid lists: " + std::to_string(lists.size()) + " lists");
    check(lists.total() == 2 * (axis_edges + diagonal_edges),
          "fluid lists: " + std::to_string(lists.total()) + " neighbours in total (expected " +
              std::to_string(2 * (axis_edges + diagonal_edges)) + ")");
    check(lists[at(5, 5, 5)].size() == (diagonals ? 18u : 6u),
          "interior point: " + std::to_string(lists[at(5, 5, 5)].size()) + " neighbours");
    check(lists[at(0, 0, 0)].size() == (diagonals ? 6u : 3u),
          "corner point: " + std::to_string(lists[at(0, 0, 0)].size()) + " neighbours");
    bool counts = true;
    bool sorted_and_near = true;
    for (int k = 0; k < N; ++k) {
        for (int j = 0; j < N; ++j) {
            for (int i = 0; i < N; ++i) {
                const std::size_t p = at(i, j, k);
                const auto neighbours = lists[p];
                const auto distances = lists.distances(p);
                counts = counts && neighbours.size() == lattice_count(i, j, k, diagonals);
                for (std::size_t m = 0; m < neighbours.size(); ++m) {
                    const std::uint32_t q = neighbours[m];
                    const T dx = x[q] - x[p], dy = y[q] - y[p], dz = z[q] - z[p];
                    sorted_and_near = sorted_and_near && q != p &&
                                      (m == 0 || neighbours[m - 1] < q) &&
                                      distances[m] == (dx * dx + dy * dy) + dz * dz &&
                                      distances[m] <= radius * radius;
                }
            }
        }
    }
    check(counts, "every fluid point has its lattice neighbour count");
    check(sorted_and_near, "lists ascend, exclude the point, and carry exact squared distances");

    const auto pairs = search.pairs(fluid);
    check(pairs.size() / 2 == axis_edges + diagonal_edges,
          "unique pairs: " + std::to_string(pairs.size() / 2));
    bool ordered = true;
    for (std::size_t k = 0; k < pairs.size(); k += 2) {
        ordered = ordered && pairs[k] < pairs[k + 1];
    }
    check(ordered, "every pair (i, j) has i < j");

    const auto under = search.neighbors(fluid, boundary);
    const std::size_t expected = PLATE + (diagonals ? 4 * N * (N - 1) : 0);
    check(under.total() == expected,
          "fluid in boundary: " + std::to_string(under.total()) + " neighbours (expected " +
              std::to_string(expected) + ")");

    std::vector<bool> seen(FLUID, false);
    bool permutation = search.order(fluid).size() == FLUID;
    for (const std::uint32_t i : search.order(fluid)) {
        permutation = permutation && i < FLUID && !seen[i];
        if (i < FLUID) {
            seen[i] = true;
        }
    }
    check(permutation, "the fluid's order is a permutation");

    // A moved fluid: lifted by a quarter spacing, its bottom layer is 1.25 above the plate,
    // beyond radius 1 but within sqrt(2) of the plate point right under each point only.
    std::vector<typename hhg::Search<T>::Point> lifted;
    for (std::size_t p = 0; p < FLUID; ++p) {
        lifted.push_back({x[p], y[p], z[p] + T(0.25)});
    }
    search.update_set(fluid, lifted);
    search.find_neighbors();
    check(search.neighbors(fluid, boundary).total() == (diagonals ? PLATE : 0),
          "the lifted fluid sees " + std::to_string(search.neighbors(fluid, boundary).total()) +
              " plate points");
}

// Runs `body`, which must throw hhg::Error with `status`; checks the code and the message.
template <typename Body>
void expect_error(const std::string &what, HhgStatus status, const std::string &message,
                  Body body) {
    try {
        body();
        check(false, what + ": no error");
    } catch (const hhg::Error &error) {
        check(error.status() == status && message == error.what(),
              what + ": " + hhg_error_message(error.status()) + " (\"" + error.what() + "\")");
    }
}

void errors() {
    std::printf("== errors\n");
    expect_error("a negative radius", HHG_STATUS_INVALID_RADIUS,
                 "the search radius must be finite and > 0 with a finite, normal square in the "
                 "input precision, got -1",
                 [] { hhg::Search<double> search(-1.0); });
    expect_error("a NaN coordinate", HHG_STATUS_NON_FINITE_COORDINATE,
                 "point 2 has a non-finite z coordinate (NaN)", [] {
                     hhg::Search<float> search(1.0f);
                     const float nan = std::numeric_limits<float>::quiet_NaN();
                     search.add_set({{0, 0, 0}, {1, 0, 0}, {0, 0, nan}}, true);
                 });
    expect_error("an unknown set", HHG_STATUS_UNKNOWN_POINT_SET,
                 "point set 4 does not exist (the search holds 0)", [] {
                     hhg::Search<float> search(1.0f);
                     search.set_pairs(4);
                 });
    expect_error("pairs never enabled", HHG_STATUS_NOT_SEARCHED,
                 "the unique pairs of set 0 are not enabled: call hhg_search_set_pairs, then "
                 "hhg_search_find_neighbors",
                 [] {
                     hhg::Search<double> search(1.0);
                     search.add_set({{0, 0, 0}}, false);
                     search.find_neighbors();
                     search.pairs(0);
                 });
    // The handle moves with its owner and is freed exactly once.
    hhg::Search<double> first(1.0);
    hhg::Search<double> second(std::move(first));
    second.add_set({{0, 0, 0}, {0.5, 0, 0}}, true);
    second.set_active(0, 0);
    second.find_neighbors();
    check(second.neighbors(0, 0).total() == 2, "a moved search keeps working");
}

}  // namespace

int main() {
    std::printf("hhg %s, C++ example\n", hhg_version());
    try {
        lattice_scene<double>("double, face diagonals", std::sqrt(2.0) * 1.0001, true);
        lattice_scene<float>("float, axes", 1.0f, false);
        errors();
    } catch (const std::exception &error) {
        check(false, std::string("unexpected exception: ") + error.what());
    }
    std::printf("%s\nexample_cpp: %d passed, %d failed\n", failed == 0 ? "PASS" : "FAIL", passed,
                failed);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
