// compactnsearch.hpp: a header-only C++ layer over the hhg C API with the public interface of
// CompactNSearch, so that an SPH code written against CompactNSearch switches to hhg by changing
// its include, its namespace and its link line (see docs/cpp-guide.md).
//
// What differs from CompactNSearch, on purpose:
// - Two points are neighbours when |xi - xj| <= r; CompactNSearch pairs them when |xi - xj| < r.
// - Lists are in ascending index order (CompactNSearch's order is arbitrary).
// - Errors (a bad radius, a NaN coordinate, an unknown point set, ...) throw
//   hhg::compactnsearch::Error, whose what() is the library's message naming the value.
// - z_sort() orders the points by hhg's grid cells (a locality order, not a Morton curve).
// - update_point_sets() re-indexes the point sets; the neighbour lists of the sets it changed
//   read as empty until the next find_neighbors().
// - erase_empty_cells has no effect (hhg keeps no hash table of cells between steps), and
//   update_activation_table() has nothing to do (set_active takes effect at once).
//
// Link with -lhhg (or find_package(hhg) and the target hhg::hhg; see docs/cpp-guide.md).

#ifndef HHG_COMPACTNSEARCH_HPP
#define HHG_COMPACTNSEARCH_HPP

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "hhg.h"

namespace hhg {
namespace compactnsearch {

// The coordinate type: float, or double when HHG_CNS_USE_DOUBLE is defined (as CompactNSearch's
// USE_DOUBLE).
#ifdef HHG_CNS_USE_DOUBLE
using Real = double;
#else
using Real = float;
#endif

// Neighbour indices are the C API's uint32_t, handed out as unsigned int without a copy.
static_assert(std::is_same<unsigned int, std::uint32_t>::value,
              "hhg::compactnsearch needs unsigned int to be the 32-bit uint32_t");

// A failed call: the status code of the C API and the message naming the offending value.
class Error : public std::runtime_error {
public:
    Error(HhgStatus status, const std::string &message)
        : std::runtime_error(message), status_(status) {}

    // The status code of the call that failed.
    HhgStatus status() const noexcept { return status_; }

private:
    HhgStatus status_;
};

namespace detail {

// Throws the C API's failure as an Error carrying the thread's last error message.
inline void check(HhgStatus status) {
    if (status != HHG_STATUS_OK) {
        throw Error(status, hhg_last_error_message());
    }
}

// The C API's functions of the precision of Real, chosen by overloading on the coordinate type.
inline HhgStatus search_new(float radius, HhgSearch **out) { return hhg_search_new_f32(radius, out); }
inline HhgStatus search_new(double radius, HhgSearch **out) { return hhg_search_new_f64(radius, out); }
inline HhgStatus add_set(HhgSearch *search, const float *xyz, std::size_t n, bool dynamic,
                         std::size_t *out_set) {
    return hhg_search_add_set_f32(search, xyz, n, dynamic, out_set);
}
inline HhgStatus add_set(HhgSearch *search, const double *xyz, std::size_t n, bool dynamic,
                         std::size_t *out_set) {
    return hhg_search_add_set_f64(search, xyz, n, dynamic, out_set);
}
inline HhgStatus update_set(HhgSearch *search, std::size_t set, const float *xyz, std::size_t n) {
    return hhg_search_update_set_f32(search, set, xyz, n);
}
inline HhgStatus update_set(HhgSearch *search, std::size_t set, const double *xyz, std::size_t n) {
    return hhg_search_update_set_f64(search, set, xyz, n);
}
inline HhgStatus resize_set(HhgSearch *search, std::size_t set, const float *xyz, std::size_t n) {
    return hhg_search_resize_set_f32(search, set, xyz, n);
}
inline HhgStatus resize_set(HhgSearch *search, std::size_t set, const double *xyz, std::size_t n) {
    return hhg_search_resize_set_f64(search, set, xyz, n);
}
inline HhgStatus query_point(const HhgSearch *search, std::size_t searched, const float *xyz,
                             std::uint32_t *out, std::size_t capacity, std::size_t *out_count) {
    return hhg_search_query_point_f32(search, searched, xyz, out, capacity, out_count);
}
inline HhgStatus query_point(const HhgSearch *search, std::size_t searched, const double *xyz,
                             std::uint32_t *out, std::size_t capacity, std::size_t *out_count) {
    return hhg_search_query_point_f64(search, searched, xyz, out, capacity, out_count);
}

// Owns one HhgSearch handle and frees it once.
class SearchHandle {
public:
    explicit SearchHandle(Real radius) { check(search_new(radius, &handle_)); }
    SearchHandle(SearchHandle &&other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }
    SearchHandle &operator=(SearchHandle &&other) noexcept {
        std::swap(handle_, other.handle_);
        return *this;
    }
    SearchHandle(const SearchHandle &) = delete;
    SearchHandle &operator=(const SearchHandle &) = delete;
    ~SearchHandle() { hhg_search_free(handle_); }

