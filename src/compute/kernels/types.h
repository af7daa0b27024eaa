/* Put after dialect.h in front of every built-in program: turns
 * -DGK_DTYPE=n (a gk_dtype value) into the program's element type.
 *
 *   GK_S           the storage type: what the buffers hold (bool is gk_u8
 *                  0/1; float16 and bfloat16 are gk_f16 and gk_bf16, their
 *                  16-bit patterns)
 *   GK_T           the compute type: GK_S itself, but float for the two
 *                  16-bit floating dtypes (computed in float32 and rounded
 *                  once to the dtype, as NumPy computes float16)
 *   GK_S_BITS      GK_S as a plain type whose stores do not convert (gk_u16
 *                  for the 16-bit floats), for kernels that write bit
 *                  patterns they made themselves (conversions)
 *   GK_T_NAME      bool, int8 ... uint64, float32, float64, float16,
 *                  bfloat16, complex64, complex128 (as a token)
 *   GK_T_IS_BOOL, GK_T_IS_FLOAT, GK_T_IS_SIGNED, GK_T_IS_HALF,
 *   GK_T_IS_COMPLEX   0 or 1 (GK_T_IS_HALF: float16 or bfloat16, also
 *                  GK_T_IS_FLOAT; GK_T_IS_FLOAT is 0 for complex, which
 *                  has GK_T_REAL, its parts' type, instead)
 *   GK_T_UNSIGNED  the unsigned type of the same width (integers wrap by
 *                  computing in it); GK_T itself for floats
 *
 * GK_TYPE_OF(n) gives the storage type of any dtype value n, for kernels
 * that convert between dtypes. Elements move between storage and compute
 * types through macros chosen by the storage type's name, so one kernel
 * text serves every dtype:
 *
 *   GK_COMPUTE(S)     the compute type of storage type S
 *   GK_LOAD(S, v)     v (an S) as a GK_COMPUTE(S)
 *   GK_STORE(S, v)    v (a compute value) as an S, rounded for the 16-bit
 *                     floats
 *
 * They are the identity for every other type (a plain C conversion on
 * assignment). Only the elementwise family has float16 and bfloat16
 * programs (the core computes reductions, sorts, ... of them in float32),
 * so only it needs these so far. */
#ifndef GK_KERNEL_TYPES_H
#define GK_KERNEL_TYPES_H

#define GK_DTYPE_BOOL 0
#define GK_DTYPE_UINT8 1
#define GK_DTYPE_INT32 2
#define GK_DTYPE_INT64 3
#define GK_DTYPE_FLOAT32 4
#define GK_DTYPE_FLOAT64 5
#define GK_DTYPE_INT8 6
#define GK_DTYPE_INT16 7
#define GK_DTYPE_UINT16 8
#define GK_DTYPE_UINT32 9
#define GK_DTYPE_UINT64 10
#define GK_DTYPE_FLOAT16 11
#define GK_DTYPE_BFLOAT16 12
#define GK_DTYPE_COMPLEX64 13
#define GK_DTYPE_COMPLEX128 14

#define GK_TYPE_OF_0 gk_u8
#define GK_TYPE_OF_1 gk_u8
#define GK_TYPE_OF_2 gk_i32
#define GK_TYPE_OF_3 gk_i64
#define GK_TYPE_OF_4 float
#define GK_TYPE_OF_5 double
#define GK_TYPE_OF_6 gk_i8
#define GK_TYPE_OF_7 gk_i16
#define GK_TYPE_OF_8 gk_u16
#define GK_TYPE_OF_9 gk_u32
#define GK_TYPE_OF_10 gk_u64
#define GK_TYPE_OF_11 gk_f16
#define GK_TYPE_OF_12 gk_bf16
#define GK_TYPE_OF_13 gk_c64
#define GK_TYPE_OF_14 gk_c128
#define GK_TYPE_OF_(n) GK_TYPE_OF_##n
#define GK_TYPE_OF(n) GK_TYPE_OF_(n)

