/* example_2d.c: searches a square lattice of the plane with known neighbour counts through the
 * 2-D functions of the hhg C API (hhg_search_new_2d_*, the _2d_ point functions) and checks
 * the lists, pairs, a position query, the wrong dimension and error reporting, printing PASS
 * or FAIL for each check. */

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "hhg.h"

/* The fluid is an N x N square lattice of spacing 1; the wall a row of N points at y = -1. */
#define N 20
#define FLUID (N * N)
#define WALL N

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

/* How many of the two neighbours along one axis exist at lattice coordinate c. */
static int sides(int c) { return (c > 0) + (c < N - 1); }

/* The known neighbour count of lattice point (x, y): its axis neighbours (radius 1), plus
 * its diagonal neighbours when `diagonals` is set (radius just above sqrt(2)). */
static size_t lattice_count(int x, int y, int diagonals) {
    return (size_t)(sides(x) + sides(y) + (diagonals ? sides(x) * sides(y) : 0));
}

/* One search of the lattice in double, shifted by (-7.5, -3) so that coordinates are
 * negative, at radius 1 (neighbours at exactly the radius) or sqrt(2) + 1e-9. */
static void lattice_f64(int diagonals) {
    printf("== double, %s\n", diagonals ? "radius sqrt(2): diagonals" : "radius 1: axis neighbours");
    static double xy[2 * FLUID];
    double wx[WALL], wy[WALL];
    for (int y = 0; y < N; ++y) {
        for (int x = 0; x < N; ++x) {
            xy[2 * (x + N * y)] = x - 7.5;
            xy[2 * (x + N * y) + 1] = y - 3.0;
        }
    }
    for (int x = 0; x < WALL; ++x) {
        wx[x] = x - 7.5;
        wy[x] = -4.0;
    }
    double radius = diagonals ? sqrt(2.0) + 1e-9 : 1.0;

    HhgSearch *search = NULL;
    size_t fluid = 0, wall = 0;
    HhgDimension dimension = HHG_DIMENSION_THREE;
    if (!succeeded(hhg_search_new_2d_f64(radius, &search), "hhg_search_new_2d_f64") ||
        !succeeded(hhg_search_dimension(search, &dimension), "hhg_search_dimension") ||
        !succeeded(hhg_search_add_set_2d_f64(search, xy, FLUID, true, &fluid), "add fluid") ||
        !succeeded(hhg_search_add_set_soa_2d_f64(search, wx, wy, WALL, false, &wall), "add wall") ||
        !succeeded(hhg_search_set_active(search, fluid, fluid, true), "activate fluid-fluid") ||
        !succeeded(hhg_search_set_active(search, fluid, wall, true), "activate fluid-wall") ||
        !succeeded(hhg_search_set_pairs(search, fluid, true), "enable pairs") ||
        !succeeded(hhg_search_find_neighbors(search), "hhg_search_find_neighbors")) {
        hhg_search_free(search);
        return;
    }
    check(dimension == HHG_DIMENSION_TWO, "the search is 2-D");

    HhgNeighborLists lists;
    if (succeeded(hhg_search_neighbors(search, fluid, fluid, &lists), "fluid lists")) {
        int all = lists.count == FLUID;
        size_t total = 0;
        for (int y = 0; all && y < N; ++y) {
            for (int x = 0; x < N; ++x) {
                size_t i = (size_t)(x + N * y);
                size_t count = lists.offsets[i + 1] - lists.offsets[i];
                all &= count == lattice_count(x, y, diagonals);
                total += count;
            }
        }
        check(all && total == lists.total, "every fluid point has its %zu lattice neighbours in all",
              total);
        HhgPairList pairs;
        if (succeeded(hhg_search_pairs(search, fluid, &pairs), "fluid pairs")) {
            check(2 * pairs.count == total, "%zu unique pairs, half the list entries", pairs.count);
        }
    }
    if (succeeded(hhg_search_neighbors(search, fluid, wall, &lists), "fluid-wall lists")) {
        /* The bottom row (y = 0, at -3) sees the wall point below it (at -4), and its two
         * diagonal ones with the larger radius. */
        size_t bottom = lists.offsets[N], above = lists.offsets[2 * N] - lists.offsets[N];
        size_t expected = diagonals ? (size_t)(3 * N - 2) : (size_t)N;
        check(bottom == expected && above == 0, "the bottom row sees %zu wall points (expected %zu)",
              bottom, expected);
    }

    /* A position query at the centre of a lattice square: its 4 corners are at sqrt(0.5). */
    double centre[2] = {0.5 - 7.5, 0.5 - 3.0};
    uint32_t found[8];
    size_t count = 0;
    if (succeeded(hhg_search_query_point_2d_f64(search, fluid, centre, found, 8, &count), "query")) {
        check(count == 4 && found[0] == 0 && found[1] == 1 && found[2] == N && found[3] == N + 1,
              "a query at a square's centre finds its 4 corners");
    }

    /* A 3-D function on a 2-D search is refused with its own status and message. */
    double xyz[3] = {0.0, 0.0, 0.0};
    HhgStatus status = hhg_search_update_set_f64(search, fluid, xyz, 1);
    check(status == HHG_STATUS_WRONG_DIMENSION && strstr(hhg_last_error_message(), "2-D") != NULL,
          "a 3-D update of a 2-D search: %s", hhg_last_error_message());

    /* A NaN names its point and axis, and the set keeps its points. */
    xy[2 * 5 + 1] = NAN;
    status = hhg_search_update_set_2d_f64(search, fluid, xy, FLUID);
    check(status == HHG_STATUS_NON_FINITE_COORDINATE &&
              strcmp(hhg_last_error_message(), "point 5 has a non-finite y coordinate (NaN)") == 0,
          "a NaN is refused: %s", hhg_last_error_message());
    hhg_search_free(search);
}