    HhgSearch *get() const noexcept { return handle_; }

private:
    HhgSearch *handle_ = nullptr;
};

// The neighbour lists of one pair of sets as the C API lends them: CSR offsets and indices.
struct ListsView {
    const std::size_t *offsets;
    const std::uint32_t *indices;
};

// The neighbours of `x` in set `searched`, ascending, into `out` (two calls when `out` is too
// small for them).
inline void query_into(const HhgSearch *search, std::size_t searched, const Real *x,
                       std::vector<unsigned int> &out) {
    out.resize(out.capacity());
    std::size_t count = 0;
    check(query_point(search, searched, x, out.data(), out.size(), &count));
    if (count > out.size()) {
        out.resize(count);
        check(query_point(search, searched, x, out.data(), out.size(), &count));
    }
    out.resize(count);
}

}  // namespace detail

// A borrowed view of one point's neighbours in one point set: ascending indices into that set,
// valid until the next call that changes the NeighborhoodSearch.
class NeighborList {
public:
    NeighborList(const unsigned int *data, std::size_t size) noexcept : data_(data), size_(size) {}

    const unsigned int *data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    unsigned int operator[](std::size_t k) const noexcept {
        assert(k < size_);
        return data_[k];
    }
    const unsigned int *begin() const noexcept { return data_; }
    const unsigned int *end() const noexcept { return data_ + size_; }

private:
    const unsigned int *data_;
    std::size_t size_;
};

class NeighborhoodSearch;

// One set of points, read through the caller's pointer, with its neighbours in every set.
//
// The accessors of neighbours (n_neighbors, neighbor, neighbor_list) are unchecked, like
// CompactNSearch's and std::vector's operator[]: a set or point index out of range is a
// precondition violation, caught by assert() in debug builds.
class PointSet {
public:
    // The number of points.
    std::size_t n_points() const noexcept { return n_points_; }

    // The number of neighbours of point `i` of this set in point set `point_set` (0 when this
    // set does not search that one).
    std::size_t n_neighbors(unsigned int point_set, unsigned int i) const noexcept {
        assert(point_set < lists_.size() && i < n_points_);
        const detail::ListsView &lists = lists_[point_set];
        return lists.offsets[i + 1] - lists.offsets[i];
    }

    // The `k`-th neighbour of point `i` in point set `point_set`: an index into that set.
    unsigned int neighbor(unsigned int point_set, unsigned int i, unsigned int k) const noexcept {
        assert(k < n_neighbors(point_set, i));
        const detail::ListsView &lists = lists_[point_set];
        return lists.indices[lists.offsets[i] + k];
    }

    // The neighbours of point `i` in point set `point_set`, ascending.
    NeighborList neighbor_list(unsigned int point_set, unsigned int i) const noexcept {
        assert(point_set < lists_.size() && i < n_points_);
        const detail::ListsView &lists = lists_[point_set];
        const std::size_t begin = lists.offsets[i];
        return NeighborList(lists.indices == nullptr ? nullptr : lists.indices + begin,
                            lists.offsets[i + 1] - begin);
    }

    // Whether find_neighbors(true) reads this set's positions again.
    bool is_dynamic() const noexcept { return dynamic_; }

    // Makes find_neighbors(true) read this set's positions again (true) or keep them (false).
    void set_dynamic(bool dynamic) noexcept { dynamic_ = dynamic; }

    // The pointer given to add_point_set.
    void *get_user_data() const noexcept { return user_data_; }

    // The caller's coordinates of point `i`: three values of Real.
    const Real *point(unsigned int i) const noexcept {
        assert(i < n_points_);
        return positions_ + 3 * static_cast<std::size_t>(i);
    }

