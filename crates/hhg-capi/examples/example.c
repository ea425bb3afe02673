/* example.c: searches lattices with known neighbour counts through the hhg C API and checks
 * the lists, pairs, order and error reporting, printing PASS or FAIL for each check. */

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hhg.h"

/* The fluid is an N x N x N cubic lattice of spacing 1; the boundary an N x N plate at z = -1. */
#define N 10
#define FLUID (N * N * N)
#define PLATE (N * N)

static int passed = 0;
static int failed = 0;

/* Records one check and prints it as PASS or FAIL. */
static void check(int ok, const char *format, ...) {
    va_list args;
    va_start(args, format);
    printf("%s ", ok ? "PASS" : "FAIL");
    vprintf(format, args);
    printf("\n");
    va_end(args);
    if (ok) {
        ++passed;
    } else {
        ++failed;
    }
}

/* Checks that a call succeeded, printing the library's message when it did not. */
static int succeeded(HhgStatus status, const char *call) {
    if (status != HHG_STATUS_OK) {
        check(0, "%s: status %d (%s): %s", call, (int)status, hhg_error_message(status),
              hhg_last_error_message());
        return 0;
    }
    return 1;
}

/* The index of lattice point (x, y, z). */
static size_t at(int x, int y, int z) { return (size_t)(x + N * y + N * N * z); }

/* How many of the two neighbours along one axis exist at lattice coordinate c. */
static int sides(int c) { return (c > 0) + (c < N - 1); }

/* The known neighbour count of lattice point (x, y, z): its axis neighbours (radius 1), plus
 * its face-diagonal neighbours when `diagonals` is set (radius just above sqrt(2)). */
static size_t lattice_count(int x, int y, int z, int diagonals) {
    int count = sides(x) + sides(y) + sides(z);
    if (diagonals) {
        count += sides(x) * sides(y) + sides(x) * sides(z) + sides(y) * sides(z);
    }
    return (size_t)count;
}

/* The fluid lattice as x0, y0, z0, x1, ... shifted by (dx, dy, 0), in float and double. */
static void fluid_lattice(float *xyz32, double *xyz64, double dx, double dy) {
    for (int z = 0; z < N; ++z) {
        for (int y = 0; y < N; ++y) {
            for (int x = 0; x < N; ++x) {
                size_t i = at(x, y, z);
                double p[3] = {x + dx, y + dy, z};
                for (int a = 0; a < 3; ++a) {
                    xyz32[3 * i + a] = (float)p[a];
                    xyz64[3 * i + a] = p[a];
                }
            }
        }
    }
}

/* The boundary plate as three coordinate arrays, point (x, y) at index x + N * y. */
static void plate(double *x, double *y, double *z) {
    for (int j = 0; j < N; ++j) {
        for (int i = 0; i < N; ++i) {
            x[i + N * j] = i;
            y[i + N * j] = j;
            z[i + N * j] = -1.0;
        }
    }
}

/* Compares every list of the fluid against itself with a brute-force search in double. */
static int lists_match_brute_force(const HhgNeighborLists *lists, const double *xyz, double r) {
    for (size_t i = 0; i < FLUID; ++i) {
        size_t k = lists->offsets[i];
        for (size_t j = 0; j < FLUID; ++j) {
            double d[3] = {xyz[3 * j] - xyz[3 * i], xyz[3 * j + 1] - xyz[3 * i + 1],
                           xyz[3 * j + 2] - xyz[3 * i + 2]};
            if (j == i || d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > r * r) {
                continue;
            }
            if (k == lists->offsets[i + 1] || lists->indices[k] != j) {
                return 0;
            }
            ++k;
        }
        if (k != lists->offsets[i + 1]) {
            return 0;
        }
    }
    return 1;
}

