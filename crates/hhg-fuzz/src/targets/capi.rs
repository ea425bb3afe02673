//! The C API on an arbitrary sequence of calls with arbitrary arguments, checked against a
//! model of what the searches hold: every failure is a documented status with a message and
//! changes nothing, every list, pair list and order a call returns equals the brute force on
//! the model's points, and no call ever reports a caught panic.

use std::ffi::CStr;
use std::ptr;

use hhg::*;
use hhg_core::Real;
use hhg_testkit::{oracle_cross, oracle_pairs, oracle_self};

use crate::input::Input;

/// The most point sets one search gets, and the most points of one set.
const MAX_SETS: usize = 4;
const MAX_SET_POINTS: usize = 24;

/// A search the sequence created and has not freed, as the model knows it.
struct Live {
    handle: *mut HhgSearch,
    f64: bool,
    radius: f64,
    /// Each set's points, in the search's precision (widened to `f64` exactly).
    sets: Vec<Vec<[f64; 3]>>,
    /// Whether the last `hhg_search_find_neighbors` succeeded: results are only checked
    /// then (a failed search leaves them empty).
    found: bool,
}

/// The model: live searches, and handles that were freed.
#[derive(Default)]
struct Model {
    live: Vec<Live>,
    freed: Vec<*mut HhgSearch>,
}