    // Reorders `field`, an array of n_points() values (positions as a 3-Real struct included),
    // by the permutation of the last NeighborhoodSearch::z_sort(): the value of point
    // sort_table[k] moves to position k. Throws Error, leaving `field` as it was, when z_sort()
    // was not called since the set was added or resized.
    template <class T>
    void sort_field(T *field) const {
        if (sort_table_.size() != n_points_) {
            throw Error(HHG_STATUS_INVALID_ARGUMENT,
                        "sort_field: no sort table for the set's " + std::to_string(n_points_) +
                            " points; call NeighborhoodSearch::z_sort() first");
        }
        if (n_points_ == 0) {
            return;
        }
        if (field == nullptr) {
            throw Error(HHG_STATUS_NULL_POINTER, "sort_field: the field is NULL");
        }
        std::vector<T> unsorted(field, field + n_points_);
        for (std::size_t k = 0; k < n_points_; ++k) {
            field[k] = std::move(unsorted[sort_table_[k]]);
        }
    }

private:
    friend class NeighborhoodSearch;

    PointSet(const Real *positions, std::size_t n_points, bool dynamic, void *user_data)
        : positions_(positions), n_points_(n_points), dynamic_(dynamic), user_data_(user_data) {}

    const Real *positions_;
    std::size_t n_points_;
    bool dynamic_;
    void *user_data_;
    // Set by z_sort() and resize: the positions must be read again before the next search,
    // whether the set is dynamic or not.
    bool reread_ = false;
    // lists_[j]: this set's neighbour lists in set j, pointing into the search's buffers.
    std::vector<detail::ListsView> lists_;
    // The permutation of the last z_sort().
    std::vector<unsigned int> sort_table_;
};

// A neighbour search over several point sets sharing one radius, with CompactNSearch's
// interface. Positions are read through the pointers given to add_point_set (and
// resize_point_set) at every search; they are not copied at add time.
class NeighborhoodSearch {
public:
    // A search for neighbours within `r` (|xi - xj| <= r). Throws Error for a radius that is
    // not finite and positive. `erase_empty_cells` is accepted for compatibility and has no
    // effect.
    explicit NeighborhoodSearch(Real r, bool erase_empty_cells = false)
        : search_(r), radius_(r) {
        static_cast<void>(erase_empty_cells);
    }

    NeighborhoodSearch(NeighborhoodSearch &&) = default;
    NeighborhoodSearch &operator=(NeighborhoodSearch &&) = default;
    NeighborhoodSearch(const NeighborhoodSearch &) = delete;
    NeighborhoodSearch &operator=(const NeighborhoodSearch &) = delete;
    virtual ~NeighborhoodSearch() = default;

    // Point set `i`; throws Error for an unknown set.
    const PointSet &point_set(unsigned int i) const { return sets_[checked_set(i)]; }
    PointSet &point_set(unsigned int i) { return sets_[checked_set(i)]; }

    std::size_t n_point_sets() const noexcept { return sets_.size(); }

    // All point sets. The vector itself must not be resized by the caller.
    const std::vector<PointSet> &point_sets() const noexcept { return sets_; }
    std::vector<PointSet> &point_sets() noexcept { return sets_; }

    // Adds a set of `n` points at `x` (3 * n values, read again at every search of a dynamic
    // set, so the array must outlive its use by the search) and returns its id. With
    // `search_neighbors` the new set finds neighbours in every set; with `find_neighbors` every
    // set finds neighbours in it; it searches itself when both are true. Throws Error (and adds
    // nothing) for a NaN or infinite coordinate or points too far apart for the radius.
    unsigned int add_point_set(const Real *x, std::size_t n, bool is_dynamic = true,
                               bool search_neighbors = true, bool find_neighbors = true,
                               void *user_data = nullptr) {
        std::size_t id = 0;
        detail::check(detail::add_set(search_.get(), x, n, is_dynamic, &id));
        sets_.push_back(PointSet(x, n, is_dynamic, user_data));
        for (std::vector<char> &row : active_) {
            row.push_back(static_cast<char>(find_neighbors));
        }
        active_.emplace_back(sets_.size(), static_cast<char>(search_neighbors));
        active_[id][id] = static_cast<char>(search_neighbors && find_neighbors);
        apply_activation();
        return static_cast<unsigned int>(id);
    }

    // Makes set `i` `n` points at `x` (more or fewer than before), read now. Throws Error, and
    // keeps the set as it was, for an unknown set or bad coordinates.
    void resize_point_set(unsigned int i, const Real *x, std::size_t n) {
        checked_set(i);
        changing([&] { detail::check(detail::resize_set(search_.get(), i, x, n)); });
        PointSet &set = sets_[i];
        set.positions_ = x;
        set.n_points_ = n;
        set.sort_table_.clear();
        refresh_views();
    }

