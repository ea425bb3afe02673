//! Cell hashing: the XOR of primes (Teschner et al.), its top-down additive form (Pouchol et
//! al.), and the cell coordinates and bucket keys of a point set computed 8 lanes at a time,
//! with a scalar reference that gives the same keys.
//!
//! A point's cell coordinates are `floor((x - origin) * inv_cell)` in `f64`, clamped to
//! `-2..=span + 1` per axis, exactly as [`CellTable::coord`] computes them. The XOR hash of a
//! cell is `(ix * p1) ^ (iy * p2) ^ (iz * p3)` with wrapping 32-bit multiplies, and its bucket
//! is that hash masked with `n - 1` for a table of `n` buckets, `n` a power of two.

use hhg_core::building_blocks::{CellTable, LANES, floor_small};
use hhg_core::{Error, Kernel, Points, Real};
use rayon::prelude::*;
use wide::{f64x4, i32x8, u32x8};

/// Points per rayon task when hashing.
const HASH_CHUNK: usize = 1 << 14;

/// The largest table this crate builds: `2^30` buckets.
pub const MAX_BUCKETS: usize = 1 << 30;

/// The large primes of the XOR hash, one per axis.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Primes {
    /// Teschner et al. (2003): 73856093, 19349663, 83492791.
    #[default]
    Teschner,
    /// Müller's choice (Ten Minute Physics): 92837111, 689287499, 283923481.
    Mueller,
}

impl Primes {
    /// The three primes, for the x, y and z axis.
    pub const fn values(self) -> [u32; 3] {
        match self {
            Primes::Teschner => [73_856_093, 19_349_663, 83_492_791],
            Primes::Mueller => [92_837_111, 689_287_499, 283_923_481],
        }
    }
}

/// How a cell's bucket key is formed from the XOR hash.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyRule {
    /// The XOR hash of the cell itself: `h(c) mod n`.
    Xor,
    /// Pouchol's top-down additive key of a cell of the finest class when the hierarchy has
    /// `levels` coarser classes: `(h(c >> levels) + ... + h(c >> 1) + h(c)) mod n`, where
    /// `c >> j` (arithmetic shift per axis) is the class-`j` cell that contains `c`.
    TopDown {
        /// The number of classes above the finest one.
        levels: u32,
    },
}

/// The XOR-of-primes hash into a table of a power-of-two number of buckets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XorHash {
    primes: [u32; 3],
    mask: u32,
}

impl XorHash {
    /// The hash with `primes` into `buckets` buckets, which must be a power of two between 1
    /// and [`MAX_BUCKETS`] ([`Error::InvalidConfig`] otherwise).
    pub fn new(primes: Primes, buckets: usize) -> Result<Self, Error> {
        Self::with_values(primes.values(), buckets)
    }

    /// Like [`XorHash::new`] with any three multipliers.
    pub fn with_values(primes: [u32; 3], buckets: usize) -> Result<Self, Error> {
        if !buckets.is_power_of_two() || buckets > MAX_BUCKETS {
            return Err(Error::InvalidConfig {
                name: "buckets",
                value: buckets as f64,
                expected: "a power of two between 1 and 2^30",
            });
        }
        Ok(Self {
            primes,
            mask: (buckets - 1) as u32,
        })
    }

    /// The three multipliers.
    pub fn primes(&self) -> [u32; 3] {
        self.primes
    }

    /// The number of buckets.
    pub fn buckets(&self) -> usize {
        self.mask as usize + 1
    }

    /// `buckets() - 1`: the mask that takes a hash modulo the table size.
    pub fn mask(&self) -> u32 {
        self.mask
    }

    /// The unmasked hash `(ix * p1) ^ (iy * p2) ^ (iz * p3)` of a cell, with wrapping 32-bit
    /// multiplies of the coordinates' two's-complement bits.
    #[inline(always)]
    pub fn raw(&self, c: [i32; 3]) -> u32 {
        (c[0] as u32).wrapping_mul(self.primes[0])
            ^ (c[1] as u32).wrapping_mul(self.primes[1])
            ^ (c[2] as u32).wrapping_mul(self.primes[2])
    }

    /// The bucket of a cell: `raw(c) mod n`.
    #[inline(always)]
    pub fn bucket(&self, c: [i32; 3]) -> u32 {
        self.raw(c) & self.mask
    }

    /// The key of a finest-class cell by `rule` (the scalar reference of the 8-lane path).
    #[inline(always)]
    pub fn key(&self, c: [i32; 3], rule: KeyRule) -> u32 {
        match rule {
            KeyRule::Xor => self.bucket(c),
            KeyRule::TopDown { levels } => {
                let mut key = 0u32;
                for j in (0..=levels).rev() {
                    key = key.wrapping_add(self.raw(c.map(|v| v >> j)));
                }
                key & self.mask
            }
        }
    }

    /// The unmasked hash of 8 cells at once (wrapping multiplies on `u32` lanes).
    #[inline(always)]
    fn raw8(&self, c: [i32x8; 3]) -> u32x8 {
        let lanes = |v: i32x8, prime: u32| v.cast_unsigned() * u32x8::splat(prime);
        lanes(c[0], self.primes[0]) ^ lanes(c[1], self.primes[1]) ^ lanes(c[2], self.primes[2])
    }

    /// The keys of 8 finest-class cells by `rule`, 8 lanes at a time.
    #[inline(always)]
    fn key8(&self, c: [i32x8; 3], rule: KeyRule) -> [u32; 8] {
        let key = match rule {
            KeyRule::Xor => self.raw8(c),
            KeyRule::TopDown { levels } => {
                let mut key = u32x8::ZERO;
                for j in (0..=levels).rev() {
                    key += self.raw8(c.map(|v| v >> j));
                }
                key
            }
        };
        (key & u32x8::splat(self.mask)).to_array()
    }
}

