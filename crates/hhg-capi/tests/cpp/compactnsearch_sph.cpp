// compactnsearch_sph.cpp: the C++ layer hhg/compactnsearch.hpp used as an SPH code uses
// CompactNSearch (a moving fluid and a static boundary with activation, Enright advection,
// z_sort with sort_field, single-point and any-position queries, resize_point_set), every
// result checked against brute force. Built in float and, with -DHHG_CNS_USE_DOUBLE, in double
// by tests/compactnsearch_layer.rs; prints one line per check and exits non-zero on a failure.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "hhg/compactnsearch.hpp"

using hhg::compactnsearch::Error;
using hhg::compactnsearch::NeighborhoodSearch;
using hhg::compactnsearch::PointSet;
using hhg::compactnsearch::Real;

namespace {

// A position as SPH codes store it: three Real in a row, sorted as one value by sort_field.
struct Vec3 {
    Real x, y, z;
};

const double pi = 3.14159265358979323846;

int failures = 0;

// Prints a check's outcome and counts failures.
void report(bool passed, const std::string &what) {
    std::printf("%s %s\n", passed ? "PASS" : "FAIL", what.c_str());
    if (!passed) {
        ++failures;
    }
}

// Squared distance computed in double, for the oracle.
double distance_squared(const Vec3 &a, const Vec3 &b) {
    const double dx = double(a.x) - double(b.x);
    const double dy = double(a.y) - double(b.y);
    const double dz = double(a.z) - double(b.z);
    return dx * dx + dy * dy + dz * dz;
}

// The verdict of the oracle on one pair: surely a neighbour, surely not, or within rounding of
// the radius (where Real arithmetic may decide either way).
enum class Oracle { In, Out, Either };

Oracle oracle(const Vec3 &a, const Vec3 &b, Real radius) {
    const double r2 = double(radius) * double(radius);
    const double tolerance = r2 * 8.0 * double(std::numeric_limits<Real>::epsilon());
    const double d2 = distance_squared(a, b);
    if (d2 < r2 - tolerance) {
        return Oracle::In;
    }
    if (d2 > r2 + tolerance) {
        return Oracle::Out;
    }
    return Oracle::Either;
}

// Checks a reported neighbour list of `query` in `set` against brute force: ascending, without
// `exclude` (the point itself, or SIZE_MAX), with every sure neighbour and no sure non-neighbour.
// Returns an empty string or the first problem.
template <class List>
std::string check_list(const List &reported, const Vec3 &query, const std::vector<Vec3> &set,
                       Real radius, std::size_t exclude) {
    std::vector<char> listed(set.size(), 0);
    long previous = -1;
    for (unsigned int index : reported) {
        if (index >= set.size()) {
            return "index " + std::to_string(index) + " is out of range";
        }
        if (long(index) <= previous) {
            return "indices not strictly ascending at " + std::to_string(index);
        }
        previous = long(index);
        if (index == exclude) {
            return "the point lists itself";
        }
        if (oracle(query, set[index], radius) == Oracle::Out) {
            return "index " + std::to_string(index) + " is farther than the radius";
        }
        listed[index] = 1;
    }
    for (std::size_t j = 0; j < set.size(); ++j) {
        if (j != exclude && !listed[j] && oracle(query, set[j], radius) == Oracle::In) {
            return "neighbour " + std::to_string(j) + " is missing";
        }
    }
    return "";
}

// Checks every list of set `searching` in set `searched` (or that all are empty when the pair
// is inactive), through all three accessors. Returns the number of entries checked.
std::size_t check_lists(const NeighborhoodSearch &search, unsigned int searching,
                        unsigned int searched, const std::vector<Vec3> &a,
                        const std::vector<Vec3> &b, Real radius, const std::string &what) {
    const PointSet &set = search.point_set(searching);
    std::size_t entries = 0;
    std::string problem;
    if (set.n_points() != a.size()) {
        problem = "n_points() is " + std::to_string(set.n_points());
    }
    const bool active = search.is_active(searching, searched);
    for (unsigned int i = 0; problem.empty() && i < a.size(); ++i) {
        const auto list = set.neighbor_list(searched, i);
        if (list.size() != set.n_neighbors(searched, i)) {
            problem = "neighbor_list and n_neighbors disagree at point " + std::to_string(i);
            break;
        }
        for (std::size_t k = 0; k < list.size(); ++k) {
            if (list[k] != set.neighbor(searched, i, static_cast<unsigned int>(k)) ||
                list.data()[k] != list[k]) {
                problem = "neighbor() and neighbor_list() disagree at point " + std::to_string(i);
            }
        }
        entries += list.size();
        if (!active) {
            if (!list.empty()) {
                problem = "an inactive pair lists neighbours";
            }
            continue;
        }
        const std::size_t exclude = searching == searched ? i : std::numeric_limits<std::size_t>::max();
        const std::string wrong = check_list(list, a[i], b, radius, exclude);
        if (!wrong.empty()) {
            problem = "point " + std::to_string(i) + ": " + wrong;
        }
    }
    report(problem.empty(), what + ": set " + std::to_string(searching) + " in set " +
                                std::to_string(searched) +
                                (active ? "" : " (inactive)") + ", " + std::to_string(entries) +
                                " entries" + (problem.empty() ? "" : ": " + problem));
    return entries;
}

// A small deterministic generator (SplitMix64), so the test is the same on every platform.
struct Random {
    unsigned long long state;
    double next() {
        state += 0x9E3779B97F4A7C15ull;
        unsigned long long z = state;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        return double(z >> 11) / double(1ull << 53);
    }
    double range(double lo, double hi) { return lo + (hi - lo) * next(); }
};

// Enright's divergence-free deformation field on the unit cube.
Vec3 enright_velocity(const Vec3 &p) {
    const double x = p.x, y = p.y, z = p.z;
    const double sx = std::sin(pi * x), sy = std::sin(pi * y), sz = std::sin(pi * z);
    return Vec3{Real(2.0 * sx * sx * std::sin(2 * pi * y) * std::sin(2 * pi * z)),
                Real(-std::sin(2 * pi * x) * sy * sy * std::sin(2 * pi * z)),
                Real(-std::sin(2 * pi * x) * std::sin(2 * pi * y) * sz * sz)};
}

// A jittered lattice filling a sphere: the fluid of Enright's test.
std::vector<Vec3> fluid_sphere(Random &random, double spacing) {
    std::vector<Vec3> points;
    const double cx = 0.35, cy = 0.35, cz = 0.35, radius = 0.15;
    for (double x = cx - radius; x <= cx + radius; x += spacing)
        for (double y = cy - radius; y <= cy + radius; y += spacing)
            for (double z = cz - radius; z <= cz + radius; z += spacing) {
                if ((x - cx) * (x - cx) + (y - cy) * (y - cy) + (z - cz) * (z - cz) <= radius * radius) {
                    const double j = 0.2 * spacing;
                    points.push_back(Vec3{Real(x + random.range(-j, j)), Real(y + random.range(-j, j)),
                                          Real(z + random.range(-j, j))});
                }
            }
    return points;
}

// Two layers of boundary samples on the floor of the unit cube.
std::vector<Vec3> boundary_floor(double spacing) {
    std::vector<Vec3> points;
    for (int layer = 0; layer < 2; ++layer)
        for (double x = 0.0; x <= 1.0; x += spacing)
            for (double y = 0.0; y <= 1.0; y += spacing)
                points.push_back(Vec3{Real(x), Real(y), Real(0.2 - layer * spacing)});
    return points;
}

const Real *coordinates(const std::vector<Vec3> &points) {
    return points.empty() ? nullptr : &points[0].x;
}

// Checks the single-point query of `count` points of the fluid against brute force.
void check_point_queries(NeighborhoodSearch &search, const std::vector<Vec3> &fluid,
                         const std::vector<Vec3> &boundary, Real radius, const std::string &what) {
    std::vector<std::vector<unsigned int>> neighbors;
    std::string problem;
    std::size_t found = 0;
    for (std::size_t i = 0; problem.empty() && i < fluid.size(); i += 37) {
        search.find_neighbors(0, static_cast<unsigned int>(i), neighbors);
        if (neighbors.size() != 2) {
            problem = "neighbors has " + std::to_string(neighbors.size()) + " sets";
            break;
        }
        std::string wrong = check_list(neighbors[0], fluid[i], fluid, radius, i);
        if (wrong.empty()) {
            wrong = search.is_active(0, 1)
                        ? check_list(neighbors[1], fluid[i], boundary, radius,
                                     std::numeric_limits<std::size_t>::max())
                        : (neighbors[1].empty() ? "" : "an inactive set has neighbours");
        }
        if (!wrong.empty()) {
            problem = "point " + std::to_string(i) + ": " + wrong;
        }
        found += neighbors[0].size() + neighbors[1].size();
    }
    report(problem.empty(), what + ": single-point queries, " + std::to_string(found) +
                                " neighbours" + (problem.empty() ? "" : ": " + problem));
}

// Checks queries at random positions (no point of any set) against brute force in both sets.
void check_position_queries(NeighborhoodSearch &search, Random &random,
                            const std::vector<Vec3> &fluid, const std::vector<Vec3> &boundary,
                            Real radius, const std::string &what) {
    std::vector<std::vector<unsigned int>> neighbors;
    std::string problem;
    std::size_t found = 0;
    for (int q = 0; problem.empty() && q < 200; ++q) {
        const Vec3 x{Real(random.range(0.0, 1.0)), Real(random.range(0.0, 1.0)),
                     Real(random.range(0.0, 1.0))};
        search.find_neighbors(&x.x, neighbors);
        const std::size_t none = std::numeric_limits<std::size_t>::max();
        std::string wrong = check_list(neighbors[0], x, fluid, radius, none);
        if (wrong.empty()) {
            wrong = check_list(neighbors[1], x, boundary, radius, none);
        }
        if (!wrong.empty()) {
            problem = "query " + std::to_string(q) + ": " + wrong;
        }
        found += neighbors[0].size() + neighbors[1].size();
    }
    report(problem.empty(), what + ": 200 any-position queries, " + std::to_string(found) +
                                " neighbours" + (problem.empty() ? "" : ": " + problem));
}

// Runs `body`, which must throw Error with a message containing `expected`.
template <class Body>
void expect_error(const std::string &what, const std::string &expected, Body body) {
    try {
        body();
        report(false, what + ": no exception");
    } catch (const Error &error) {
        const std::string message = error.what();
        report(message.find(expected) != std::string::npos, what + ": \"" + message + "\"");
    }
}

}  // namespace