    // Computes the neighbours of every active pair of sets. With `points_changed` the positions
    // of the dynamic sets are read again first (and those of any set z_sort() or a resize
    // marked). Throws Error for a NaN or infinite coordinate; the lists of pairs not searched
    // then read as empty.
    void find_neighbors(bool points_changed = true) {
        changing([&] {
            reread_positions(points_changed);
            detail::check(hhg_search_find_neighbors(search_.get()));
        });
    }

    // The neighbours of point `point_index` of set `point_set_id` in every set it searches
    // (neighbors[j] for set j, ascending, empty for the sets it does not search), from the
    // positions as last read: call update_point_sets() first when they changed.
    void find_neighbors(unsigned int point_set_id, unsigned int point_index,
                        std::vector<std::vector<unsigned int>> &neighbors) {
        const PointSet &set = sets_[checked_set(point_set_id)];
        if (point_index >= set.n_points()) {
            throw Error(HHG_STATUS_INVALID_ARGUMENT,
                        "point " + std::to_string(point_index) + " of point set " +
                            std::to_string(point_set_id) + " does not exist: the set has " +
                            std::to_string(set.n_points()) + " points");
        }
        const Real *x = set.point(point_index);
        neighbors.resize(sets_.size());
        for (std::size_t j = 0; j < sets_.size(); ++j) {
            std::vector<unsigned int> &found = neighbors[j];
            if (!active_[point_set_id][j]) {
                found.clear();
                continue;
            }
            detail::query_into(search_.get(), j, x, found);
            if (j == point_set_id) {
                auto self = std::lower_bound(found.begin(), found.end(), point_index);
                if (self != found.end() && *self == point_index) {
                    found.erase(self);
                }
            }
        }
    }

    // The neighbours of the position `x` (3 values) in every set (neighbors[j] for set j,
    // ascending), from the positions as last read. Throws Error for a NaN or infinite
    // coordinate.
    void find_neighbors(const Real *x, std::vector<std::vector<unsigned int>> &neighbors) {
        if (x == nullptr) {
            throw Error(HHG_STATUS_NULL_POINTER, "find_neighbors: the position x is NULL");
        }
        neighbors.resize(sets_.size());
        for (std::size_t j = 0; j < sets_.size(); ++j) {
            detail::query_into(search_.get(), j, x, neighbors[j]);
        }
    }

    // Reads the positions of the dynamic sets (and of any set z_sort() or a resize marked)
    // again, for single-point queries without a full search.
    void update_point_sets() {
        changing([&] { reread_positions(true); });
    }

    // Kept for CompactNSearch's callers: set_active takes effect at once, so there is nothing
    // left to update.
    void update_activation_table() noexcept {}

    // Computes for every set the permutation that puts its points (as they are now) in hhg's
    // grid cell order, for PointSet::sort_field. Sort every per-point array of each set with it,
    // positions included; the next find_neighbors() reads the sorted positions.
    void z_sort() {
        changing([&] {
            for (std::size_t i = 0; i < sets_.size(); ++i) {
                PointSet &set = sets_[i];
                detail::check(
                    detail::update_set(search_.get(), i, set.positions_, set.n_points_));
                const std::uint32_t *order = nullptr;
                std::size_t length = 0;
                detail::check(hhg_search_order(search_.get(), i, &order, &length));
                set.sort_table_.assign(order, order + length);
                set.reread_ = true;
            }
        });
    }

    Real radius() const noexcept { return radius_; }

    // Changes the radius: the search is built again over the positions as they are now, with
    // the same sets and activation. Throws Error, keeping the old radius, for a radius that is
    // not finite and positive or positions that do not fit it.
    void set_radius(Real r) {
        detail::SearchHandle rebuilt(r);
        for (std::size_t i = 0; i < sets_.size(); ++i) {
            std::size_t id = 0;
            detail::check(detail::add_set(rebuilt.get(), sets_[i].positions_, sets_[i].n_points_,
                                          sets_[i].dynamic_, &id));
        }
        std::swap(search_, rebuilt);
        radius_ = r;
        for (PointSet &set : sets_) {
            set.reread_ = false;
        }
        apply_activation();
    }

