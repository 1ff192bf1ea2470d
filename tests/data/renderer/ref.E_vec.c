typedef int int4 __attribute__((aligned(16),vector_size(16)));
typedef float float4 __attribute__((aligned(16),vector_size(16)));
typedef __fp16 __fp164 __attribute__((aligned(8),vector_size(8)));
typedef float float2 __attribute__((aligned(8),vector_size(8)));
void E_vec(float4* restrict data0, int* restrict data1) {
  int val0 = *(data1+0);
  int val1 = *(data1+1);
  int val2 = *(data1+2);
  int val3 = *(data1+3);
  float4 cast0 = __builtin_convertvector((int4){val0,val1,val2,val3}, float4);
  __fp164 cast1 = __builtin_convertvector(cast0, __fp164);
  float4 cast2 = __builtin_convertvector(cast1, float4);
  float2 cast3 = (float2){cast2[0],cast2[3]};
  *(data0+0) = (float4){__builtin_fabsf(cast3[1]),__builtin_fabsf(cast3[1]),cast3[1],cast3[0]};
  /* cast3[1] */
}
