//! Run-time dispatch of the passes that run the SIMD kernels: a task runs with the kernel as
//! compiled, or in a build of its inner loops with AVX2 or AVX-512 enabled, chosen at run
//! time. The list passes ([`crate::lists`]) and the pairs ([`crate::pairs`]) use it.

use crate::grid::Grid;
use crate::kernel::{Avx2Kernel, Avx512Kernel, MaskKernel};
use crate::real::Real;
use crate::simd::{Build, avx2_build, avx512_build};

/// One task of a pass that runs the SIMD kernels: a work unit of a list pass ([`UnitTask`])
/// or of the pairs ([`crate::pairs`]), or a range of searchers ([`SearcherTask`]).
/// [`Grid::run_task`] runs it with the kernel as compiled or in a run-time AVX2 or AVX-512
/// build.
pub(crate) trait KernelTask<T: Real> {
    /// What the task fills.
    type Buffer;

    /// Runs the task into `buffer` with kernel `K`. Inlined into the run-time builds
    /// ([`Grid::run_task`]), so no closure may lie on the way to the kernels: a closure is
    /// compiled as a function of its own, without that build's target features.
    fn run<K: MaskKernel>(&self, grid: &Grid<T>, buffer: &mut Self::Buffer, with_distances: bool);
}

impl<T: Real> Grid<T> {
    /// Runs `task` into `buffer` with kernel `K` as compiled, or in the run-time build
    /// `build` (from [`Grid::run_time_build`]) of the inner loops.
    #[inline(always)]
    pub(crate) fn run_task<K: MaskKernel, Task: KernelTask<T>>(
        &self,
        task: &Task,
        buffer: &mut Task::Buffer,
        with_distances: bool,
        build: Build,
    ) {
        match build {
            Build::AsCompiled => task.run::<K>(self, buffer, with_distances),
            // SAFETY: `run_time_build` found the features `avx2_build` enables.
            Build::Avx2 => unsafe { self.run_task_avx2(task, buffer, with_distances) },
            // SAFETY: `run_time_build` found the features `avx512_build` enables.
            Build::Avx512 => unsafe { self.run_task_avx512(task, buffer, with_distances) },
        }
    }

    avx2_build! {
        /// [`Grid::run_task`] compiled with AVX2 enabled, with the AVX2 kernel: every loop
        /// inlined into it uses AVX2 instructions for the permutes (see `simd`).
        ///
        /// # Safety
        /// [`avx2_detected`](crate::simd::avx2_detected) holds.
        unsafe fn run_task_avx2<Task: KernelTask<T>>(
            &self,
            task: &Task,
            buffer: &mut Task::Buffer,
            with_distances: bool,
        ) {
            task.run::<Avx2Kernel>(self, buffer, with_distances);
        }
    }

    avx512_build! {
        /// [`Grid::run_task`] compiled with AVX-512 enabled, with the AVX-512 kernel: the
        /// gather and packing take 16 `f32` or 8 `f64` candidates per block (see
        /// `kernel::avx512`), and lists sort on 16-lane registers.
        ///
        /// # Safety
        /// [`avx512_detected`](crate::simd::avx512_detected) holds.
        unsafe fn run_task_avx512<Task: KernelTask<T>>(
            &self,
            task: &Task,
            buffer: &mut Task::Buffer,
            with_distances: bool,
        ) {
            task.run::<Avx512Kernel>(self, buffer, with_distances);
        }
    }
}