int main() {
    const char *precision = sizeof(Real) == sizeof(float) ? "float" : "double";
    std::printf("hhg::compactnsearch SPH test in %s\n", precision);
    const Real radius = Real(0.0437);
    Random random{42};
    std::vector<Vec3> fluid = fluid_sphere(random, 0.0125);
    std::vector<Vec3> boundary = boundary_floor(0.02);
    std::vector<Vec3> velocity(fluid.size());
    std::vector<unsigned int> ids(fluid.size());
    for (std::size_t i = 0; i < ids.size(); ++i) {
        ids[i] = static_cast<unsigned int>(i);
    }
    std::printf("fluid %zu points, boundary %zu points, radius %g\n", fluid.size(),
                boundary.size(), double(radius));

    try {
        NeighborhoodSearch search(radius);
        int user_tag = 7;
        // The fluid searches every set and is found by every set; the boundary is found by the
        // fluid but searches nothing, as SPlisHSPlasH adds boundary samples.
        const unsigned int f = search.add_point_set(coordinates(fluid), fluid.size(), true, true, true, &user_tag);
        const unsigned int b = search.add_point_set(coordinates(boundary), boundary.size(), false, false, true);
        report(f == 0 && b == 1 && search.n_point_sets() == 2 && search.point_sets().size() == 2,
               "two point sets with ids 0 and 1");
        report(search.is_active(f, f) && search.is_active(f, b) && !search.is_active(b, f) &&
                   !search.is_active(b, b),
               "activation: fluid searches both, boundary searches none");
        report(search.point_set(f).get_user_data() == &user_tag && search.point_set(f).is_dynamic() &&
                   !search.point_set(b).is_dynamic() && search.radius() == radius,
               "user data, dynamic flags and radius");

        const double dt = 0.0025;
        for (int step = 0; step <= 24; ++step) {
            const std::string what = std::string(precision) + " step " + std::to_string(step);
            if (step == 8) {
                // The CompactNSearch way to renumber: z_sort, then sort every per-point array of
                // each set, positions included.
                search.z_sort();
                const PointSet &set = search.point_set(f);
                set.sort_field(fluid.data());
                set.sort_field(velocity.data());
                set.sort_field(ids.data());
                std::vector<char> seen(ids.size(), 0);
                bool permutation = true;
                for (unsigned int id : ids) {
                    permutation = permutation && id < seen.size() && !seen[id];
                    if (id < seen.size()) seen[id] = 1;
                }
                report(permutation, what + ": z_sort + sort_field permute the fluid's arrays");
                search.point_set(b).sort_field(boundary.data());
            }
            if (step == 12) {
                search.set_active(f, b, false);
                report(!search.is_active(f, b), what + ": fluid stops searching the boundary");
            }
            if (step == 14) {
                search.set_active(f, b, true);
            }
            if (step == 16) {
                // The fluid grows by a blob of new particles: a new array, given by resize.
                Random extra{7};
                std::vector<Vec3> grown = fluid;
                for (int k = 0; k < 500; ++k) {
                    grown.push_back(Vec3{Real(extra.range(0.5, 0.7)), Real(extra.range(0.5, 0.7)),
                                         Real(extra.range(0.5, 0.7))});
                }
                fluid.swap(grown);
                velocity.resize(fluid.size());
                search.resize_point_set(f, coordinates(fluid), fluid.size());
                report(search.point_set(f).n_points() == fluid.size(),
                       what + ": resize_point_set to " + std::to_string(fluid.size()) + " points");
            }
            if (step == 20) {
                fluid.resize(fluid.size() - 800);
                velocity.resize(fluid.size());
                search.resize_point_set(f, coordinates(fluid), fluid.size());
            }
            // Advect the fluid in place: the search reads it through the pointer.
            for (std::size_t i = 0; i < fluid.size(); ++i) {
                velocity[i] = enright_velocity(fluid[i]);
                fluid[i].x += Real(dt * velocity[i].x);
                fluid[i].y += Real(dt * velocity[i].y);
                fluid[i].z += Real(dt * velocity[i].z);
            }
            search.find_neighbors();
            if (step % 4 == 0 || step == 8 || step == 12 || step == 16 || step == 20) {
                check_lists(search, f, f, fluid, fluid, radius, what);
                check_lists(search, f, b, fluid, boundary, radius, what);
                check_lists(search, b, f, boundary, fluid, radius, what);
            }
            if (step == 12 || step == 24) {
                check_point_queries(search, fluid, boundary, radius, what);
                check_position_queries(search, random, fluid, boundary, radius, what);
            }
        }

        // Single-point queries after update_point_sets, without a full search.
        for (Vec3 &p : fluid) {
            p.z += Real(0.01);
        }
        search.update_point_sets();
        check_point_queries(search, fluid, boundary, radius, std::string(precision) + " after update_point_sets");

        // A larger radius rebuilds the search over the same arrays.
        search.set_radius(Real(0.06));
        search.find_neighbors();
        check_lists(search, f, f, fluid, fluid, Real(0.06), std::string(precision) + " radius 0.06");

        // Failures throw with the library's message and leave the search usable.
        expect_error("bad radius", "radius", [] { NeighborhoodSearch bad(Real(-1)); });
        expect_error("set_radius(0) keeps the radius", "radius", [&] { search.set_radius(Real(0)); });
        report(search.radius() == Real(0.06), "the radius is still 0.06");
        expect_error("unknown point set", "point set 5", [&] { search.point_set(5); });
        const Real saved = fluid[3].y;
        fluid[3].y = std::numeric_limits<Real>::quiet_NaN();
        expect_error("NaN coordinate", "non-finite", [&] { search.find_neighbors(); });
        fluid[3].y = saved;
        search.find_neighbors();
        check_lists(search, f, f, fluid, fluid, Real(0.06), std::string(precision) + " after the NaN is fixed");
        std::vector<double> too_short(3);
        std::vector<Vec3> more(fluid.size() + 1, Vec3{Real(0.5), Real(0.5), Real(0.5)});
        expect_error("sort_field after resize", "z_sort", [&] {
            search.resize_point_set(f, coordinates(more), more.size());
            search.point_set(f).sort_field(too_short.data());
        });
        expect_error("query a missing point", "does not exist",
                     [&] { std::vector<std::vector<unsigned int>> n; search.find_neighbors(f, 1u << 30, n); });
    } catch (const Error &error) {
        report(false, std::string("unexpected Error: ") + error.what());
    }

    std::printf("%s: %d failure(s)\n", failures == 0 ? "ALL PASSED" : "FAILED", failures);
    return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