/* The same lattice in float through the SoA functions, moved by a quarter: no point of the
 * fluid sees the wall then, and the lists keep their counts. */
static void lattice_f32(void) {
    printf("== float, radius 1, SoA updates\n");
    static float x[FLUID], y[FLUID];
    float wx[WALL], wy[WALL];
    for (int j = 0; j < N; ++j) {
        for (int i = 0; i < N; ++i) {
            x[i + N * j] = (float)i;
            y[i + N * j] = (float)j;
        }
    }
    for (int i = 0; i < WALL; ++i) {
        wx[i] = (float)i;
        wy[i] = -1.0f;
    }
    HhgSearch *search = NULL;
    size_t fluid = 0, wall = 0;
    if (!succeeded(hhg_search_new_2d_f32(1.0f, &search), "hhg_search_new_2d_f32") ||
        !succeeded(hhg_search_add_set_soa_2d_f32(search, x, y, FLUID, true, &fluid), "add fluid") ||
        !succeeded(hhg_search_add_set_soa_2d_f32(search, wx, wy, WALL, false, &wall), "add wall") ||
        !succeeded(hhg_search_set_active(search, fluid, wall, true), "activate fluid-wall") ||
        !succeeded(hhg_search_find_neighbors(search), "hhg_search_find_neighbors")) {
        hhg_search_free(search);
        return;
    }
    HhgNeighborLists lists;
    if (succeeded(hhg_search_neighbors(search, fluid, wall, &lists), "fluid-wall lists")) {
        check(lists.total == N, "the bottom row sees the wall at exactly the radius (%zu)",
              lists.total);
    }
    for (size_t i = 0; i < FLUID; ++i) {
        y[i] += 0.25f;
    }
    if (succeeded(hhg_search_update_set_soa_2d_f32(search, fluid, x, y, FLUID), "update") &&
        succeeded(hhg_search_find_neighbors(search), "search again") &&
        succeeded(hhg_search_neighbors(search, fluid, wall, &lists), "fluid-wall lists")) {
        check(lists.total == 0, "moved up by a quarter, the fluid sees no wall point");
    }
    hhg_search_free(search);
}

int main(void) {
    lattice_f64(0);
    lattice_f64(1);
    lattice_f32();
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
