//! Shared write access to a slice for colour-ordered parallel sweeps.

use std::marker::PhantomData;

/// A slice that several threads write at once, each at indices no other thread reads or writes
/// during the same parallel region (red-black colouring: a red update writes only red cells and
/// reads only black ones). Every access goes through raw pointers, so no `&mut` aliases exist;
/// the caller's colouring is what makes the accesses race-free, hence the `unsafe` methods.
#[derive(Clone, Copy)]
pub struct DisjointWriter<'a, T> {
    ptr: *mut T,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: see the type's contract; accesses are raw and disjoint by construction of the caller.
unsafe impl<T: Send> Send for DisjointWriter<'_, T> {}
unsafe impl<T: Send + Sync> Sync for DisjointWriter<'_, T> {}

impl<'a, T: Copy> DisjointWriter<'a, T> {
    pub fn new(slice: &'a mut [T]) -> Self {
        Self {
            ptr: slice.as_mut_ptr(),
            len: slice.len(),
            _borrow: PhantomData,
        }
    }

    /// # Safety
    /// No other thread may write index `i` during the current parallel region.
    #[inline(always)]
    pub unsafe fn get(&self, i: usize) -> T {
        debug_assert!(i < self.len);
        unsafe { self.ptr.add(i).read() }
    }

    /// # Safety
    /// No other thread may read or write index `i` during the current parallel region.
    #[inline(always)]
    pub unsafe fn set(&self, i: usize, v: T) {
        debug_assert!(i < self.len);
        unsafe { self.ptr.add(i).write(v) }
    }
}
