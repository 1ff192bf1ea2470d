typedef float float4 __attribute__((aligned(16),vector_size(16)));
void r_64_4(float* restrict data0, float* restrict data1) {
  float acc0 = 0.0f;
  for (int ridx0 = 0; ridx0 < 64; ridx0++) {
    float4 val0 = *((float4*)((data1+(ridx0<<2))));
    acc0 = (acc0+val0[0]+val0[1]+val0[2]+val0[3]);
  }
  *(data0+0) = acc0;
}