/* Checks the fluid's lists against the known lattice counts. */
static void check_fluid_lists(const HhgNeighborLists *lists, int diagonals, size_t total) {
    static const int points[4][3] = {{5, 5, 5}, {0, 5, 5}, {0, 0, 5}, {0, 0, 0}};
    static const char *names[4] = {"interior", "face", "edge", "corner"};
    check(lists->count == FLUID, "fluid lists: %zu lists (expected %d)", lists->count, FLUID);
    check(lists->total == total && lists->offsets[FLUID] == total,
          "fluid lists: %zu neighbours in total (expected %zu)", lists->total, total);
    for (int p = 0; p < 4; ++p) {
        size_t i = at(points[p][0], points[p][1], points[p][2]);
        size_t count = lists->offsets[i + 1] - lists->offsets[i];
        size_t expected = lattice_count(points[p][0], points[p][1], points[p][2], diagonals);
        check(count == expected, "%s point %zu: %zu neighbours (expected %zu)", names[p], i, count,
              expected);
    }
    int all = 1;
    for (int z = 0; z < N; ++z) {
        for (int y = 0; y < N; ++y) {
            for (int x = 0; x < N; ++x) {
                size_t i = at(x, y, z);
                all &= lists->offsets[i + 1] - lists->offsets[i] == lattice_count(x, y, z, diagonals);
            }
        }
    }
    check(all, "every fluid point has its lattice neighbour count");
}

/* Checks the unique pairs: the count, i < j, and that every pair is within the radius. */
static void check_pairs(const HhgPairList *pairs, size_t expected, const float *xyz, double r) {
    check(pairs->count == expected, "unique pairs: %zu (expected %zu)", pairs->count, expected);
    int ordered = 1;
    int within = 1;
    for (size_t k = 0; k < pairs->count; ++k) {
        uint32_t i = pairs->pairs[2 * k];
        uint32_t j = pairs->pairs[2 * k + 1];
        ordered &= i < j && j < FLUID;
        double d2 = 0.0;
        for (int a = 0; a < 3; ++a) {
            double d = (double)xyz[3 * j + a] - (double)xyz[3 * i + a];
            d2 += d * d;
        }
        within &= d2 <= r * r;
    }
    check(ordered && within, "every pair (i, j) has i < j and lies within the radius");
}

/* Checks that `order` is a permutation of 0 .. n - 1. */
static void check_order(HhgSearch *search, size_t set, size_t n) {
    const uint32_t *order = NULL;
    size_t len = 0;
    if (!succeeded(hhg_search_order(search, set, &order, &len), "hhg_search_order")) {
        return;
    }
    int *seen = calloc(n, sizeof *seen);
    int permutation = len == n && seen != NULL;
    for (size_t k = 0; permutation && k < len; ++k) {
        permutation = order[k] < n && !seen[order[k]];
        if (permutation) {
            seen[order[k]] = 1;
        }
    }
    free(seen);
    check(permutation, "the order of set %zu is a permutation of its %zu points", set, n);
}

/* Radius 1 in float: 6 neighbours inside the lattice, one boundary point under the bottom
 * layer; then the fluid moves sideways by a quarter and loses its boundary neighbours. */