/* Two levels, so that an argument that is itself a macro (GK_S) is
 * expanded before it is pasted. */
#define GK_COMPUTE_(S) GK_COMPUTE_##S
#define GK_COMPUTE(S) GK_COMPUTE_(S)
#define GK_LOAD_(S, v) GK_LOAD_##S(v)
#define GK_LOAD(S, v) GK_LOAD_(S, v)
#define GK_STORE_(S, v) GK_STORE_##S(v)
#define GK_STORE(S, v) GK_STORE_(S, v)

#define GK_COMPUTE_gk_f16 float
#define GK_LOAD_gk_f16(v) gk_f16_to_float(v)
#define GK_STORE_gk_f16(v) gk_f16_from_float(v)
#define GK_COMPUTE_gk_bf16 float
#define GK_LOAD_gk_bf16(v) gk_bf16_to_float(v)
#define GK_STORE_gk_bf16(v) gk_bf16_from_float(v)

#define GK_COMPUTE_gk_u8 gk_u8
#define GK_LOAD_gk_u8(v) (v)
#define GK_STORE_gk_u8(v) (v)
#define GK_COMPUTE_gk_i8 gk_i8
#define GK_LOAD_gk_i8(v) (v)
#define GK_STORE_gk_i8(v) (v)
#define GK_COMPUTE_gk_i16 gk_i16
#define GK_LOAD_gk_i16(v) (v)
#define GK_STORE_gk_i16(v) (v)
#define GK_COMPUTE_gk_u16 gk_u16
#define GK_LOAD_gk_u16(v) (v)
#define GK_STORE_gk_u16(v) (v)
#define GK_COMPUTE_gk_i32 gk_i32
#define GK_LOAD_gk_i32(v) (v)
#define GK_STORE_gk_i32(v) (v)
#define GK_COMPUTE_gk_u32 gk_u32
#define GK_LOAD_gk_u32(v) (v)
#define GK_STORE_gk_u32(v) (v)
#define GK_COMPUTE_gk_i64 gk_i64
#define GK_LOAD_gk_i64(v) (v)
#define GK_STORE_gk_i64(v) (v)
#define GK_COMPUTE_gk_u64 gk_u64
#define GK_LOAD_gk_u64(v) (v)
#define GK_STORE_gk_u64(v) (v)
#define GK_COMPUTE_float float
#define GK_LOAD_float(v) (v)
#define GK_STORE_float(v) (v)
#define GK_COMPUTE_double double
#define GK_LOAD_double(v) (v)
#define GK_STORE_double(v) (v)
#define GK_COMPUTE_gk_c64 gk_c64
#define GK_LOAD_gk_c64(v) (v)
#define GK_STORE_gk_c64(v) (v)
#define GK_COMPUTE_gk_c128 gk_c128
#define GK_LOAD_gk_c128(v) (v)
#define GK_STORE_gk_c128(v) (v)

#ifdef GK_DTYPE
#define GK_S GK_TYPE_OF(GK_DTYPE)
#define GK_T GK_COMPUTE(GK_S)
#if GK_DTYPE == GK_DTYPE_FLOAT16 || GK_DTYPE == GK_DTYPE_BFLOAT16
#define GK_T_IS_HALF 1
#define GK_S_BITS gk_u16
#else
#define GK_T_IS_HALF 0
#define GK_S_BITS GK_S
#endif
#if GK_DTYPE == GK_DTYPE_COMPLEX64 || GK_DTYPE == GK_DTYPE_COMPLEX128
#define GK_T_IS_COMPLEX 1
#else
#define GK_T_IS_COMPLEX 0
#endif

