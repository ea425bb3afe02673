//! The only places where the caller's raw pointers to arrays and outputs become Rust
//! references: each checks for NULL and alignment first and names the offending argument in
//! its failure. Handles are not pointers; the registry checks them.

use std::mem::MaybeUninit;

use crate::status::{Failure, HhgStatus};

/// Refuses a pointer that is not aligned for `T`.
fn check_aligned<T>(ptr: *const T, name: &str) -> Result<(), Failure> {
    if !ptr.is_aligned() {
        return Err(Failure::new(
            HhgStatus::InvalidArgument,
            format!(
                "argument `{name}` ({ptr:p}) is not aligned to {} bytes",
                align_of::<T>()
            ),
        ));
    }
    Ok(())
}

/// Borrows the caller's array of `len` values at `ptr`; an empty array may be NULL.
///
/// # Safety
///
/// Unless `len` is 0, `ptr` must be NULL or point to `len` initialized values of `T` that
/// nothing writes while the returned slice lives (the duration of the call).
pub(crate) unsafe fn input<'a, T>(
    ptr: *const T,
    len: usize,
    name: &str,
) -> Result<&'a [T], Failure> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(Failure::null(name));
    }
    check_aligned(ptr, name)?;
    if len
        .checked_mul(size_of::<T>())
        .is_none_or(|bytes| bytes > isize::MAX as usize)
    {
        return Err(Failure::new(
            HhgStatus::TooManyPoints,
            format!("argument `{name}` would hold {len} values, more than memory can"),
        ));
    }
    // SAFETY: `ptr` is non-NULL and aligned and the slice's size fits `isize` (all checked
    // above); the caller guarantees that it points to `len` initialized values that nothing
    // writes while the slice lives.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// Borrows the caller's output location `ptr` for one `T`, refusing NULL.
///
/// # Safety
///
/// `ptr` must be NULL or point to memory writable as one `T` that nothing else accesses
/// while the returned reference lives (the duration of the call).
pub(crate) unsafe fn output<'a, T>(
    ptr: *mut T,
    name: &str,
) -> Result<&'a mut MaybeUninit<T>, Failure> {
    if ptr.is_null() {
        return Err(Failure::null(name));
    }
    check_aligned(ptr, name)?;
    // SAFETY: `ptr` is non-NULL and aligned (checked above), and the caller guarantees that
    // it is writable as one `T` and not otherwise accessed; `MaybeUninit` needs no
    // initialized value.
    Ok(unsafe { &mut *ptr.cast::<MaybeUninit<T>>() })
}