static void axis_neighbours_f32(void) {
    printf("== float, radius 1: axis neighbours\n");
    static float xyz[3 * FLUID];
    static double xyz64[3 * FLUID];
    double bx[PLATE], by[PLATE], bz[PLATE];
    float px[PLATE], py[PLATE], pz[PLATE];
    fluid_lattice(xyz, xyz64, 0.0, 0.0);
    plate(bx, by, bz);
    for (size_t k = 0; k < PLATE; ++k) {
        px[k] = (float)bx[k];
        py[k] = (float)by[k];
        pz[k] = (float)bz[k];
    }

    HhgSearch *search = NULL;
    size_t fluid = 0, boundary = 0;
    if (!succeeded(hhg_search_new_f32(1.0f, &search), "hhg_search_new_f32") ||
        !succeeded(hhg_search_add_set_f32(search, xyz, FLUID, true, &fluid), "add fluid") ||
        !succeeded(hhg_search_add_set_soa_f32(search, px, py, pz, PLATE, false, &boundary),
                   "add boundary") ||
        !succeeded(hhg_search_set_active(search, fluid, fluid, true), "activate fluid-fluid") ||
        !succeeded(hhg_search_set_active(search, fluid, boundary, true),
                   "activate fluid-boundary") ||
        !succeeded(hhg_search_set_pairs(search, fluid, true), "enable pairs") ||
        !succeeded(hhg_search_find_neighbors(search), "hhg_search_find_neighbors")) {
        hhg_search_free(search);
        return;
    }

    HhgNeighborLists lists;
    if (succeeded(hhg_search_neighbors(search, fluid, fluid, &lists), "fluid lists")) {
        check_fluid_lists(&lists, 0, 2 * 3 * N * N * (N - 1));
        check(lists_match_brute_force(&lists, xyz64, 1.0),
              "every fluid list equals the brute-force list, ascending");
        check(lists.distances_f32 == NULL && lists.distances_f64 == NULL,
              "no distances unless requested");
    }
    HhgPairList pairs;
    if (succeeded(hhg_search_pairs(search, fluid, &pairs), "fluid pairs")) {
        check_pairs(&pairs, 3 * N * N * (N - 1), xyz, 1.0);
    }
    if (succeeded(hhg_search_neighbors(search, fluid, boundary, &lists), "boundary lists")) {
        size_t bottom = at(3, 4, 0);
        check(lists.count == FLUID && lists.total == PLATE,
              "fluid in boundary: %zu neighbours in total (expected %d)", lists.total, PLATE);
        check(lists.offsets[bottom + 1] - lists.offsets[bottom] == 1 &&
                  lists.indices[lists.offsets[bottom]] == 3 + N * 4,
              "bottom point %zu sees exactly the plate point under it", bottom);
        size_t above = at(3, 4, 1);
        check(lists.offsets[above + 1] == lists.offsets[above],
              "point %zu one layer up sees no plate point", above);
    }
    HhgStatus status = hhg_search_neighbors(search, boundary, fluid, &lists);
    check(status == HHG_STATUS_NOT_SEARCHED, "an inactive pair of sets: %s (\"%s\")",
          hhg_error_message(status), hhg_last_error_message());
    check_order(search, fluid, FLUID);
    check_order(search, boundary, PLATE);

    fluid_lattice(xyz, xyz64, 0.25, 0.25);
    if (succeeded(hhg_search_update_set_f32(search, fluid, xyz, FLUID), "update fluid")) {
        status = hhg_search_neighbors(search, fluid, fluid, &lists);
        check(status == HHG_STATUS_NOT_SEARCHED, "lists are stale after an update: %s",
              hhg_error_message(status));
    }
    if (succeeded(hhg_search_find_neighbors(search), "search after the update") &&
        succeeded(hhg_search_neighbors(search, fluid, boundary, &lists), "boundary lists")) {
        check(lists.total == 0, "the moved fluid sees no plate point (%zu)", lists.total);
        if (succeeded(hhg_search_neighbors(search, fluid, fluid, &lists), "fluid lists")) {
            check_fluid_lists(&lists, 0, 2 * 3 * N * N * (N - 1));
        }
    }
    hhg_search_free(search);
}

/* Radius sqrt(2) * 1.0001 in double with distances: 18 neighbours inside the lattice
 * (axes and face diagonals), up to 5 plate points under the bottom layer. */