/// The thread's last error message.
fn last_error() -> String {
    // SAFETY: hhg_last_error_message returns a NUL-terminated string valid until the next
    // hhg call on this thread; it is copied at once.
    unsafe { CStr::from_ptr(hhg_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

/// Checks the invariants of every status: a message after a failure, none after a success,
/// never a caught panic; returns whether the call succeeded.
fn checked(status: HhgStatus, call: &str) -> bool {
    let message = last_error();
    assert_ne!(
        status,
        HhgStatus::InternalError,
        "{call}: a panic was caught: {message}"
    );
    if status == HhgStatus::Ok {
        assert!(
            message.is_empty(),
            "{call}: success with a message: {message}"
        );
        true
    } else {
        assert!(!message.is_empty(), "{call}: {status:?} without a message");
        false
    }
}

/// [`checked`] for `hhg_search_free`, whose success leaves the last error message as it was
/// (documented: cleanup code may free between a failed call and reading its message).
fn checked_free(status: HhgStatus, call: &str) -> bool {
    let message = last_error();
    assert_ne!(status, HhgStatus::InternalError, "{call}: {message}");
    if status != HhgStatus::Ok {
        assert!(!message.is_empty(), "{call}: {status:?} without a message");
    }
    status == HhgStatus::Ok
}

/// Which search a call names.
enum Pick {
    /// The live search at this index of the model.
    Live(usize),
    /// A handle that names no live search (freed, made up or NULL).
    Dead(*mut HhgSearch),
}

impl Model {
    /// Picks a search handle: mostly a live one, sometimes a freed, made-up or NULL one.
    fn pick(&self, input: &mut Input<'_>) -> Pick {
        let choice = input.u8();
        match choice {
            0..=199 if !self.live.is_empty() => Pick::Live(usize::from(choice) % self.live.len()),
            200..=219 if !self.freed.is_empty() => {
                Pick::Dead(self.freed[usize::from(choice) % self.freed.len()])
            }
            220..=229 => Pick::Dead(ptr::null_mut()),
            _ => {
                // A made-up value: raw bits, or a handle-like value with the magic tag. It
                // must not happen to name a live search.
                let bits = if choice & 1 == 0 {
                    input.u64() as usize
                } else {
                    ((0x4847u64 << 48) | u64::from(input.u32())) as usize
                };
                let handle = bits as *mut HhgSearch;
                if self.live.iter().any(|l| l.handle == handle) {
                    Pick::Dead(ptr::null_mut())
                } else {
                    Pick::Dead(handle)
                }
            }
        }
    }

    /// The handle of a pick.
    fn handle(&self, pick: &Pick) -> *mut HhgSearch {
        match *pick {
            Pick::Live(k) => self.live[k].handle,
            Pick::Dead(handle) => handle,
        }
    }
}

/// Checks the status of a call on a search that is not live: NULL or an invalid handle.
fn check_dead(status: HhgStatus, handle: *mut HhgSearch, call: &str) {
    checked(status, call);
    let expected = if handle.is_null() {
        HhgStatus::NullPointer
    } else {
        HhgStatus::InvalidHandle
    };
    assert_eq!(status, expected, "{call} on a dead handle {handle:p}");
}

/// A radius spelled by the input: usually valid, sometimes zero, negative, NaN, infinite,
/// tiny or raw bits.
fn radius(input: &mut Input<'_>) -> f64 {
    match input.u8() {
        0..=199 => 0.25 + f64::from(input.u8()) / 64.0,
        200..=209 => 0.0,
        210..=219 => -1.0,
        220..=229 => f64::NAN,
        230..=239 => f64::INFINITY,
        240..=247 => 1e-30,
        _ => input.f64_bits(),
    }
}

/// A coordinate spelled by the input: a lattice value near the origin, or raw bits.
fn coordinate(input: &mut Input<'_>, f64: bool) -> f64 {
    if input.u8() < 16 {
        if f64 {
            input.f64_bits()
        } else {
            f64::from(input.f32_bits())
        }
    } else {
        f64::from(input.u8() as i8) * 0.125
    }
}

/// How a call passes an array: as it should, NULL, or misaligned.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    Normal,
    Null,
    Misaligned,
}

fn pass(input: &mut Input<'_>) -> Pass {
    match input.u8() {
        0..=229 => Pass::Normal,
        230..=242 => Pass::Null,
        _ => Pass::Misaligned,
    }
}

/// An array of `T` in a byte buffer, aligned or one byte off, kept alive while it is used.
struct Array {
    bytes: Vec<u8>,
    offset: usize,
}

impl Array {
    fn new<T: Real>(values: &[T], how: Pass) -> Self {
        let size = size_of::<T>();
        let mut bytes = vec![0u8; size_of_val(values) + 2 * align_of::<T>() + 1];
        let base = bytes.as_ptr().align_offset(align_of::<T>());
        let offset = base + usize::from(how == Pass::Misaligned);
        for (k, v) in values.iter().enumerate() {
            let bits = v.to_f64();
            let raw: Vec<u8> = if size == 4 {
                (bits as f32).to_ne_bytes().to_vec()
            } else {
                bits.to_ne_bytes().to_vec()
            };
            bytes[offset + k * size..offset + (k + 1) * size].copy_from_slice(&raw);
        }
        Self { bytes, offset }
    }

    fn ptr<T>(&self, how: Pass) -> *const T {
        if how == Pass::Null {
            ptr::null()
        } else {
            // A pointer one past the alignment is only passed, never read by the API (it
            // refuses misaligned arrays before reading).
            self.bytes.as_ptr().wrapping_add(self.offset).cast()
        }
    }
}

/// Points as the search's precision holds them, widened exactly.
fn in_precision(points: &[[f64; 3]], f64: bool) -> Vec<[f64; 3]> {
    if f64 {
        points.to_vec()
    } else {
        points
            .iter()
            .map(|p| p.map(|c| f64::from(c as f32)))
            .collect()
    }
}

/// The arguments of an add or an update, as the input chose them.
struct SetCall<'a> {
    /// The set to update, or `None` to add one.
    update: Option<usize>,
    points: &'a [[f64; 3]],
    /// Whether the `_f64` entry point is called (whatever the search's precision).
    f64: bool,
    soa: bool,
    dynamic: bool,
    how: Pass,
    /// The point count passed: the points' own, or anything with NULL arrays.
    claimed: usize,
}

/// Adds or updates a set through one of the eight add/update entry points.
/// Returns the status and, for an add, the new set id.
fn add_or_update(handle: *mut HhgSearch, call: &SetCall<'_>) -> (HhgStatus, usize) {
    let SetCall {
        update,
        points,
        f64,
        soa,
        dynamic,
        how,
        claimed,
    } = *call;
    let mut set = usize::MAX;
    let out: *mut usize = if how == Pass::Null && update.is_none() && claimed == 0 {
        ptr::null_mut()
    } else {
        &mut set
    };
    macro_rules! call {
        ($t:ty, $add:ident, $update:ident, $add_soa:ident, $update_soa:ident) => {{
            let values: Vec<[$t; 3]> = points.iter().map(|p| p.map(|c| c as $t)).collect();
            if soa {
                let columns: [Vec<$t>; 3] =
                    std::array::from_fn(|a| values.iter().map(|p| p[a]).collect());
                let arrays = columns.each_ref().map(|c| Array::new(c, how));
                let [x, y, z] = arrays.each_ref().map(|a| a.ptr::<$t>(how));
                // SAFETY: each array holds `points.len()` values (or is NULL or misaligned,
                // which the API refuses before reading); `claimed` is the length or, with
                // NULL arrays only, anything; `out` is NULL or writable.
                unsafe {
                    match update {
                        Some(id) => $update_soa(handle, id, x, y, z, claimed),
                        None => $add_soa(handle, x, y, z, claimed, dynamic, out),
                    }
                }
            } else {
                let flat: Vec<$t> = values.iter().flatten().copied().collect();
                let array = Array::new(&flat, how);
                let xyz = array.ptr::<$t>(how);
                // SAFETY: as above, with one array of `3 * points.len()` values.
                unsafe {
                    match update {
                        Some(id) => $update(handle, id, xyz, claimed),
                        None => $add(handle, xyz, claimed, dynamic, out),
                    }
                }
            }
        }};
    }
    let status = if f64 {
        call!(
            f64,
            hhg_search_add_set_f64,
            hhg_search_update_set_f64,
            hhg_search_add_set_soa_f64,
            hhg_search_update_set_soa_f64
        )
    } else {
        call!(
            f32,
            hhg_search_add_set_f32,
            hhg_search_update_set_f32,
            hhg_search_add_set_soa_f32,
            hhg_search_update_set_soa_f32
        )
    };
    (status, set)
}

/// The lists a search returned, as plain vectors (each sorted: the API's lists ascend).
fn lists_of(lists: &HhgNeighborLists) -> Vec<Vec<u32>> {
    if lists.count == 0 {
        return Vec::new();
    }
    // SAFETY: a successful hhg_search_neighbors gives `count + 1` offsets and `total`
    // indices that stay valid until the next call changing the search.
    let (offsets, indices) = unsafe {
        (
            std::slice::from_raw_parts(lists.offsets, lists.count + 1),
            std::slice::from_raw_parts(lists.indices, lists.total),
        )
    };
    assert_eq!(
        offsets[lists.count], lists.total,
        "offsets end at the total"
    );
    offsets
        .windows(2)
        .map(|w| indices[w[0]..w[1]].to_vec())
        .collect()
}

/// Brute-force lists of `searching` against `searched` in the search's precision.
fn expected_lists(
    searching: &[[f64; 3]],
    searched: &[[f64; 3]],
    same: bool,
    radius: f64,
    f64: bool,
) -> Vec<Vec<u32>> {
    fn run<T: Real>(a: &[[f64; 3]], b: &[[f64; 3]], same: bool, r: f64) -> Vec<Vec<u32>> {
        let a: Vec<[T; 3]> = a.iter().map(|p| p.map(T::from_f64)).collect();
        let b: Vec<[T; 3]> = b.iter().map(|p| p.map(T::from_f64)).collect();
        if same {
            oracle_self(&a, T::from_f64(r))
        } else {
            oracle_cross(&a, &b, T::from_f64(r))
        }
    }
    if f64 {
        run::<f64>(searching, searched, same, radius)
    } else {
        run::<f32>(searching, searched, same, radius)
    }
}

/// Runs one arbitrary call sequence, then frees every search it left live.
pub fn capi_calls(data: &[u8]) {
    let mut input = Input::new(data);
    let mut model = Model::default();
    let mut steps = 0;
    while !input.is_empty() && steps < 64 {
        steps += 1;
        step(&mut model, &mut input);
    }
    for live in model.live.drain(..) {
        // SAFETY: the handle is live and nothing else uses it.
        let status = unsafe { hhg_search_free(live.handle) };
        assert!(checked_free(status, "hhg_search_free at the end"));
    }
}

/// One call, chosen and argued by the input.
fn step(model: &mut Model, input: &mut Input<'_>) {
    match input.u8() % 16 {
        0 => {
            let f64 = input.bool();
            let radius = radius(input);
            let null_out = input.u8() > 245;
            let mut handle = ptr::null_mut();
            let out: *mut *mut HhgSearch = if null_out {
                ptr::null_mut()
            } else {
                &mut handle
            };
            // SAFETY: `out` is NULL or writable.
            let status = unsafe {
                if f64 {
                    hhg_search_new_f64(radius, out)
                } else {
                    hhg_search_new_f32(radius as f32, out)
                }
            };
            let valid = if f64 {
                hhg_core::Grid::<f64>::new(radius).is_ok()
            } else {
                hhg_core::Grid::<f32>::new(radius as f32).is_ok()
            };
            if checked(status, "hhg_search_new") {
                assert!(valid && !null_out, "a search with radius {radius} was made");
                model.live.push(Live {
                    handle,
                    f64,
                    radius: if f64 {
                        radius
                    } else {
                        f64::from(radius as f32)
                    },
                    sets: Vec::new(),
                    found: false,
                });
            } else {
                let expected = if null_out {
                    HhgStatus::NullPointer
                } else {
                    HhgStatus::InvalidRadius
                };
                assert_eq!(status, expected, "hhg_search_new({radius})");
                assert!(handle.is_null(), "a failed creation leaves NULL");
            }
        }
        1 => {
            let pick = model.pick(input);
            let handle = model.handle(&pick);
            // SAFETY: any handle value is checked by the registry; nothing else uses it.
            let status = unsafe { hhg_search_free(handle) };
            match pick {
                Pick::Live(k) => {
                    assert!(checked_free(status, "hhg_search_free"));
                    model.live.swap_remove(k);
                    model.freed.push(handle);
                }
                Pick::Dead(h) if h.is_null() => {
                    assert!(checked_free(status, "hhg_search_free(NULL)"))
                }
                Pick::Dead(h) => {
                    checked_free(status, "hhg_search_free");
                    assert_eq!(status, HhgStatus::InvalidHandle, "a free of {h:p}");
                }
            }
        }
        2 | 3 => add_step(model, input, None),
        4 => {
            let set = input.below(MAX_SETS + 1);
            add_step(model, input, Some(set));
        }
        5..=7 => {
            let pick = model.pick(input);
            let handle = model.handle(&pick);
            let (a, b, flag) = (
                input.below(MAX_SETS + 1),
                input.below(MAX_SETS + 1),
                input.bool(),
            );
            let kind = input.u8() % 4;
            // SAFETY: any handle value is checked; nothing else uses it.
            let status = unsafe {
                match kind {
                    0 => hhg_search_set_active(handle, a, b, flag),
                    1 => hhg_search_set_pairs(handle, a, flag),
                    2 => hhg_search_set_with_distances(handle, flag),
                    _ => hhg_search_set_max_entries(handle, if flag { 0 } else { a * 7 }),
                }
            };
            match pick {
                Pick::Live(k) => {
                    let sets = model.live[k].sets.len();
                    let known = match kind {
                        0 => a < sets && b < sets,
                        1 => a < sets,
                        _ => true,
                    };
                    let ok = checked(status, "a setting");
                    assert_eq!(
                        ok, known,
                        "a setting on sets {a}, {b} of {sets}: {status:?}"
                    );
                    if !ok {
                        assert_eq!(status, HhgStatus::UnknownPointSet);
                    } else if kind == 0 && flag {
                        model.live[k].found = false;
                    }
                }
                Pick::Dead(h) => check_dead(status, h, "a setting"),
            }
        }
        8 | 9 => {
            let pick = model.pick(input);
            let handle = model.handle(&pick);
            // SAFETY: any handle value is checked; nothing else uses it.
            let status = unsafe { hhg_search_find_neighbors(handle) };
            match pick {
                Pick::Live(k) => {
                    let ok = checked(status, "hhg_search_find_neighbors");
                    if !ok {
                        assert!(
                            matches!(status, HhgStatus::OutputTooLarge | HhgStatus::OutOfMemory),
                            "find_neighbors: {status:?}: {}",
                            last_error()
                        );
                    }
                    model.live[k].found = ok;
                }
                Pick::Dead(h) => check_dead(status, h, "hhg_search_find_neighbors"),
            }
        }
        10 | 11 => {
            let pick = model.pick(input);
            let handle = model.handle(&pick);
            let (a, b) = (input.below(MAX_SETS + 1), input.below(MAX_SETS + 1));
            let pairs = input.bool();
            let mut lists = HhgNeighborLists::default();
            let mut pair_list = HhgPairList::default();
            // SAFETY: any handle value is checked; the outputs are writable.
            let status = unsafe {
                if pairs {
                    hhg_search_pairs(handle, a, &mut pair_list)
                } else {
                    hhg_search_neighbors(handle, a, b, &mut lists)
                }
            };
            let Pick::Live(k) = pick else {
                let Pick::Dead(h) = pick else { unreachable!() };
                return check_dead(status, h, "a result");
            };
            let live = &model.live[k];
            if !checked(status, "a result") {
                assert!(
                    matches!(status, HhgStatus::NotSearched | HhgStatus::UnknownPointSet),
                    "a result: {status:?}"
                );
                return;
            }
            assert!(a < live.sets.len() && (pairs || b < live.sets.len()));
            if !live.found {
                return;
            }
            if pairs {
                let count = pair_list.count;
                let flat = if count == 0 {
                    &[][..]
                } else {
                    // SAFETY: a successful hhg_search_pairs gives `count` pairs of two u32.
                    unsafe { std::slice::from_raw_parts(pair_list.pairs, 2 * count) }
                };
                let mut got: Vec<[u32; 2]> = flat.chunks(2).map(|p| [p[0], p[1]]).collect();
                got.sort_unstable();
                let expected = if live.f64 {
                    let p: Vec<[f64; 3]> = live.sets[a].clone();
                    oracle_pairs(&p, live.radius)
                } else {
                    let p: Vec<[f32; 3]> =
                        live.sets[a].iter().map(|p| p.map(|c| c as f32)).collect();
                    oracle_pairs(&p, live.radius as f32)
                };
                assert_eq!(got, expected, "the pairs of set {a}");
            } else {
                let got = lists_of(&lists);
                let expected =
                    expected_lists(&live.sets[a], &live.sets[b], a == b, live.radius, live.f64);
                assert_eq!(got, expected, "set {a} searching set {b}");
            }
        }
        12 | 13 => {
            let pick = model.pick(input);
            let handle = model.handle(&pick);
            let set = input.below(MAX_SETS + 1);
            let adopt = input.bool();
            let mut order: *const u32 = ptr::null();
            let mut len = usize::MAX;
            // SAFETY: any handle value is checked; the outputs are writable.
            let status = unsafe {
                if adopt {
                    hhg_search_adopt_cell_order(handle, set, &mut order, &mut len)
                } else {
                    hhg_search_order(handle, set, &mut order, &mut len)
                }
            };
            let Pick::Live(k) = pick else {
                let Pick::Dead(h) = pick else { unreachable!() };
                return check_dead(status, h, "an order");
            };
            let live = &mut model.live[k];
            if !checked(status, "an order") {
                assert_eq!(status, HhgStatus::UnknownPointSet);
                assert!(set >= live.sets.len());
                return;
            }
            let points = &mut live.sets[set];
            assert_eq!(len, points.len(), "the order's length");
            let order = if len == 0 {
                &[][..]
            } else {
                // SAFETY: a successful call gives `len` indices valid until the next change.
                unsafe { std::slice::from_raw_parts(order, len) }
            };
            let mut seen = vec![false; len];
            for &i in order {
                assert!(
                    !std::mem::replace(&mut seen[i as usize], true),
                    "a repeated index"
                );
            }
            if adopt {
                *points = order.iter().map(|&i| points[i as usize]).collect();
                live.found = false;
            }
        }
        14 => {
            let pick = model.pick(input);
            let handle = model.handle(&pick);
            let set = input.below(MAX_SETS + 1);
            let (mut precision, mut count, mut len) = (HhgPrecision::F32, 0usize, 0usize);
            // Each status is checked right after its call (the last error message is the
            // last call's).
            // SAFETY: any handle value is checked; the output is writable.
            let status = unsafe { hhg_search_precision(handle, &mut precision) };
            match pick {
                Pick::Live(k) => {
                    assert!(checked(status, "hhg_search_precision"));
                    assert_eq!(precision == HhgPrecision::F64, model.live[k].f64);
                }
                Pick::Dead(h) => check_dead(status, h, "hhg_search_precision"),
            }
            // SAFETY: as above.
            let status = unsafe { hhg_search_set_count(handle, &mut count) };
            match pick {
                Pick::Live(k) => {
                    assert!(checked(status, "hhg_search_set_count"));
                    assert_eq!(count, model.live[k].sets.len());
                }
                Pick::Dead(h) => check_dead(status, h, "hhg_search_set_count"),
            }
            // SAFETY: as above.
            let status = unsafe { hhg_search_set_len(handle, set, &mut len) };
            match pick {
                Pick::Live(k) if set < model.live[k].sets.len() => {
                    assert!(checked(status, "hhg_search_set_len"));
                    assert_eq!(len, model.live[k].sets[set].len());
                }
                Pick::Live(_) => {
                    checked(status, "hhg_search_set_len");
                    assert_eq!(status, HhgStatus::UnknownPointSet);
                }
                Pick::Dead(h) => check_dead(status, h, "hhg_search_set_len"),
            }
        }
        _ => {
            let code = input.u32() as i32;
            let text = hhg_error_message(code);
            assert!(!text.is_null());
            // SAFETY: hhg_error_message returns a static NUL-terminated string.
            assert!(!unsafe { CStr::from_ptr(text) }.to_bytes().is_empty());
            let version = hhg_version();
            assert!(
                // SAFETY: hhg_version returns a static NUL-terminated string.
                !unsafe { CStr::from_ptr(version) }.to_bytes().is_empty()
            );
        }
    }
}

/// Adds a set (`update` is `None`) or updates set `update`, checking the outcome.
fn add_step(model: &mut Model, input: &mut Input<'_>, update: Option<usize>) {
    let pick = model.pick(input);
    let handle = model.handle(&pick);
    let flags = input.u8();
    let (f64_call, soa, dynamic) = (flags & 1 != 0, flags & 2 != 0, flags & 4 != 0);
    let how = pass(input);
    let n = input.below(MAX_SET_POINTS + 1);
    let f64_points = match pick {
        Pick::Live(k) => model.live[k].f64,
        Pick::Dead(_) => f64_call,
    };
    let points: Vec<[f64; 3]> = (0..n)
        .map(|_| std::array::from_fn(|_| coordinate(input, f64_points)))
        .collect();
    // A NULL array may claim any length; the others hold exactly what they claim.
    let claimed = if how == Pass::Null && input.u8() > 200 {
        usize::MAX / 2
    } else {
        n
    };
    let call_args = SetCall {
        update,
        points: &points,
        f64: f64_call,
        soa,
        dynamic,
        how,
        claimed,
    };
    let (status, set) = add_or_update(handle, &call_args);
    let call = if update.is_some() {
        "an update"
    } else {
        "an add"
    };
    let Pick::Live(k) = pick else {
        let Pick::Dead(h) = pick else { unreachable!() };
        return check_dead(status, h, call);
    };
    let live = &mut model.live[k];
    let ok = checked(status, call);
    // Every fault of the call with the status that names it. The order of the checks
    // decides which of several faults is named, so a refused call must name one of them.
    let unknown_set = update.is_some_and(|id| id >= live.sets.len());
    let faults = [
        // An add with NULL arrays of no points passes a NULL `out_set` too.
        (
            update.is_none() && how == Pass::Null && claimed == 0,
            HhgStatus::NullPointer,
        ),
        (f64_call != live.f64, HhgStatus::PrecisionMismatch),
        (unknown_set, HhgStatus::UnknownPointSet),
        (claimed > 0 && how == Pass::Null, HhgStatus::NullPointer),
        // A NULL array may claim more points than an index numbers.
        (claimed > hhg_core::MAX_POINTS, HhgStatus::TooManyPoints),
        (n > 0 && how == Pass::Misaligned, HhgStatus::InvalidArgument),
        (
            !unknown_set && update.is_some_and(|id| live.sets[id].len() != claimed),
            HhgStatus::PointCountChanged,
        ),
        (
            points.iter().flatten().any(|c| !c.is_finite()),
            HhgStatus::NonFiniteCoordinate,
        ),
    ];
    let named: Vec<HhgStatus> = faults
        .iter()
        .filter(|(fault, _)| *fault)
        .map(|&(_, status)| status)
        .collect();
    if !named.is_empty() {
        assert!(!ok, "{call} succeeded despite {named:?}");
        assert!(
            named.contains(&status),
            "{call}: {status:?} ({}) where one of {named:?} was due",
            last_error()
        );
        return;
    }
    if !ok {
        // Points spread too far for the grid are the one other refusal.
        assert_eq!(
            status,
            HhgStatus::CoordinateOutOfRange,
            "{call}: {}",
            last_error()
        );
        return;
    }
    let stored = in_precision(&points, live.f64);
    match update {
        Some(id) => live.sets[id] = stored,
        None => {
            assert_eq!(set, live.sets.len(), "set ids count from 0");
            live.sets.push(stored);
        }
    }
    live.found = false;
}

/// Seeds: a session that creates a search of each precision, adds sets, activates them,
/// searches, and reads every result; and one that frees twice.
pub fn capi_seeds() -> Vec<Vec<u8>> {
    let mut lattice = Vec::new();
    for k in 0..12u8 {
        for axis in 0..3u8 {
            lattice.extend([100, (k * 3 + axis * 5) % 16]);
        }
    }
    let add = |f64: bool, dynamic: bool| {
        let mut op = vec![2u8, 0, u8::from(f64) | (u8::from(dynamic) << 2), 0, 12];
        op.extend(&lattice);
        op
    };
    let mut seeds = Vec::new();
    for f64 in [false, true] {
        let mut seed = vec![0u8, u8::from(f64), 0, 64];
        seed.extend(add(f64, true));
        seed.extend(add(f64, false));
        seed.extend([5, 0, 0, 1, 1, 0]); // set_active(0, 1, true)
        seed.extend([5, 0, 0, 0, 1, 1]); // set_pairs(0, true)
        seed.extend([8, 0]); // find_neighbors
        seed.extend([10, 0, 0, 0, 0]); // neighbors(0, 0)
        seed.extend([10, 0, 0, 1, 0]); // neighbors(0, 1)
        seed.extend([10, 0, 0, 0, 1]); // pairs(0)
        seed.extend([12, 0, 0, 1]); // adopt_cell_order(0)
        seed.extend([8, 0, 10, 0, 0, 0, 0, 14, 0, 0]);
        seed.extend([1, 0, 1, 200, 14, 200, 0]); // free, free again, query the freed
        seeds.push(seed);
    }
    seeds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seeds_check_results() {
        for seed in capi_seeds() {
            capi_calls(&seed);
        }
    }
}