/// Cell coordinates of 8 points (`get(start + k)`, lanes past `len` repeat the origin) by
/// the scalar reference: [`CellTable::coords`] one lane at a time.
#[inline]
fn cells8_scalar<T: Real>(
    table: &CellTable,
    len: usize,
    start: usize,
    get: &impl Fn(usize) -> [T; 3],
) -> [[i32; 3]; 8] {
    std::array::from_fn(|k| {
        if start + k < len {
            table.coords(get(start + k))
        } else {
            [0; 3]
        }
    })
}

/// Cell coordinates of 8 points as `i32x8` per axis: subtract the origin, multiply by the
/// inverse cell edge, clamp to `-2..=span + 1`, floor (all in `f64x4` pairs, as
/// [`CellTable::coord`] does one lane at a time).
#[inline]
fn cells8_simd<T: Real>(
    table: &CellTable,
    len: usize,
    start: usize,
    get: &impl Fn(usize) -> [T; 3],
) -> [i32x8; 3] {
    let end = (start + LANES).min(len);
    let mut lanes = [[T::default(); LANES]; 3];
    for (k, i) in (start..end).enumerate() {
        let p = get(i);
        for axis in 0..3 {
            lanes[axis][k] = p[axis];
        }
    }
    std::array::from_fn(|axis| {
        let origin = f64x4::splat(table.origin[axis]);
        let inv = f64x4::splat(table.inv_cell);
        let low = f64x4::splat(-2.0);
        let high = f64x4::splat(f64::from(table.span[axis] + 1));
        let mut cells = [0i32; LANES];
        for half in 0..2 {
            let quad: &[T; 4] = lanes[axis][half * 4..half * 4 + 4].try_into().unwrap();
            let scaled = (T::widen4(quad) - origin) * inv;
            let floored = floor_small(scaled.max(low).min(high)).to_array();
            for k in 0..4 {
                // The low 32 bits of a lane are its floor as an `i32`.
                cells[half * 4 + k] = floored[k] as i32;
            }
        }
        i32x8::new(cells)
    })
}

/// What turns points into cells and bucket keys: the cell geometry (origin, inverse cell
/// edge, span; see [`CellTable`]), the XOR hash with its table size, and the key rule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CellHasher {
    /// The cell geometry (only `origin`, `inv_cell` and `span` are used).
    pub table: CellTable,
    /// The hash and the number of buckets.
    pub hash: XorHash,
    /// How a cell's key is formed.
    pub rule: KeyRule,
}

impl CellHasher {
    /// The cell coordinates of a point (clamped to `-2..=span + 1` per axis).
    #[inline(always)]
    pub fn cell<T: Real>(&self, p: [T; 3]) -> [i32; 3] {
        self.table.coords(p)
    }

    /// The bucket key of a finest-class cell.
    #[inline(always)]
    pub fn key(&self, c: [i32; 3]) -> u32 {
        self.hash.key(c, self.rule)
    }

    /// Computes the cell coordinates and bucket keys of `len` points given by `get`, into
    /// `cells` and `keys`, in parallel: 8 lanes at a time with [`Kernel::Simd`], one at a
    /// time with [`Kernel::Scalar`]; both give the same values.
    pub(crate) fn hash_with<T: Real>(
        &self,
        len: usize,
        get: impl Fn(usize) -> [T; 3] + Sync,
        kernel: Kernel,
        keys: &mut Vec<u32>,
        cells: &mut Vec<[i32; 3]>,
    ) {
        keys.resize(len, 0);
        cells.resize(len, [0; 3]);
        keys.par_chunks_mut(HASH_CHUNK)
            .zip(cells.par_chunks_mut(HASH_CHUNK))
            .enumerate()
            .for_each(|(chunk, (keys, cells))| {
                let base = chunk * HASH_CHUNK;
                for (block, (keys, cells)) in keys
                    .chunks_mut(LANES)
                    .zip(cells.chunks_mut(LANES))
                    .enumerate()
                {
                    let start = base + block * LANES;
                    match kernel {
                        Kernel::Simd => {
                            let c = cells8_simd(&self.table, len, start, &get);
                            let key = self.hash.key8(c, self.rule);
                            let [x, y, z] = c.map(i32x8::to_array);
                            for k in 0..keys.len() {
                                keys[k] = key[k];
                                cells[k] = [x[k], y[k], z[k]];
                            }
                        }
                        Kernel::Scalar => {
                            let c = cells8_scalar(&self.table, len, start, &get);
                            for k in 0..keys.len() {
                                keys[k] = self.key(c[k]);
                                cells[k] = c[k];
                            }
                        }
                    }
                }
            });
    }

    /// Computes the cell coordinates and bucket keys of every point, into `cells` and `keys`
    /// (resized to the point count), in parallel; 8 lanes at a time with [`Kernel::Simd`],
    /// one at a time with the reference [`Kernel::Scalar`], which give identical values.
    pub fn hash_points<T: Real>(
        &self,
        points: Points<'_, T>,
        kernel: Kernel,
        keys: &mut Vec<u32>,
        cells: &mut Vec<[i32; 3]>,
    ) -> Result<(), Error> {
        if let Points::Soa(x, y, z) = points
            && (x.len() != y.len() || x.len() != z.len())
        {
            return Err(Error::LengthMismatch {
                x: x.len(),
                y: y.len(),
                z: z.len(),
            });
        }
        self.hash_with(points.len(), |i| points.get(i), kernel, keys, cells);
        Ok(())
    }
}