#if GK_DTYPE == GK_DTYPE_BOOL
#define GK_T_NAME bool
#define GK_T_IS_BOOL 1
#define GK_T_IS_FLOAT 0
#define GK_T_IS_SIGNED 0
#define GK_T_UNSIGNED gk_u8
#elif GK_DTYPE == GK_DTYPE_UINT8
#define GK_T_NAME uint8
#define GK_T_IS_BOOL 0
#define GK_T_IS_FLOAT 0
#define GK_T_IS_SIGNED 0
#define GK_T_UNSIGNED gk_u8
#elif GK_DTYPE == GK_DTYPE_INT32
#define GK_T_NAME int32
#define GK_T_IS_BOOL 0
#define GK_T_IS_FLOAT 0
#define GK_T_IS_SIGNED 1
#define GK_T_UNSIGNED gk_u32
#elif GK_DTYPE == GK_DTYPE_INT64
#define GK_T_NAME int64
#define GK_T_IS_BOOL 0
#define GK_T_IS_FLOAT 0
#define GK_T_IS_SIGNED 1
#define GK_T_UNSIGNED gk_u64
#elif GK_DTYPE == GK_DTYPE_FLOAT32
#define GK_T_NAME float32
#define GK_T_IS_BOOL 0
#define GK_T_IS_FLOAT 1
#define GK_T_IS_SIGNED 1
#define GK_T_UNSIGNED float
#elif GK_DTYPE == GK_DTYPE_FLOAT64
#define GK_T_NAME float64
#define GK_T_IS_BOOL 0
#define GK_T_IS_FLOAT 1
#define GK_T_IS_SIGNED 1
#define GK_T_UNSIGNED double
#elif GK_DTYPE == GK_DTYPE_INT8
#define GK_T_NAME int8
#define GK_T_IS_BOOL 0
#define GK_T_IS_FLOAT 0
#define GK_T_IS_SIGNED 1
#define GK_T_UNSIGNED gk_u8
#elif GK_DTYPE == GK_DTYPE_INT16
#define GK_T_NAME int16
#define GK_T_IS_BOOL 0
#define GK_T_IS_FLOAT 0
#define GK_T_IS_SIGNED 1
#define GK_T_UNSIGNED gk_u16
#elif GK_DTYPE == GK_DTYPE_UINT16
#define GK_T_NAME uint16
#define GK_T_IS_BOOL 0
#define GK_T_IS_FLOAT 0
#define GK_T_IS_SIGNED 0
#define GK_T_UNSIGNED gk_u16
#elif GK_DTYPE == GK_DTYPE_UINT32
#define GK_T_NAME uint32
#define GK_T_IS_BOOL 0
#define GK_T_IS_FLOAT 0
#define GK_T_IS_SIGNED 0
#define GK_T_UNSIGNED gk_u32
#elif GK_DTYPE == GK_DTYPE_UINT64
#define GK_T_NAME uint64
#define GK_T_IS_BOOL 0
#define GK_T_IS_FLOAT 0
#define GK_T_IS_SIGNED 0
#define GK_T_UNSIGNED gk_u64
#elif GK_DTYPE == GK_DTYPE_FLOAT16
#define GK_T_NAME float16
#define GK_T_IS_BOOL 0
#define GK_T_IS_FLOAT 1
#define GK_T_IS_SIGNED 1
#define GK_T_UNSIGNED float
#elif GK_DTYPE == GK_DTYPE_BFLOAT16
#define GK_T_NAME bfloat16
#define GK_T_IS_BOOL 0
#define GK_T_IS_FLOAT 1
#define GK_T_IS_SIGNED 1
#define GK_T_UNSIGNED float
#elif GK_DTYPE == GK_DTYPE_COMPLEX64
#define GK_T_NAME complex64
#define GK_T_IS_BOOL 0
#define GK_T_IS_FLOAT 0
#define GK_T_IS_SIGNED 1
#define GK_T_REAL float
#elif GK_DTYPE == GK_DTYPE_COMPLEX128
#define GK_T_NAME complex128
#define GK_T_IS_BOOL 0
#define GK_T_IS_FLOAT 0
#define GK_T_IS_SIGNED 1
#define GK_T_REAL double
#endif
#endif

#endif