static void diagonal_neighbours_f64(void) {
    printf("== double, radius sqrt(2) * 1.0001: face diagonals too\n");
    static float xyz32[3 * FLUID];
    static double xyz[3 * FLUID];
    double bx[PLATE], by[PLATE], bz[PLATE];
    fluid_lattice(xyz32, xyz, 0.0, 0.0);
    plate(bx, by, bz);
    const double r = sqrt(2.0) * 1.0001;

    HhgSearch *search = NULL;
    size_t fluid = 0, boundary = 0;
    if (!succeeded(hhg_search_new_f64(r, &search), "hhg_search_new_f64") ||
        !succeeded(hhg_search_set_with_distances(search, true), "enable distances") ||
        !succeeded(hhg_search_add_set_f64(search, xyz, FLUID, true, &fluid), "add fluid") ||
        !succeeded(hhg_search_add_set_soa_f64(search, bx, by, bz, PLATE, false, &boundary),
                   "add boundary") ||
        !succeeded(hhg_search_set_active(search, fluid, fluid, true), "activate fluid-fluid") ||
        !succeeded(hhg_search_set_active(search, fluid, boundary, true),
                   "activate fluid-boundary") ||
        !succeeded(hhg_search_set_pairs(search, fluid, true), "enable pairs") ||
        !succeeded(hhg_search_find_neighbors(search), "hhg_search_find_neighbors")) {
        hhg_search_free(search);
        return;
    }
    HhgPrecision precision = HHG_PRECISION_F32;
    if (succeeded(hhg_search_precision(search, &precision), "hhg_search_precision")) {
        check(precision == HHG_PRECISION_F64, "the search reports double precision");
    }

    HhgNeighborLists lists;
    if (succeeded(hhg_search_neighbors(search, fluid, fluid, &lists), "fluid lists")) {
        size_t axis_edges = 3 * N * N * (N - 1);
        size_t diagonals = 3 * N * 2 * (N - 1) * (N - 1);
        check_fluid_lists(&lists, 1, 2 * (axis_edges + diagonals));
        check(lists_match_brute_force(&lists, xyz, r),
              "every fluid list equals the brute-force list, ascending");
        int exact = lists.distances_f64 != NULL && lists.distances_f32 == NULL;
        for (size_t i = 0; exact && i < FLUID; ++i) {
            for (size_t k = lists.offsets[i]; k < lists.offsets[i + 1]; ++k) {
                size_t j = lists.indices[k];
                double d2 = 0.0;
                for (int a = 0; a < 3; ++a) {
                    d2 += (xyz[3 * j + a] - xyz[3 * i + a]) * (xyz[3 * j + a] - xyz[3 * i + a]);
                }
                exact &= lists.distances_f64[k] == d2;
            }
        }
        check(exact, "every squared distance is 1 or 2, as computed from the positions");
    }
    HhgPairList pairs;
    if (succeeded(hhg_search_pairs(search, fluid, &pairs), "fluid pairs")) {
        check_pairs(&pairs, 3 * N * N * (N - 1) + 3 * N * 2 * (N - 1) * (N - 1), xyz32, r);
        check(pairs.distances_f64 != NULL, "pairs carry their squared distances");
    }
    if (succeeded(hhg_search_neighbors(search, fluid, boundary, &lists), "boundary lists")) {
        /* Each plate point is under one fluid point and diagonal to up to four more. */
        size_t expected = PLATE + 2 * 2 * N * (N - 1);
        check(lists.total == expected, "fluid in boundary: %zu neighbours in total (expected %zu)",
              lists.total, expected);
        size_t corner = at(0, 0, 0), middle = at(4, 4, 0);
        check(lists.offsets[corner + 1] - lists.offsets[corner] == 3 &&
                  lists.offsets[middle + 1] - lists.offsets[middle] == 5,
              "bottom corner sees 3 plate points, bottom middle 5");
    }
    hhg_search_free(search);
}

/* Handles are checked values: a freed, doubly freed or made-up handle is refused with
 * HHG_STATUS_INVALID_HANDLE instead of being used. */
static void handles(HhgSearch *freed) {
    printf("== handles\n");
    HhgStatus status = hhg_search_find_neighbors(freed);
    check(status == HHG_STATUS_INVALID_HANDLE &&
              strstr(hhg_last_error_message(), "was already freed") != NULL,
          "use after free: %s (\"%s\")", hhg_error_message(status), hhg_last_error_message());
    size_t count = 99;
    status = hhg_search_set_count(freed, &count);
    check(status == HHG_STATUS_INVALID_HANDLE && count == 99,
          "reading a freed search writes nothing: %s", hhg_error_message(status));
    status = hhg_search_free(freed);
    check(status == HHG_STATUS_INVALID_HANDLE &&
              strstr(hhg_last_error_message(), "was already freed") != NULL,
          "double free: %s (\"%s\")", hhg_error_message(status), hhg_last_error_message());
    check(hhg_search_free(NULL) == HHG_STATUS_OK, "freeing NULL does nothing");

    HhgSearch *made_up = (HhgSearch *)(uintptr_t)0x1234;
    status = hhg_search_find_neighbors(made_up);
    check(status == HHG_STATUS_INVALID_HANDLE &&
              strstr(hhg_last_error_message(), "is not an hhg handle") != NULL,
          "a made-up handle: %s (\"%s\")", hhg_error_message(status), hhg_last_error_message());
    double other = 1.0;
    status = hhg_search_free((HhgSearch *)&other);
    check(status == HHG_STATUS_INVALID_HANDLE && other == 1.0,
          "freeing a pointer to another object: %s (\"%s\")", hhg_error_message(status),
          hhg_last_error_message());

    /* A new search may take the freed search's slot, but with a new generation. */
    HhgSearch *renewed = NULL;
    if (!succeeded(hhg_search_new_f64(1.0, &renewed), "hhg_search_new_f64")) {
        return;
    }
    check(renewed != freed, "a new search gets a new handle");
    status = hhg_search_find_neighbors(freed);
    check(status == HHG_STATUS_INVALID_HANDLE, "the old handle stays freed: %s",
          hhg_error_message(status));
    float xyz[3] = {0.0f, 0.0f, 0.0f};
    size_t set = 99;
    status = hhg_search_add_set_f32(renewed, xyz, 1, true, &set);
    check(status == HHG_STATUS_PRECISION_MISMATCH && set == 99,
          "a float array for a double search: %s (\"%s\")", hhg_error_message(status),
          hhg_last_error_message());
    status = hhg_search_find_neighbors(renewed);
    check(status == HHG_STATUS_OK, "the new handle works: %s", hhg_error_message(status));
    succeeded(hhg_search_free(renewed), "hhg_search_free");
}

