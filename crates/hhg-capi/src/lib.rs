//! hhg-capi: the C API of hhg (opaque handles, error codes, CSR lists without copies).