    // Makes set `i` find (or stop finding) neighbours in set `j`.
    void set_active(unsigned int i, unsigned int j, bool active) {
        checked_set(i);
        checked_set(j);
        active_[i][j] = static_cast<char>(active);
        apply_activation();
    }

    // Makes set `i` search every set (`search_neighbors`) and be found by every set
    // (`find_neighbors`); it searches itself when both are true.
    void set_active(unsigned int i, bool search_neighbors = true, bool find_neighbors = true) {
        checked_set(i);
        for (std::size_t j = 0; j < sets_.size(); ++j) {
            active_[i][j] = static_cast<char>(search_neighbors);
            active_[j][i] = static_cast<char>(find_neighbors);
        }
        active_[i][i] = static_cast<char>(search_neighbors && find_neighbors);
        apply_activation();
    }

    // Makes every set search (or stop searching) every set.
    void set_active(bool active) {
        for (std::vector<char> &row : active_) {
            std::fill(row.begin(), row.end(), static_cast<char>(active));
        }
        apply_activation();
    }

    // Whether set `i` finds neighbours in set `j` (false for unknown sets).
    bool is_active(unsigned int i, unsigned int j) const noexcept {
        return i < active_.size() && j < active_.size() && active_[i][j] != 0;
    }

    // The handle of the underlying C search, for the parts of the C API this layer does not
    // cover (unique pairs, squared distances). Calls that change it invalidate the lists read
    // through this layer until the next find_neighbors().
    HhgSearch *c_search() const noexcept { return search_.get(); }

private:
    // Refuses an unknown set index with an Error naming it.
    std::size_t checked_set(unsigned int i) const {
        if (i >= sets_.size()) {
            throw Error(HHG_STATUS_UNKNOWN_POINT_SET,
                        "point set " + std::to_string(i) + " does not exist: the search has " +
                            std::to_string(sets_.size()) + " point sets");
        }
        return i;
    }

    // Runs a change of the C search, then points every list view at the search's current
    // buffers, whether the change succeeded or threw.
    template <class Change>
    void changing(Change &&change) {
        try {
            change();
        } catch (...) {
            refresh_views();
            throw;
        }
        refresh_views();
    }

    // Gives the C search the positions of every set that must be read again.
    void reread_positions(bool points_changed) {
        for (std::size_t i = 0; i < sets_.size(); ++i) {
            PointSet &set = sets_[i];
            if (set.reread_ || (points_changed && set.dynamic_)) {
                detail::check(
                    detail::update_set(search_.get(), i, set.positions_, set.n_points_));
                set.reread_ = false;
            }
        }
    }

    // Copies the activation table into the C search, then refreshes the views.
    void apply_activation() {
        changing([&] {
            for (std::size_t i = 0; i < sets_.size(); ++i) {
                for (std::size_t j = 0; j < sets_.size(); ++j) {
                    detail::check(
                        hhg_search_set_active(search_.get(), i, j, active_[i][j] != 0));
                }
            }
        });
    }

    // Points every set's list views at the C search's lists of the last search, or at zero
    // offsets for pairs that were not searched (inactive, or changed since).
    void refresh_views() noexcept {
        std::size_t most_points = 0;
        for (const PointSet &set : sets_) {
            most_points = std::max(most_points, set.n_points_);
        }
        if (no_neighbors_.size() < most_points + 1) {
            no_neighbors_.assign(most_points + 1, 0);
        }
        const detail::ListsView empty{no_neighbors_.data(), nullptr};
        for (std::size_t i = 0; i < sets_.size(); ++i) {
            PointSet &set = sets_[i];
            set.lists_.assign(sets_.size(), empty);
            for (std::size_t j = 0; j < sets_.size(); ++j) {
                HhgNeighborLists lists;
                if (active_[i][j] &&
                    hhg_search_neighbors(search_.get(), i, j, &lists) == HHG_STATUS_OK &&
                    lists.count == set.n_points_) {
                    set.lists_[j] = detail::ListsView{lists.offsets, lists.indices};
                }
            }
        }
    }

    detail::SearchHandle search_;
    Real radius_;
    std::vector<PointSet> sets_;
    // active_[i][j]: set i finds neighbours in set j.
    std::vector<std::vector<char>> active_;
    // Zero offsets for the lists of pairs that were not searched, as long as the largest set.
    std::vector<std::size_t> no_neighbors_;
};

}  // namespace compactnsearch
}  // namespace hhg

#endif  // HHG_COMPACTNSEARCH_HPP