/* Bad input gives the documented code and a message naming the offending value. */
static void errors(void) {
    printf("== errors\n");
    HhgSearch *search = (HhgSearch *)&search; /* Any non-NULL value: it must become NULL. */
    HhgStatus status = hhg_search_new_f32(-1.0f, &search);
    check(status == HHG_STATUS_INVALID_RADIUS && search == NULL,
          "a negative radius: %s (\"%s\")", hhg_error_message(status), hhg_last_error_message());
    check(strstr(hhg_last_error_message(), "got -1") != NULL,
          "the message names the radius given");

    if (!succeeded(hhg_search_new_f32(1.0f, &search), "hhg_search_new_f32")) {
        return;
    }
    float xyz[3 * 10] = {0};
    xyz[3 * 7 + 1] = NAN;
    size_t set = 99;
    status = hhg_search_add_set_f32(search, xyz, 10, true, &set);
    check(status == HHG_STATUS_NON_FINITE_COORDINATE && set == 99,
          "a NaN coordinate: %s (\"%s\")", hhg_error_message(status), hhg_last_error_message());
    check(strcmp(hhg_last_error_message(), "point 7 has a non-finite y coordinate (NaN)") == 0,
          "the message names the point, the axis and the value");

    status = hhg_search_add_set_f32(search, NULL, 10, true, &set);
    check(status == HHG_STATUS_NULL_POINTER, "a NULL array: %s (\"%s\")",
          hhg_error_message(status), hhg_last_error_message());
    double xyz64[3] = {0.0, 0.0, 0.0};
    status = hhg_search_add_set_f64(search, xyz64, 1, true, &set);
    check(status == HHG_STATUS_PRECISION_MISMATCH, "a double array for a float search: %s",
          hhg_error_message(status));
    xyz[3 * 7 + 1] = 0.0f;
    if (succeeded(hhg_search_add_set_f32(search, xyz, 10, true, &set), "add a finite set")) {
        status = hhg_search_set_active(search, set, 3, true);
        check(status == HHG_STATUS_UNKNOWN_POINT_SET &&
                  strcmp(hhg_last_error_message(),
                         "point set 3 does not exist (the search holds 1)") == 0,
              "an unknown set: %s (\"%s\")", hhg_error_message(status),
              hhg_last_error_message());
    }
    status = hhg_search_find_neighbors(search);
    check(status == HHG_STATUS_OK && hhg_last_error_message()[0] == '\0',
          "a successful call clears the last error message");
    status = hhg_search_free(search);
    check(status == HHG_STATUS_OK, "freeing a live search: %s", hhg_error_message(status));
    handles(search);
}

int main(void) {
    printf("hhg %s, C example\n", hhg_version());
    axis_neighbours_f32();
    diagonal_neighbours_f64();
    errors();
    printf("%s\nexample_c: %d passed, %d failed\n", failed == 0 ? "PASS" : "FAIL", passed, failed);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
